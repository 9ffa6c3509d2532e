import type { RegistrySummary } from '../workflows/index.js';
import { Inject, Injectable } from '@nestjs/common';
import type { Viewer } from '../auth/optional-auth.decorator.js';
import { DomainError } from '../common/errors/domain-error.js';
import {
  NOT_AVAILABLE,
  NOT_AVAILABLE_LISTED,
  RegisteredInstances,
  WorkflowAccess,
  type BadgeVersion,
  type LastCheck,
  type LastChecks,
  type ListedStatusSummary,
  type TestInstanceEntity,
  type TestSuiteEntity,
  type VersionStatusSummary,
  type WorkflowEntity,
  type WorkflowStatusSource,
  type WorkflowVersionEntity,
} from '../workflows/index.js';
import { aggregateStatus, failingForInfrastructure, type AggregateTestStatus } from './aggregate-status.js';
import {
  BuildsRepository,
  type BuildStats,
  type LatestOfInstance,
  type ListedOfInstance,
  type StoredBuild,
} from './builds.repository.js';
import { dailySeries, firstDayOf, windowStart, type DayCount } from './history.js';
import { CheckStateRepository } from './check-state.repository.js';
import { Clock } from '../common/clock.js';
import { CoalescedReads } from '../common/coalesced-reads.js';
import { StatusSubscriptions, type WorkflowSubscription } from './status-subscriptions.js';
import { AppConfig } from '../config/app-config.js';
import {
  inReasonOrder,
  staleFindingsOf,
  staleReasonsOf,
  type StaleFinding,
  type StaleReason,
} from './staleness.js';

/** A build with the instance it belongs to (its suite and service loaded) and its last check, as replies show it. */
export interface BuildView {
  build: StoredBuild;
  instance: TestInstanceEntity;
  /** Holds the instance's last check, when it had one. */
  lastChecks: LastChecks;
}

/** An instance whose last check failed (API.md 11 `last_check`). */
export interface FailedCheck {
  instance: TestInstanceEntity;
  at: Date;
  error: string;
}

/** The test status of a set of instances (API.md 2.6). */
export interface InstancesStatus {
  aggregate: AggregateTestStatus;
  /** Each instance's latest build, whatever its state, in suite and crate order. */
  latestBuilds: BuildView[];
  /** The latest successful check of any of the instances. */
  lastChecked: Date | null;
  /** The latest check of any of the instances, whatever its outcome; null before the first. */
  lastCheck: { at: Date; ok: boolean } | null;
  /** The instances whose last check failed, in suite and crate order, and what went wrong. */
  failedChecks: FailedCheck[];
  /** Some reason holds why the status may no longer hold (`staleness` is not empty). */
  stale: boolean;
  /** Every failing latest finished build failed for infrastructure (API.md 16), and one does. */
  infrastructureOnly: boolean;
  /** Why the status may no longer hold (API.md 16), each reason with its instances in suite and crate order. */
  staleness: StaleFinding<TestInstanceEntity>[];
}

export interface VersionStatus extends InstancesStatus {
  workflow: WorkflowEntity;
  version: WorkflowVersionEntity;
  /** The registry the workflow came from (API.md 10.1), when it did. */
  registry?: RegistrySummary | null;
}

/** The status of a version as its reply shows it to the caller (API.md 2.6, 10). */
export interface VersionStatusReply extends VersionStatus {
  /** The caller's subscriptions to the workflow: none for anonymous callers and registries. */
  subscriptions: WorkflowSubscription[];
}

/** API.md 5.3: an instance's figures over the last `days` days. */
export interface InstanceStats extends BuildStats {
  days: number;
}

/** A version's freshness and recent days, as a status page's list shows them. */
export interface VersionOverview {
  lastChecked: Date | null;
  stale: boolean;
  staleReasons: StaleReason[];
  days: DayCount[];
}

