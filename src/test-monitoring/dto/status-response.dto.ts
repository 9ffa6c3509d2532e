import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import {
  BuildDto,
  LIFEMONITOR_API_VERSION,
  latestVersionOf,
  RegistryRefDto,
  SelfLinkDto,
  toBuildResponse,
  toRegistryRef,
  toVersionHeader,
  VersionHeaderDto,
  VersionListMetaDto,
  WorkflowRefDto,
} from '../../workflows/index.js';
import { AGGREGATE_TEST_STATUSES, type AggregateTestStatus } from '../aggregate-status.js';
import { STALE_REASONS, type StaleReason } from '../staleness.js';
import type { WorkflowSubscription } from '../status-subscriptions.js';
import type {
  BuildView,
  InstanceStats,
  SuiteStatus,
  VersionStatus,
  VersionStatusReply,
} from '../test-status.service.js';

export class VersionRefDto {
  @ApiProperty({ format: 'uuid', example: '0f4e1d2c-3b4a-5968-7a8b-9c0d1e2f3a4b' })
  uuid!: string;

  @ApiProperty({ example: '1.0' })
  version!: string;
}

export class WorkflowStatusDto {
  @ApiProperty({ type: WorkflowRefDto })
  workflow!: WorkflowRefDto;

  @ApiProperty({ type: VersionHeaderDto, description: 'The version whose status this is' })
  version!: VersionHeaderDto;

  @ApiProperty({
    format: 'uuid',
    example: '1d8a9c84-8b1c-4bfa-a9c5-52b6b1b9cd67',
    description: "The workflow's, as LifeMonitor puts it",
  })
  uuid!: string;

  @ApiProperty({ example: 'sort-and-change-case', description: "The workflow's name" })
  name!: string;

  @ApiProperty({ example: false })
  public!: boolean;

  @ApiPropertyOptional({ type: RegistryRefDto, description: 'For a workflow that came from a registry' })
  registry?: RegistryRefDto;

  @ApiProperty({
    example: '',
    description:
      'Why there is no aggregate status, empty when there is one; when last checks failed, which ' +
      "instances and what their CI service answered (`The last check of 'ubuntu-latest' failed: …`)",
  })
  reason!: string;

  @ApiProperty({ type: SelfLinkDto })
  links!: SelfLinkDto;

  @ApiProperty({ type: VersionListMetaDto })
  meta!: VersionListMetaDto;

  @ApiProperty({
    enum: AGGREGATE_TEST_STATUSES,
    example: 'all_passing',
    description:
      "Over each instance's latest finished build: passed is passing; failed, error, aborted are failing",
  })
  aggregate_test_status!: AggregateTestStatus;

  @ApiProperty({
    type: BuildDto,
    isArray: true,
    description: "Each instance's latest build, whatever its state",
  })
  latest_builds!: BuildDto[];

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2024-05-01T12:00:00.000Z',
    description: 'The latest successful check of any instance',
  })
  last_checked!: string | null;

  @ApiProperty({
    example: false,
    description: 'True when the status may no longer hold: `stale_reasons` says why',
  })
  stale!: boolean;

  @ApiProperty({
    enum: STALE_REASONS,
    isArray: true,
    example: ['no_recent_build'],
    description:
      'Why the status may no longer hold, empty when it holds: `check_failed` (the last check of some ' +
      'instance failed), `rate_limited` (its service is paused by a rate limit), `no_recent_build` (the ' +
      'newest build of some instance is older than STALE_AFTER_DAYS), `schedule_disabled` (the CI has ' +
      "switched some instance's workflow off: GitHub's `disabled_inactivity`, `disabled_manually`, " +
      '`disabled_fork`)',
  })
  stale_reasons!: StaleReason[];

  // The subscription objects of GET /users/current/subscriptions: notifications' schema, by name,
  // as this feature cannot import notifications (which imports it).
  @ApiProperty({
    type: 'array',
    items: { $ref: getSchemaPath('SubscriptionDto') },
    description:
      "The caller's subscriptions to the workflow, as `GET /users/current/subscriptions` shows them (LifeMonitor's " +
      'member); `[]` for anonymous callers and registry tokens',
  })
  subscriptions!: WorkflowSubscription[];
}

export class SuiteStatusDto {
  @ApiProperty({ format: 'uuid', example: '5c9d2b7e-1a3f-4c8e-b2d1-9e8f7a6b5c4d' })
  suite_uuid!: string;

  @ApiProperty({ enum: AGGREGATE_TEST_STATUSES, example: 'some_passing' })
  status!: AggregateTestStatus;

  @ApiProperty({
    type: BuildDto,
    isArray: true,
    description: "Each instance's latest build, whatever its state",
  })
  latest_builds!: BuildDto[];
}

export class BuildListDto {
  @ApiProperty({ type: BuildDto, isArray: true, description: 'Newest first' })
  items!: BuildDto[];
}

export function toBuildView(view: BuildView, baseUrl: string): BuildDto {
  return toBuildResponse(view.build, view.instance, view.lastChecks, baseUrl);
}

