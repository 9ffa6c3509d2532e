import { Controller, Get, HttpCode, Param, Post, Req, Res, StreamableFile } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  ApiAcceptedResponse,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiGatewayTimeoutResponse,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { CurrentViewer, OptionalAuth, type Viewer } from '../auth/optional-auth.decorator.js';
import { TAGS } from '../common/api-tags.js';
import { baseUrlOf } from '../common/base-url.js';
import { AppConfig } from '../config/app-config.js';
import { problemExample, ProblemDto } from '../common/dto/error-bodies.dto.js';
import { EXAMPLE } from '../common/openapi-examples.js';
import { InstanceUuidParam, RegistryReads } from '../workflows/index.js';
import { BuildParams, CancelBuildParams } from './dto/status-requests.dto.js';
import {
  CancelledBuildDto,
  StartedBuildDto,
  toCancelledBuildResponse,
  toStartedBuildResponse,
} from './dto/test-runs.dto.js';
import { TestRunsService } from './test-runs.service.js';
import { BuildChangesService } from './build-changes.service.js';
import { BuildChangesDto, toBuildChangesResponse } from './dto/build-changes.dto.js';

const RETRY_AFTER = {
  'Retry-After': {
    description: 'Seconds to wait before trying again',
    schema: { type: 'integer', example: 540 },
  },
};

/** The 503 of both operations: the CI service's rate limit pauses it. */
const RATE_LIMITED = {
  type: ProblemDto,
  description: 'The CI service is rate-limited (or the database did not answer in time)',
  headers: RETRY_AFTER,
  example: problemExample(
    503,
    'the github service https://api.github.com is rate-limited until 2024-05-01 13:00 UTC: 403 API rate limit exceeded',
  ),
};

/** Tests that run (API.md 11): builds started on the CI services, their logs, what changed (API.md 16). */
@RegistryReads()
@ApiTags(TAGS.status)
@Controller('instances')
export class TestRunsController {
  constructor(
    private readonly runs: TestRunsService,
    private readonly changesOf: BuildChangesService,
    private readonly config: AppConfig,
  ) {}