/** What a badge shows (API.md 5.2), and who may share it. */
export interface BadgeStatus {
  aggregate: AggregateTestStatus;
  stale: boolean;
  /** The version's name when it has no build at all yet (API.md 7.2), so that the badge says so. */
  unbuilt?: string;
  /** Its failing builds all failed for infrastructure (API.md 16). */
  infrastructureOnly: boolean;
  audience: BadgeVersion['audience'];
}

export interface SuiteStatus extends InstancesStatus {
  suite: TestSuiteEntity;
}

/** A status read as a request asks for it. */
interface StatusRead {
  wfUuid: string;
  version: string | undefined;
  user: Viewer;
}

/** A badge read as a request asks for it. */
interface BadgeRead extends StatusRead {
  badgeToken: string | undefined;
}

/** Who is reading, as the visibility rule tells viewers apart. */
function viewerKey(user: Viewer): string {
  // A registry's token sees what its registry sent, not what its account owns: a key of its own.
  return user === undefined ? '' : `${user.id}:${user.roles.join(',')}:${user.registry?.id ?? ''}`;
}

/**
 * The status reads of area B (API.md 2.6, 2.7), behind the registry's visibility rule, and the
 * registry's WorkflowStatusSource for the `status` member of its workflow list.
 */
@Injectable()
export class TestStatusService implements WorkflowStatusSource {
  constructor(
    private readonly repo: BuildsRepository,
    private readonly checkStates: CheckStateRepository,
    private readonly registered: RegisteredInstances,
    @Inject(WorkflowAccess)
    private readonly access: Pick<
      WorkflowAccess,
      'visibleVersion' | 'visibleSuite' | 'visibleInstance' | 'badgeVersion'
    >,
    private readonly clock: Clock,
    private readonly subscriptions: StatusSubscriptions,
    private readonly config: AppConfig,
  ) {}

  // The reads that dashboards and README badges poll: under load, identical ones share a computation.
  private readonly statusReads = new CoalescedReads<StatusRead, VersionStatusReply>(
    (read) => `${read.wfUuid}\n${read.version ?? ''}\n${viewerKey(read.user)}`,
    (read) => this.workflowStatusReply(read.wfUuid, read.version, read.user),
  );
  private readonly badgeReads = new CoalescedReads<BadgeRead, BadgeStatus>(
    (read) => `${read.wfUuid}\n${read.version ?? ''}\n${viewerKey(read.user)}\n${read.badgeToken ?? ''}`,
    (read) => this.badge(read.wfUuid, read.version, read.user, read.badgeToken),
  );

  /**
   * workflowStatus as of the request with the caller's subscriptions to the workflow (API.md 10),
   * shared with identical reads that arrive with it (CoalescedReads).
   */
  currentWorkflowStatus(
    wfUuid: string,
    version: string | undefined,
    user: Viewer,
  ): Promise<VersionStatusReply> {
    return this.statusReads.read({ wfUuid, version, user });
  }

  private async workflowStatusReply(
    wfUuid: string,
    version: string | undefined,
    user: Viewer,
  ): Promise<VersionStatusReply> {
    const status = await this.workflowStatus(wfUuid, version, user);
    return { ...status, subscriptions: await this.subscriptions.of(user, status.workflow.id) };
  }

  /** badge as of the request, shared with identical reads that arrive with it (CoalescedReads). */
  currentBadge(
    wfUuid: string,
    version: string | undefined,
    user: Viewer,
    badgeToken: string | undefined,
  ): Promise<BadgeStatus> {
    return this.badgeReads.read({ wfUuid, version, user, badgeToken });
  }

  /** The status of a version (the latest when `version` is undefined); not_found when not visible. */
  async workflowStatus(
    wfUuid: string,
    version: string | undefined,
    user: Viewer,
    now = new Date(this.clock.nowMs()),
  ): Promise<VersionStatus> {
    const visible = await this.access.visibleVersion(wfUuid, version, user);
    const instances = await this.registered.ofVersion(visible.version.id);
    return { ...visible, ...(await this.statusOf(instances, now)) };
  }

