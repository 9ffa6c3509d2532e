import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Put,
  Query,
  Req,
  Res,
  StreamableFile,
} from '@nestjs/common';
import {
  ApiBody,
  ApiBadRequestResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { CurrentViewer, OptionalAuth, type Viewer } from '../auth/optional-auth.decorator.js';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';
import { UpdateVersionDto, UpdateWorkflowDto } from './dto/register-workflow.dto.js';
import { RequireScope } from '../auth/scopes.js';
import { AppConfig } from '../config/app-config.js';
import { baseUrlOf } from '../common/base-url.js';
import { IssueTypeListDto, toIssueTypeResponse } from './dto/issue-types.dto.js';
import { TestSuiteListDto, toSuiteResponse } from './dto/suite-response.dto.js';
import {
  BadgeTokenDto,
  ListWorkflowsQuery,
  ReadWorkflowQuery,
  SuitesQuery,
  WorkflowUuidParam,
  WorkflowVersionParams,
} from './dto/workflow-requests.dto.js';
import {
  toVersionListResponse,
  toWorkflowResponse,
  VersionListDto,
  WorkflowDto,
  WorkflowListDto,
} from './dto/workflow-response.dto.js';
import {
  conditional,
  ConditionalRead,
  matchesIfNoneMatch,
  REVALIDATE,
  sharedConditional,
  type ConditionalReply,
} from '../common/conditional-read.js';
import { RegistryReads } from './registry-reads.decorator.js';
import { itemsReply } from './json-items-stream.js';
import { WorkflowsService } from './workflows.service.js';
import { type FollowGlobs, type FollowRequestDto } from '../repositories/index.js';
import { TAGS } from '../common/api-tags.js';
import { invalidMemberExample, problemExample } from '../common/dto/error-bodies.dto.js';
import { EXAMPLE } from '../common/openapi-examples.js';

const CRATE_METADATA_EXAMPLE = {
  '@context': 'https://w3id.org/ro/crate/1.1/context',
  '@graph': [
    {
      '@id': 'ro-crate-metadata.json',
      '@type': 'CreativeWork',
      about: { '@id': './' },
      conformsTo: { '@id': 'https://w3id.org/ro/crate/1.1' },
    },
    {
      '@id': './',
      '@type': 'Dataset',
      name: 'sort-and-change-case',
      mainEntity: { '@id': 'sort-and-change-case.ga' },
    },
  ],
};

const FORBIDDEN = {
  type: ProblemDto,
  description: 'The workflow is public, but the caller is neither its owner nor an admin',
  example: problemExample(
    403,
    `Only the owner of the workflow ${EXAMPLE.workflowUuid} or an admin may change it`,
  ),
};

/**
 * Workflows: the list of those the caller may see, and one workflow with its versions, their
 * archives and test suites. Reads are open to anonymous callers for public workflows (API.md 5.1).
 */
@RegistryReads()
@ApiTags(TAGS.workflows)
@Controller('workflows')
export class WorkflowsController {
  constructor(
    private readonly workflows: WorkflowsService,
    private readonly config: AppConfig,
  ) {}

  @Get()
  @OptionalAuth()
  @RequireScope('workflow.read')
  @ApiOperation({
    operationId: 'workflows-get',
    summary:
      "The public workflows, plus the caller's own (an admin's: all), the one whose latest version was registered last first",
  })
  @ApiOkResponse({ type: WorkflowListDto, description: 'The workflows, newest first' })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'A bad status, limit or offset',
    example: invalidMemberExample('limit', 'limit must be an integer from 1 to 1000'),
  })
  @ConditionalRead()
  async list(
    @Query() query: ListWorkflowsQuery,
    @CurrentViewer() viewer: Viewer,
    @Req() request: Request,
  ): Promise<ConditionalReply<WorkflowListDto> | globalThis.Response> {
    const withStatus = query.status ?? true;
    const baseUrl = this.baseUrl(request);
    if (query.limit !== undefined) {
      const page = { limit: query.limit, offset: query.offset };
      return sharedConditional(
        await this.workflows.visibleReplies(viewer, page, withStatus, baseUrl),
        (items) => ({ items }),
      );
    }
    return itemsReply(
      this.workflows.visibleBatches(viewer, query.offset, withStatus, baseUrl),
      (item) => item,
    );
  }

  // Declared before ':wf_uuid', which would take 'issues' for a uuid.
  @Get('issues')
  @OptionalAuth()
  @RequireScope('workflow.read')
  @ApiOperation({
    operationId: 'workflows-get-issue-types',
    summary: 'The types of issue the repository checks report',
    description:
      'The checks run at every registration (API.md 12); each issue of a version names its type by `identifier`. ' +
      'A .lifemonitor.yaml leaves types out with `issues.exclude`. The same list as a page: GET /workflows/issues.html. ' +
      'No token needed.',
  })
  @ApiOkResponse({
    type: IssueTypeListDto,
    description: 'Every type of issue, with its name and description',
  })
  issueTypes(): IssueTypeListDto {
    return { items: this.workflows.issueTypes().map(toIssueTypeResponse) };
  }

  @Get(':wf_uuid')
  @OptionalAuth()
  @RequireScope('workflow.read')
  @ApiOperation({
    operationId: 'workflows-get-latest-version-by-id',
    summary: 'A workflow at its latest version',
  })
  @ApiOkResponse({ type: WorkflowDto, description: 'The workflow at its latest version' })
  @ConditionalRead()
  async latest(
    @Param() { wf_uuid }: WorkflowUuidParam,
    @Query() query: ReadWorkflowQuery,
    @CurrentViewer() user: Viewer,
    @Req() request: Request,
  ): Promise<ConditionalReply<WorkflowDto>> {
    const view = await this.workflows.get(wf_uuid, undefined, user, {
      previousVersions: query.previous_versions,
      roCrate: query.ro_crate,
    });
    return conditional(toWorkflowResponse(view, this.baseUrl(request)));
  }

  @Put(':wf_uuid')
  @RequireScope('workflow.write')
  @ApiOperation({
    operationId: 'workflows-put',
    summary:
      "Rename a workflow (its latest version's name), make it public or private, follow its repository, " +
      'set how often its tests re-run',
    description:
      'Owner or admin. Absent members stay as they are. `follow` (API.md 12): the tags and branches of the ' +
      'GitHub repository the workflow was registered from whose new versions it registers (400 for a workflow ' +
      'registered from another kind of link). `rerun_interval_days` (API.md 11): a build of each of its ' +
      "test instances is started when the instance's latest build started longer ago than that many days; " +
      'null: the service default (`RERUN_INTERVAL_DAYS`). Answers the workflow at its latest version, as ' +
      '`workflows-get-latest-version-by-id` does.',
  })
  @ApiBody({
    type: UpdateWorkflowDto,
    examples: {
      publish: { summary: 'Make it public', value: { public: true } },
      rerun: { summary: 'Re-run its tests every 30 days', value: { rerun_interval_days: 30 } },
    },
  })
  @ApiOkResponse({ type: WorkflowDto, description: 'The workflow as changed' })
  @ApiForbiddenResponse(FORBIDDEN)
  async update(
    @Param() { wf_uuid }: WorkflowUuidParam,
    @Body() body: UpdateWorkflowDto,
    @CurrentUser() user: AuthUser,
    @Req() request: Request,
  ): Promise<WorkflowDto> {
    const view = await this.workflows.update(
      wf_uuid,
      {
        name: body.name,
        public: body.public,
        rerunIntervalDays: body.rerun_interval_days,
        follow: body.follow === undefined ? undefined : body.follow && followGlobs(body.follow),
      },
      user,
    );
    return toWorkflowResponse(view, this.baseUrl(request));
  }

  @Delete(':wf_uuid')
  @HttpCode(204)
  @RequireScope('workflow.write')
  @ApiOperation({
    operationId: 'workflows-delete-all',
    summary: 'Delete a workflow with every version, their suites, instances, builds and archives',
    description: 'Owner or admin. `workflows-delete` deletes one version.',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiForbiddenResponse(FORBIDDEN)
  async removeAll(@Param() { wf_uuid }: WorkflowUuidParam, @CurrentUser() user: AuthUser): Promise<void> {
    await this.workflows.deleteWorkflow(wf_uuid, user);
  }

  @Get(':wf_uuid/badge-token')
  @ApiTags(TAGS.badges)
  @ApiOperation({
    operationId: 'workflows-get-badge-token',
    summary: "The workflow's badge token, made on first request, with the badge URLs that carry it",
    description:
      'Owner or admin. The token opens the badges of this workflow (badge.svg, badge.json) to anybody who ' +
      'has the URL, private workflows included, and nothing else. The same token comes back until ' +
      'DELETE revokes it. Keep it out of logs: it is a credential.',
  })
  @ApiOkResponse({ type: BadgeTokenDto, description: 'The badge token and the badge URLs that carry it' })
  @ApiForbiddenResponse(FORBIDDEN)
  async badgeToken(
    @Param() { wf_uuid }: WorkflowUuidParam,
    @CurrentUser() user: AuthUser,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<BadgeTokenDto> {
    const token = await this.workflows.badgeToken(wf_uuid, user);
    response.set('Cache-Control', 'no-store');
    const base = `${this.baseUrl(request)}/workflows/${wf_uuid}`;
    return { token, svg: `${base}/badge.svg?token=${token}`, json: `${base}/badge.json?token=${token}` };
  }

  @Delete(':wf_uuid/badge-token')
  @ApiTags(TAGS.badges)
  @HttpCode(204)
  @ApiOperation({
    operationId: 'workflows-delete-badge-token',
    summary: 'Revoke the badge token: badge URLs with it answer 404 from now on',
    description: 'Owner or admin. The next GET of the same path makes a new token.',
  })
  @ApiNoContentResponse({ description: 'Revoked (also when there was none)' })
  @ApiForbiddenResponse(FORBIDDEN)
  async revokeBadgeToken(
    @Param() { wf_uuid }: WorkflowUuidParam,
    @CurrentUser() user: AuthUser,
  ): Promise<void> {
    await this.workflows.revokeBadgeToken(wf_uuid, user);
  }

  @Get(':wf_uuid/versions')
  @ApiTags(TAGS.versions)
  @OptionalAuth()
  @RequireScope('workflow.read')
  @ApiOperation({
    operationId: 'workflows-get-versions-by-id',
    summary: 'All versions of a workflow, older first',
  })
  @ApiOkResponse({ type: VersionListDto, description: 'The versions, oldest first' })
  @ConditionalRead()
  async versions(
    @Param() { wf_uuid }: WorkflowUuidParam,
    @CurrentViewer() user: Viewer,
    @Req() request: Request,
  ): Promise<ConditionalReply<VersionListDto>> {
    return conditional(
      toVersionListResponse(await this.workflows.versions(wf_uuid, user), this.baseUrl(request)),
    );
  }

  @Get(':wf_uuid/versions/:wf_version')
  @ApiTags(TAGS.versions)
  @OptionalAuth()
  @RequireScope('workflow.read')
  @ApiOperation({ operationId: 'workflows-get-version-by-id', summary: 'A workflow at one of its versions' })
  @ApiOkResponse({ type: WorkflowDto, description: 'The workflow at this version' })
  @ConditionalRead()
  async version(
    @Param() { wf_uuid, wf_version }: WorkflowVersionParams,
    @Query() query: ReadWorkflowQuery,
    @CurrentViewer() user: Viewer,
    @Req() request: Request,
  ): Promise<ConditionalReply<WorkflowDto>> {
    const view = await this.workflows.get(wf_uuid, wf_version, user, {
      previousVersions: query.previous_versions,
      roCrate: query.ro_crate,
    });
    return conditional(toWorkflowResponse(view, this.baseUrl(request)));
  }

  @Put(':wf_uuid/versions/:wf_version')
  @ApiTags(TAGS.versions)
  @HttpCode(204)
  @RequireScope('workflow.write')
  @ApiOperation({
    operationId: 'workflows-version-put',
    summary: 'Rename one version of a workflow',
    description:
      'Owner or admin, or the registry the workflow came from (API.md 10.1). `version`, when sent (WorkflowHub ' +
      'sends it), must be the version of the path.',
  })
  @ApiNoContentResponse({ description: 'Updated' })
  @ApiForbiddenResponse(FORBIDDEN)
  async updateVersion(
    @Param() { wf_uuid, wf_version }: WorkflowVersionParams,
    @Body() body: UpdateVersionDto,
    @CurrentUser() user: AuthUser,
  ): Promise<void> {
    await this.workflows.updateVersion(wf_uuid, wf_version, { name: body.name, version: body.version }, user);
  }

  @Delete(':wf_uuid/versions/:wf_version')
  @ApiTags(TAGS.versions)
  @HttpCode(204)
  @RequireScope('workflow.write')
  @ApiOperation({
    operationId: 'workflows-delete',
    summary:
      'Delete a version with its suites, instances, builds and archive; the workflow goes with its last one',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiForbiddenResponse(FORBIDDEN)
  async remove(
    @Param() { wf_uuid, wf_version }: WorkflowVersionParams,
    @CurrentUser() user: AuthUser,
  ): Promise<void> {
    await this.workflows.deleteVersion(wf_uuid, wf_version, user);
  }

  @Get(':wf_uuid/rocrate/:wf_version/download')
  @ApiTags(TAGS.versions)
  @OptionalAuth()
  @RequireScope('workflow.read')
  @ApiOperation({ operationId: 'workflows-rocrate-download', summary: 'The RO-Crate archive of a version' })
  @ApiProduces('application/zip')
  @ApiOkResponse({
    description: 'The archive as registered; ETag is its SHA-256',
    schema: { type: 'string', format: 'binary' },
  })
  @ApiResponse({ status: 304, description: 'Not modified: If-None-Match matched the ETag' })
  async download(
    @Param() { wf_uuid, wf_version }: WorkflowVersionParams,
    @CurrentViewer() user: Viewer,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<StreamableFile | globalThis.Response> {
    const archive = await this.workflows.archive(wf_uuid, wf_version, user);
    const etag = `"${archive.sha256}"`;
    // The bytes of a version never change, but they are the caller's: caches must ask every time.
    const cacheHeaders = { ETag: etag, 'Cache-Control': REVALIDATE };
    if (matchesIfNoneMatch(request.get('if-none-match'), etag)) {
      response.set(cacheHeaders);
      // A web Response is the one way to choose the status of a passthrough reply.
      return new globalThis.Response(null, { status: 304, headers: cacheHeaders });
    }
    // Opened before any header is set: an archive deleted meanwhile must answer a 404 without its ETag.
    const stream = await archive.open();
    response.set(cacheHeaders);
    response.attachment(archive.filename);
    return new StreamableFile(stream, { type: 'application/zip', length: archive.size });
  }

  @Get(':wf_uuid/rocrate/:wf_version/metadata')
  @ApiTags(TAGS.versions)
  @OptionalAuth()
  @RequireScope('workflow.read')
  @ApiOperation({
    operationId: 'workflows-rocrate-metadata',
    summary: "The crate's JSON-LD (its ro-crate-metadata.json) at one version",
  })
  @ApiProduces('application/ld+json')
  @ApiOkResponse({
    description: 'The metadata as the crate holds it, `application/ld+json`; ETag follows the archive',
    schema: { type: 'object', additionalProperties: true },
    example: CRATE_METADATA_EXAMPLE,
  })
  @ApiResponse({ status: 304, description: 'Not modified: If-None-Match matched the ETag' })
  async metadata(
    @Param() { wf_uuid, wf_version }: WorkflowVersionParams,
    @CurrentViewer() user: Viewer,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<object | globalThis.Response> {
    const metadata = await this.workflows.metadata(wf_uuid, wf_version, user);
    const etag = `"${metadata.sha256}-metadata"`;
    const cacheHeaders = { ETag: etag, 'Cache-Control': REVALIDATE };
    if (matchesIfNoneMatch(request.get('if-none-match'), etag)) {
      response.set(cacheHeaders);
      return new globalThis.Response(null, { status: 304, headers: cacheHeaders });
    }
    const body = await metadata.read();
    response.set(cacheHeaders);
    response.type('application/ld+json');
    return body;
  }

  @Get(':wf_uuid/suites')
  @ApiTags(TAGS.suites)
  @OptionalAuth()
  @RequireScope('workflow.read')
  @ApiOperation({
    operationId: 'workflows-get-suites',
    summary: 'The test suites of a version (default: the latest)',
  })
  @ApiOkResponse({ type: TestSuiteListDto, description: 'The test suites of the version' })
  async suites(
    @Param() { wf_uuid }: WorkflowUuidParam,
    @Query() { version }: SuitesQuery,
    @CurrentViewer() user: Viewer,
  ): Promise<TestSuiteListDto> {
    const { suites, lastChecks } = await this.workflows.suites(wf_uuid, version, user);
    return { items: suites.map((suite) => toSuiteResponse(suite, lastChecks)) };
  }

  private baseUrl(request: Request): string {
    return baseUrlOf(this.config, request);
  }
}

/** An absent list follows nothing. */
function followGlobs(follow: FollowRequestDto): FollowGlobs {
  return { tags: follow.tags ?? [], branches: follow.branches ?? [] };
}
