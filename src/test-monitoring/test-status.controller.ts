import { Controller, Get, Param, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { AppConfig } from '../config/app-config.js';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentViewer, OptionalAuth, type Viewer } from '../auth/optional-auth.decorator.js';
import { conditional, ConditionalRead, type ConditionalReply } from '../common/conditional-read.js';
import { baseUrlOf } from '../common/base-url.js';
import {
  BuildDto,
  InstanceUuidParam,
  RegistryReads,
  SuiteUuidParam,
  WorkflowUuidParam,
} from '../workflows/index.js';
import {
  BuildParams,
  DEFAULT_LATEST_BUILDS,
  HistoryQuery,
  LatestBuildsQuery,
  StatsQuery,
  WorkflowStatusQuery,
} from './dto/status-requests.dto.js';
import { DEFAULT_HISTORY_DAYS, DEFAULT_STATS_DAYS } from './history.js';
import {
  BuildListDto,
  InstanceStatsDto,
  toInstanceStatsResponse,
  WorkflowHistoryDto,
  SuiteStatusDto,
  toBuildView,
  toSuiteStatusResponse,
  toWorkflowStatusResponse,
  WorkflowStatusDto,
} from './dto/status-response.dto.js';
import { TestStatusService } from './test-status.service.js';
import { TAGS } from '../common/api-tags.js';
import { RequireScope } from '../auth/scopes.js';

/** The test status reads of area B (API.md 2.6, 2.7), with the registry's visibility rule. */
@RegistryReads()
@OptionalAuth()
@ApiTags(TAGS.status)
@Controller()
export class TestStatusController {
  constructor(
    private readonly status: TestStatusService,
    private readonly config: AppConfig,
  ) {}

  @Get('workflows/:wf_uuid/status')
  @RequireScope('workflow.read')
  @ApiOperation({
    operationId: 'workflows-get-status',
    summary: 'The test status of a workflow version: aggregate, latest builds, freshness',
    description:
      "The version's own builds only (API.md 7.2): on GitHub and Travis the runs of the version's source ref " +
      "or of the branch or tag named like the version, when the instance's repository has one; otherwise the " +
      "runs created in the version's registration window (until the next version's registration; the first " +
      'version from the start); on Jenkins all builds.',
  })
  @ApiOkResponse({ type: WorkflowStatusDto, description: 'The test status of the version' })
  @ConditionalRead()
  async workflowStatus(
    @Param() { wf_uuid }: WorkflowUuidParam,
    @Query() { version }: WorkflowStatusQuery,
    @CurrentViewer() user: Viewer,
    @Req() request: Request,
  ): Promise<ConditionalReply<WorkflowStatusDto>> {
    return conditional(
      toWorkflowStatusResponse(
        await this.status.currentWorkflowStatus(wf_uuid, version, user),
        baseUrlOf(this.config, request),
      ),
    );
  }

  @Get('workflows/:wf_uuid/history')
  @RequireScope('workflow.read')
  @ApiOperation({
    operationId: 'workflows-get-history',
    summary: "Finished builds per day, passing and failing, over the latest version's instances",
    description:
      'One entry per UTC day of the last `days` (today included, oldest first); days without builds count 0. ' +
      'Passing is `passed`; failing is `failed`, `error` or `aborted`.',
  })
  @ApiOkResponse({ type: WorkflowHistoryDto, description: 'Builds per day, oldest first' })
  async history(
    @Param() { wf_uuid }: WorkflowUuidParam,
    @Query() { days }: HistoryQuery,
    @CurrentViewer() user: Viewer,
  ): Promise<WorkflowHistoryDto> {
    return { days: await this.status.history(wf_uuid, days ?? DEFAULT_HISTORY_DAYS, user) };
  }

  @Get('suites/:suite_uuid/status')
  @RequireScope('workflow.read')
  @ApiOperation({ operationId: 'suites-get-status', summary: 'The test status of a suite' })
  @ApiOkResponse({ type: SuiteStatusDto, description: 'The test status of the suite' })
  @ConditionalRead()
  async suiteStatus(
    @Param() { suite_uuid }: SuiteUuidParam,
    @CurrentViewer() user: Viewer,
    @Req() request: Request,
  ): Promise<ConditionalReply<SuiteStatusDto>> {
    return conditional(
      toSuiteStatusResponse(await this.status.suiteStatus(suite_uuid, user), baseUrlOf(this.config, request)),
    );
  }

  @Get('instances/:instance_uuid/latest-builds')
  @RequireScope('workflow.read')
  @ApiOperation({
    operationId: 'instances-get-builds',
    summary: 'The latest builds of a test instance',
  })
  @ApiOkResponse({ type: BuildListDto, description: 'The latest builds, newest first' })
  @ConditionalRead()
  async latestBuilds(
    @Param() { instance_uuid }: InstanceUuidParam,
    @Query() { limit }: LatestBuildsQuery,
    @CurrentViewer() user: Viewer,
    @Req() request: Request,
  ): Promise<ConditionalReply<BuildListDto>> {
    const builds = await this.status.latestBuilds(instance_uuid, limit ?? DEFAULT_LATEST_BUILDS, user);
    const baseUrl = baseUrlOf(this.config, request);
    return conditional({ items: builds.map((build) => toBuildView(build, baseUrl)) });
  }

  @Get('instances/:instance_uuid/stats')
  @RequireScope('workflow.read')
  @ApiOperation({
    operationId: 'instances-get-stats',
    summary: 'Pass rate, median duration, last pass and flaky re-runs of a test instance',
    description:
      'Over the finished builds that started in the last `days` days (the service keeps the latest 100 builds ' +
      'of each instance).',
  })
  @ApiOkResponse({ type: InstanceStatsDto, description: 'The statistics of the window' })
  async stats(
    @Param() { instance_uuid }: InstanceUuidParam,
    @Query() { days }: StatsQuery,
    @CurrentViewer() user: Viewer,
  ): Promise<InstanceStatsDto> {
    return toInstanceStatsResponse(
      await this.status.instanceStats(instance_uuid, days ?? DEFAULT_STATS_DAYS, user),
    );
  }

  @Get('instances/:instance_uuid/builds/:build_id')
  @RequireScope('workflow.read')
  @ApiOperation({ operationId: 'instances-builds-get-by-id', summary: 'One build of a test instance' })
  @ApiOkResponse({ type: BuildDto, description: 'The build' })
  async build(
    @Param() { instance_uuid, build_id }: BuildParams,
    @CurrentViewer() user: Viewer,
    @Req() request: Request,
  ): Promise<BuildDto> {
    return toBuildView(
      await this.status.build(instance_uuid, build_id, user),
      baseUrlOf(this.config, request),
    );
  }
}