  /** The status a badge shows: of a version the caller may see, or opened by the workflow's badge token. */
  async badge(
    wfUuid: string,
    version: string | undefined,
    user: Viewer,
    badgeToken: string | undefined,
    now = new Date(this.clock.nowMs()),
  ): Promise<BadgeStatus> {
    const visible = await this.access.badgeVersion(wfUuid, version, user, badgeToken);
    const status = await this.statusOf(await this.registered.ofVersion(visible.version.id), now);
    return {
      aggregate: status.aggregate,
      stale: status.stale,
      unbuilt: status.latestBuilds.length === 0 ? visible.version.version : undefined,
      infrastructureOnly: status.infrastructureOnly,
      audience: visible.audience,
    };
  }

  /** Pass rate, median duration, last pass and flaky re-runs of an instance's finished builds of the last `days` days. */
  async instanceStats(
    instanceUuid: string,
    days: number,
    user: Viewer,
    now = new Date(this.clock.nowMs()),
  ): Promise<InstanceStats> {
    const instance = await this.access.visibleInstance(instanceUuid, user);
    return { days, ...(await this.repo.statsOf(instance.id, windowStart(now, days))) };
  }

  /**
   * Finished builds per day, passing and failing, over the latest version's instances: the last
   * `days` UTC days, today included, one entry each, oldest first.
   */
  async history(
    wfUuid: string,
    days: number,
    user: Viewer,
    now = new Date(this.clock.nowMs()),
  ): Promise<DayCount[]> {
    const visible = await this.access.visibleVersion(wfUuid, undefined, user);
    const instances = await this.registered.ofVersion(visible.version.id);
    const first = firstDayOf(now, days);
    const counts = await this.repo.dailyCounts(
      instances.map((instance) => instance.id),
      first,
    );
    return dailySeries(counts, first, days);
  }

  /**
   * Last check, staleness and the last `days` days of many versions at once (a status page's
   * rows): three queries whatever their number. The caller has checked their visibility.
   */
  async overviews(
    versionIds: readonly number[],
    days: number,
    now = new Date(this.clock.nowMs()),
  ): Promise<Map<number, VersionOverview>> {
    const states = await this.checkStates.statesOfVersions(versionIds);
    const paused = await this.checkStates.pausedServices(
      states.map((state) => state.serviceId),
      now,
    );
    const first = firstDayOf(now, days);
    const counts = await this.repo.dailyCountsOfVersions(versionIds, first);
    const overviews = new Map<number, VersionOverview>(
      versionIds.map((id) => [
        id,
        {
          lastChecked: null,
          stale: false,
          staleReasons: [],
          days: dailySeries(counts.get(id) ?? [], first, days),
        },
      ]),
    );
    for (const state of states) {
      const overview = overviews.get(state.versionId);
      if (!overview) {
        continue;
      }
      if (state.lastCheckedAt && (!overview.lastChecked || state.lastCheckedAt > overview.lastChecked)) {
        overview.lastChecked = state.lastCheckedAt;
      }
      const reasons = staleReasonsOf(
        { ...state, servicePaused: paused.has(state.serviceId) },
        now,
        this.config.monitoring.staleAfterDays,
      );
      overview.staleReasons = inReasonOrder([...overview.staleReasons, ...reasons]);
      overview.stale = overview.staleReasons.length > 0;
    }
    return overviews;
  }

  async suiteStatus(
    suiteUuid: string,
    user: Viewer,
    now = new Date(this.clock.nowMs()),
  ): Promise<SuiteStatus> {
    const suite = await this.access.visibleSuite(suiteUuid, user);
    const instances = await this.registered.ofSuite(suite.id);
    return { suite, ...(await this.statusOf(instances, now)) };
  }