  @Post(':instance_uuid/builds')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'instances-builds-post',
    summary: "Start a build of a test instance on its CI service (the workflow's owner or an admin)",
    description:
      "GitHub: a `workflow_dispatch` of the workflow on the version's ref (its source ref or the branch or tag " +
      "named like it, else the repository's default branch); a workflow without that trigger gets a re-run of " +
      "the latest run among the version's builds. Travis: a build request on that branch (API v3). Jenkins: a " +
      'build of the job (with the CSRF crumb when Jenkins asks for one). Only with credentials configured for ' +
      "the instance's service URL: `GITHUB_TOKEN` for `GITHUB_API_URL`, or the service's entry in " +
      '`TESTING_SERVICES_FILE`. At most one build per instance per 10 minutes, whoever asks. The instance is ' +
      'checked at once, so that the new run shows in its builds as soon as the service lists it.',
  })
  @ApiAcceptedResponse({ type: StartedBuildDto, description: 'The CI service accepted the build' })
  @ApiForbiddenResponse({
    type: ProblemDto,
    description: 'The workflow is public, but the caller is neither its owner nor an admin',
    example: problemExample(
      403,
      `Only the owner of the workflow ${EXAMPLE.workflowUuid} or an admin may change it`,
    ),
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description:
      'No credentials for the service URL (the detail names it and the setting that would give them), or the ' +
      'service cannot start builds',
    example: problemExample(
      409,
      'Cannot start a build: no credentials for the github service https://api.github.com: set GITHUB_TOKEN',
    ),
  })
  @ApiTooManyRequestsResponse({
    type: ProblemDto,
    description: 'A build of this instance was started less than 10 minutes ago',
    headers: RETRY_AFTER,
    example: problemExample(
      429,
      'A build of this test instance was started at 2024-05-01 12:00 UTC: at most one start per instance per 10 minutes',
    ),
  })
  @ApiResponse({
    status: 502,
    type: ProblemDto,
    description: 'The CI service refused the build: its status and message (never a credential)',
    example: problemExample(
      502,
      'the github service https://api.github.com did not start the build: 403 Resource not accessible by integration',
    ),
  })
  @ApiServiceUnavailableResponse(RATE_LIMITED)
  @ApiGatewayTimeoutResponse({
    type: ProblemDto,
    description: 'The CI service did not answer in time',
    example: problemExample(
      504,
      'the github service https://api.github.com did not answer in time: no answer within 30 s',
    ),
  })
  async trigger(
    @Param() { instance_uuid }: InstanceUuidParam,
    @CurrentUser() user: AuthUser,
  ): Promise<StartedBuildDto> {
    return toStartedBuildResponse(await this.runs.trigger(instance_uuid, user));
  }

  @Post(':instance_uuid/builds/:build_id/cancel')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'instances-builds-cancel',
    summary: "Stop a queued or running build (the workflow's owner or an admin)",
    description:
      'Managed instances (API.md 17): a queued run ends at once, a running one is stopped by its runner (its whole ' +
      'process group, or the WES run) within a sixth of `RUN_CLAIM_SECONDS`; the build then ends as `aborted`, its ' +
      'failure class `infrastructure`. The instance is checked at once. The CI services watched here cannot be ' +
      'stopped through this service (409).',
  })
  @ApiAcceptedResponse({ type: CancelledBuildDto, description: 'The build is being stopped' })
  @ApiForbiddenResponse({
    type: ProblemDto,
    description: 'The workflow is public, but the caller is neither its owner nor an admin',
    example: problemExample(
      403,
      `Only the owner of the workflow ${EXAMPLE.workflowUuid} or an admin may change it`,
    ),
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description: 'The build has ended, or its service cannot stop builds',
    example: problemExample(
      409,
      "The build 'm-42' cannot be stopped: the run m-42 has ended or is not one of this instance",
    ),
  })
  async cancel(
    @Param() { instance_uuid, build_id }: CancelBuildParams,
    @CurrentUser() user: AuthUser,
  ): Promise<CancelledBuildDto> {
    return toCancelledBuildResponse(await this.runs.cancel(instance_uuid, build_id, user));
  }

  @Get(':instance_uuid/builds/:build_id/changes')
  @OptionalAuth()
  @ApiOperation({
    operationId: 'instances-builds-get-changes',
    summary: "What changed since the instance's last passing build",
    description:
      "Between this build and the instance's latest passed build that started before it: the commits (and the " +
      "repository's comparison of them), the runner each ran on (GitHub: the image and version its job log's " +
      '"Runner Image" header names, and the job\'s labels; Travis: the job\'s `os` and `dist`), the durations, and ' +
      "this build's jobs and steps that did not pass (for a resource with `#job=<glob>`, its selected jobs only). " +
      'The commits and durations are stored; the rest is asked of the CI service now (GitHub: the jobs and the ' +
      "head of one job's log per build; Travis: the build and its jobs). What the CI cannot tell (Jenkins, a run " +
      'it no longer keeps) is null or empty. Readable by whoever may see the build.',
  })
  @ApiOkResponse({ type: BuildChangesDto, description: 'What changed' })
  @ApiResponse({
    status: 502,
    type: ProblemDto,
    description: 'The CI service refused: its status and message',
    example: problemExample(
      502,
      "the github service https://api.github.com did not tell what build '8765_1' ran: 403 Resource not accessible by integration",
    ),
  })
  @ApiServiceUnavailableResponse(RATE_LIMITED)
  @ApiGatewayTimeoutResponse({
    type: ProblemDto,
    description: 'The CI service did not answer in time',
    example: problemExample(
      504,
      'the travis service https://api.travis-ci.com did not answer in time: no answer within 30 s',
    ),
  })
  async changes(
    @Param() { instance_uuid, build_id }: BuildParams,
    @CurrentViewer() user: Viewer,
    @Req() request: Request,
  ): Promise<BuildChangesDto> {
    return toBuildChangesResponse(
      await this.changesOf.changes(instance_uuid, build_id, user),
      baseUrlOf(this.config, request),
    );
  }

  @Get(':instance_uuid/builds/:build_id/logs')
  @OptionalAuth()
  @ApiOperation({
    operationId: 'instances-builds-get-logs',
    summary: "The tail of a build's log, as plain text",
    description:
      'The last `MAX_LOG_BYTES` (default 1 MiB) of the log the CI service keeps, read from it as it comes: GitHub, ' +
      "the run attempt's log archive with its jobs' logs in job order; Travis, the log of each of the build's " +
      "jobs; Jenkins, the build's console text. A log longer than that starts at the next line (at most 1 KiB " +
      "later). Readable by whoever may see the build. The log is the CI service's: it may hold what that service's " +
      'jobs printed, never a credential of this service.',
  })
  @ApiOkResponse({
    description: 'The tail of the log',
    content: {
      'text/plain': {
        schema: { type: 'string' },
        example: '##[group]Run planemo test\n…\nAll tests passed\n',
      },
    },
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description: 'The CI service serves no logs here',
    example: problemExample(409, "No log of build '42' here: the drone service cannot serve build logs"),
  })
  @ApiResponse({
    status: 502,
    type: ProblemDto,
    description: 'The CI service refused the log, or broke it off: its status and message',
    example: problemExample(
      502,
      'the jenkins service https://ci.example.org did not send the log: 404 Not Found',
    ),
  })
  @ApiServiceUnavailableResponse(RATE_LIMITED)
  @ApiGatewayTimeoutResponse({
    type: ProblemDto,
    description: 'The CI service did not answer, or paused longer than UPSTREAM_TIMEOUT_SECONDS',
    example: problemExample(
      504,
      'the travis service https://api.travis-ci.com broke off the log: no data for 30 s',
    ),
  })
  async log(
    @Param() { instance_uuid, build_id }: BuildParams,
    @CurrentViewer() user: Viewer,
    @Res({ passthrough: true }) response: Response,
  ): Promise<StreamableFile> {
    // A client that goes away stops the reading of the log from the CI service.
    const gone = new AbortController();
    response.once('close', () => {
      if (!response.writableFinished) {
        gone.abort();
      }
    });
    const log = await this.runs.log(instance_uuid, build_id, user, gone.signal);
    return new StreamableFile(log.body, { type: log.contentType, length: log.body.length });
  }
}