export function toWorkflowStatusResponse(status: VersionStatusReply, baseUrl: string): WorkflowStatusDto {
  const { workflow } = status;
  const registry = status.registry ?? null;
  const latest = latestVersionOf(workflow);
  const resource = `/workflows/${workflow.uuid}/status`;
  const reply: WorkflowStatusDto = {
    workflow: { uuid: workflow.uuid, name: latest.name },
    version: toVersionHeader(workflow, status.version, baseUrl, registry),
    aggregate_test_status: status.aggregate,
    latest_builds: status.latestBuilds.map((build) => toBuildView(build, baseUrl)),
    last_checked: status.lastChecked?.toISOString() ?? null,
    stale: status.stale,
    stale_reasons: status.staleness.map((finding) => finding.reason),
    uuid: workflow.uuid,
    name: latest.name,
    public: workflow.public,
    reason: reasonOf(status),
    subscriptions: status.subscriptions,
    links: { self: `${baseUrl}${resource}` },
    meta: {
      api_version: LIFEMONITOR_API_VERSION,
      base_url: baseUrl,
      resource,
      created: workflow.createdAt.toISOString(),
      modified: latest.registeredAt.toISOString(),
    },
  };
  if (registry !== null) {
    reply.registry = toRegistryRef(registry);
  }
  return reply;
}

/**
 * LifeMonitor's `reason`: why the aggregate is not available (empty otherwise). Failed last checks
 * come first, each with what the CI service answered: without them "no build yet" would hide that
 * the builds could not be read at all.
 */
function reasonOf(status: VersionStatus): string {
  if (status.aggregate !== 'not_available') {
    return '';
  }
  if (status.failedChecks.length > 0) {
    return status.failedChecks
      .map(({ instance, error }, index) => {
        const name = instance.name ?? instance.rocInstance ?? instance.uuid;
        return `${index === 0 ? 'The' : 'the'} last check of '${name}' failed: ${error}`;
      })
      .join('; ');
  }
  return status.latestBuilds.length === 0 && !status.stale
    ? 'No build of this version found yet'
    : 'No finished build of this version yet';
}

export function toSuiteStatusResponse(status: SuiteStatus, baseUrl: string): SuiteStatusDto {
  return {
    suite_uuid: status.suite.uuid,
    status: status.aggregate,
    latest_builds: status.latestBuilds.map((build) => toBuildView(build, baseUrl)),
  };
}

/** The shields.io endpoint schema (https://shields.io/badges/endpoint-badge). */
export class ShieldsEndpointDto {
  @ApiProperty({ enum: [1], example: 1 })
  schemaVersion!: 1;

  @ApiProperty({ example: 'tests' })
  label!: string;

  @ApiProperty({
    enum: [
      'passing',
      'some passing',
      'failing',
      'no builds',
      'passing (stale)',
      'some passing (stale)',
      'failing (stale)',
      'no builds (stale)',
    ],
    example: 'passing',
  })
  message!: string;

  @ApiProperty({ enum: ['brightgreen', 'yellow', 'red', 'lightgrey'], example: 'brightgreen' })
  color!: string;
}

export class InstanceStatsDto {
  @ApiProperty({ example: 90, description: 'The window, in days back from now' })
  days!: number;

  @ApiProperty({ example: 42, description: 'Finished builds that started in the window' })
  builds!: number;

  @ApiProperty({ example: 39 })
  passed!: number;

  @ApiProperty({ example: 3, description: 'failed, error or aborted' })
  failed!: number;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 0.93,
    description: 'passed / builds; null without builds',
  })
  pass_rate!: number | null;

  @ApiProperty({ type: Number, nullable: true, example: 312, description: 'Seconds; null without builds' })
  median_duration!: number | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: '2026-11-23T08:00:00.000Z' })
  last_passed!: string | null;

  @ApiProperty({
    example: 1,
    description:
      "Runs that failed on one attempt and passed on a later one (GitHub's `<run id>_<attempt>` build ids)",
  })
  flaky!: number;
}

export class HistoryDayDto {
  @ApiProperty({ example: '2026-11-23', description: 'A UTC day' })
  date!: string;

  @ApiProperty({ example: 4 })
  passed!: number;

  @ApiProperty({ example: 1, description: 'failed, error or aborted' })
  failed!: number;
}

export class WorkflowHistoryDto {
  @ApiProperty({
    type: HistoryDayDto,
    isArray: true,
    description: 'One entry per day, oldest first, today last',
  })
  days!: HistoryDayDto[];
}

export function toInstanceStatsResponse(stats: InstanceStats): InstanceStatsDto {
  return {
    days: stats.days,
    builds: stats.builds,
    passed: stats.passed,
    failed: stats.failed,
    pass_rate: stats.builds === 0 ? null : stats.passed / stats.builds,
    median_duration: stats.medianDuration,
    last_passed: stats.lastPassed?.toISOString() ?? null,
    flaky: stats.flaky,
  };
}