  /** An instance's latest `limit` builds, newest first. */
  async latestBuilds(instanceUuid: string, limit: number, user: Viewer): Promise<BuildView[]> {
    const instance = await this.access.visibleInstance(instanceUuid, user);
    const builds = await this.repo.latestBuilds(instance.id, limit);
    const lastChecks = await this.lastChecks([instance.id]);
    return builds.map((build) => ({ build, instance, lastChecks }));
  }

  async build(instanceUuid: string, buildId: string, user: Viewer): Promise<BuildView> {
    const instance = await this.access.visibleInstance(instanceUuid, user);
    const build = await this.repo.findBuild(instance.id, buildId);
    if (!build) {
      throw new DomainError('not_found', `The test instance ${instanceUuid} has no build '${buildId}'`);
    }
    return { build, instance, lastChecks: await this.lastChecks([instance.id]) };
  }

  /** WorkflowStatusSource: the last check of each instance that had one (API.md 11). */
  async lastChecks(instanceIds: readonly number[]): Promise<Map<number, LastCheck>> {
    const checks = new Map<number, LastCheck>();
    for (const [id, state] of await this.checkStates.viewsOf(instanceIds)) {
      if (state.lastCheck) {
        checks.set(id, state.lastCheck);
      }
    }
    return checks;
  }

  /**
   * Each instance of these versions with its latest finished build (undefined when it has none),
   * by version, in instance order; a version without instances has an empty list. The caller
   * has checked their visibility.
   */
  latestFinishedOfVersions(versionIds: readonly number[]): Promise<Map<number, (StoredBuild | undefined)[]>> {
    return this.repo.latestFinishedOfVersions(versionIds);
  }

  /** WorkflowStatusSource: aggregate and latest build of many versions, from one query. */
  async summaries(versionIds: readonly number[]): Promise<Map<number, VersionStatusSummary>> {
    const byVersion = new Map<number, LatestOfInstance[]>(versionIds.map((id) => [id, []]));
    for (const row of await this.repo.latestOfVersions([...new Set(versionIds)])) {
      byVersion.get(row.versionId)?.push(row);
    }
    const summaries = new Map<number, VersionStatusSummary>();
    for (const [versionId, rows] of byVersion) {
      if (rows.length === 0) {
        summaries.set(versionId, NOT_AVAILABLE);
        continue;
      }
      const latest = newest(rows.flatMap((row) => (row.latest ? [row.latest] : [])));
      summaries.set(versionId, {
        aggregate: aggregateStatus(rows.map((row) => row.latestFinished?.status)),
        latestBuild: latest
          ? {
              instanceId: latest.instanceId,
              buildId: latest.buildId,
              status: latest.status,
              startedAt: latest.startedAt,
              durationSeconds: latest.durationSeconds,
              url: latest.url,
              failure: latest.failure,
            }
          : null,
      });
    }
    return summaries;
  }

  /**
   * WorkflowStatusSource: `summaries` with the last check of each latest build's instance, from
   * one query: what a list's batch shows, without the finished builds' other fields.
   */
  async listedSummaries(versionIds: readonly number[]): Promise<Map<number, ListedStatusSummary>> {
    const byVersion = new Map<number, ListedOfInstance[]>(versionIds.map((id) => [id, []]));
    for (const row of await this.repo.listedOfVersions([...new Set(versionIds)])) {
      byVersion.get(row.versionId)?.push(row);
    }
    const summaries = new Map<number, ListedStatusSummary>();
    for (const [versionId, rows] of byVersion) {
      let newestRow: ListedOfInstance | undefined;
      for (const row of rows) {
        if (!newestRow || newest([newestRow.latest, row.latest]) === row.latest) {
          newestRow = row;
        }
      }
      if (!newestRow) {
        summaries.set(versionId, NOT_AVAILABLE_LISTED);
        continue;
      }
      const latest = newestRow.latest;
      summaries.set(versionId, {
        aggregate: aggregateStatus(rows.map((row) => row.finishedStatus)),
        latestBuild: {
          instanceId: latest.instanceId,
          buildId: latest.buildId,
          status: latest.status,
          startedAt: latest.startedAt,
          durationSeconds: latest.durationSeconds,
          url: latest.url,
          failure: latest.failure,
        },
        latestBuildCheck: newestRow.lastCheck,
      });
    }
    return summaries;
  }

  /**
   * The services of these instances paused at `now`: as their check states' read gave the pauses,
   * the services it did not cover (an instance without a check state) read apart.
   */
  private async pausedServicesOf(
    instances: readonly TestInstanceEntity[],
    pausedUntil: ReadonlyMap<number, Date | null>,
    now: Date,
  ): Promise<Set<number>> {
    const paused = new Set<number>();
    for (const [serviceId, until] of pausedUntil) {
      if (until !== null && until > now) {
        paused.add(serviceId);
      }
    }
    const unread = instances.map((instance) => instance.serviceId).filter((id) => !pausedUntil.has(id));
    for (const serviceId of await this.checkStates.pausedServices(unread, now)) {
      paused.add(serviceId);
    }
    return paused;
  }

  private async statusOf(instances: readonly TestInstanceEntity[], now: Date): Promise<InstancesStatus> {
    const ids = instances.map((instance) => instance.id);
    const { latest, states, pausedUntil } = await this.repo.monitoringOfInstances(ids);
    const paused = await this.pausedServicesOf(instances, pausedUntil, now);
    const staleness = staleFindingsOf(
      instances.map((instance) => {
        const state = states.get(instance.id);
        return {
          instance,
          reasons: staleReasonsOf(
            {
              lastCheckFailed: state?.lastCheckFailed === true,
              servicePaused: paused.has(instance.serviceId),
              newestBuildAt: latest.get(instance.id)?.latest?.startedAt,
              workflowDisabled: state?.workflowDisabled === true,
            },
            now,
            this.config.monitoring.staleAfterDays,
          ),
        };
      }),
    );
    let lastChecked: Date | null = null;
    let lastCheck: LastCheck | null = null;
    const lastChecks = new Map<number, LastCheck>();
    for (const [id, state] of states) {
      if (state.lastCheckedAt && (!lastChecked || state.lastCheckedAt > lastChecked)) {
        lastChecked = state.lastCheckedAt;
      }
      if (state.lastCheck) {
        lastChecks.set(id, state.lastCheck);
        if (!lastCheck || state.lastCheck.at > lastCheck.at) {
          lastCheck = state.lastCheck;
        }
      }
    }
    return {
      aggregate: aggregateStatus(
        instances.map((instance) => latest.get(instance.id)?.latestFinished?.status),
      ),
      latestBuilds: instances.flatMap((instance) => {
        const build = latest.get(instance.id)?.latest;
        return build ? [{ build, instance, lastChecks }] : [];
      }),
      lastChecked,
      lastCheck: lastCheck && { at: lastCheck.at, ok: lastCheck.ok },
      failedChecks: instances.flatMap((instance) => {
        const check = lastChecks.get(instance.id);
        return check && !check.ok ? [{ instance, at: check.at, error: check.error ?? '' }] : [];
      }),
      stale: staleness.length > 0,
      staleness,
      infrastructureOnly: failingForInfrastructure(
        instances.map((instance) => latest.get(instance.id)?.latestFinished),
      ),
    };
  }
}

/** The build that started last (ties: the one stored last). */
function newest(builds: readonly StoredBuild[]): StoredBuild | undefined {
  let found: StoredBuild | undefined;
  for (const build of builds) {
    if (
      !found ||
      build.startedAt.getTime() > found.startedAt.getTime() ||
      (build.startedAt.getTime() === found.startedAt.getTime() && build.id > found.id)
    ) {
      found = build;
    }
  }
  return found;
}
