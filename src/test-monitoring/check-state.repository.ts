import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository, type EntityManager } from 'typeorm';
import { insertMissing, lockRows } from '../database/dialect.js';
import { retryOnDeadlock } from '../database/retry-on-deadlock.js';
import { RegisteredInstances, RegistryEvents, type AddedInstance } from '../workflows/index.js';
import { buildSelectionOf } from './build-selection.js';
import { CaseBuilder, type CheckRecord, type ClaimedInstance } from './check-records.js';
import { inList } from '../database/plain-entities.js';
import { rawDate } from '../database/raw-date.js';
import { BuildsRepository } from './builds.repository.js';
import { CheckResults, type RecordedCheck } from './check-results.js';
import { CheckStateEntity } from './entities/check-state.entity.js';
import { ServicePauseEntity } from './entities/service-pause.entity.js';
import type { RecordedBuildPair } from './builds.repository.js';
import { VersionStatuses } from './version-statuses.js';
import {
  toCheckStateView,
  toVersionCheckState,
  type CheckStateView,
  type RawCheckStateView,
  type RawVersionCheckState,
  type VersionCheckState,
} from './check-state-views.js';

export type { CheckStateView, VersionCheckState } from './check-state-views.js';

/** `last_error` column width. */
const MAX_ERROR_LENGTH = 512;
/** Instances whose check state one statement writes; bounds the statements' parameters. */
const INSTANCES_PER_STATEMENT = 50;
/** Select-and-lease rounds of one claim. */
const CLAIM_ROUNDS = 3;
/** The latest start of a check state's builds, read backwards from the (instance, start) index. */
const LATEST_START =
  'SELECT MAX(b.started_at) FROM builds b WHERE b.instance_id = test_check_states.instance_id';

/**
 * `rerun_from` of a check state whose last trigger is `trigger` (an SQL expression): the later of
 * that and its latest build's start; null without builds.
 */
function rerunFromSql(trigger: string): string {
  return `CASE WHEN ${trigger} IS NOT NULL AND ${trigger} > (${LATEST_START}) THEN ${trigger} ELSE (${LATEST_START}) END`;
}

/** The workflow's state as the check read it (true: disabled); undefined when it did not read it. */
function workflowStateOf(record: CheckRecord): boolean | undefined {
  return record.kind === 'builds' || record.kind === 'not_modified' ? record.workflowDisabled : undefined;
}

/**
 * Test monitoring's check state: when each instance is due, the lease that lets several copies
 * share the work, its ETag and back-off (`test_check_states`), and the pauses of rate-limited
 * services (`test_service_pauses`). New instances get their row, due at once, in the
 * registration's transaction (RegistryEvents).
 */
@Injectable()
export class CheckStateRepository implements OnModuleInit {
  private claims = 0;

  constructor(
    @InjectRepository(CheckStateEntity) private readonly states: Repository<CheckStateEntity>,
    @InjectRepository(ServicePauseEntity) private readonly pauses: Repository<ServicePauseEntity>,
    private readonly builds: BuildsRepository,
    private readonly registered: RegisteredInstances,
    private readonly events: RegistryEvents,
    private readonly results: CheckResults,
    private readonly statuses: VersionStatuses,
  ) {}

  onModuleInit(): void {
    this.events.onInstancesAdded((tx, added, at) => this.addDue(tx, added, at));
    this.events.onInstanceRetargeted((tx, instance, at) => this.startOver(tx, instance.instanceId, at));
    this.events.onRerunIntervalChanged((tx, workflowId, days) => this.setRerunInterval(tx, workflowId, days));
  }

  /** The workflow's re-run interval (null: RERUN_INTERVAL_DAYS) on its instances' check states. */
  async setRerunInterval(tx: EntityManager, workflowId: number, days: number | null): Promise<void> {
    await tx
      .createQueryBuilder()
      .update(CheckStateEntity)
      .set({ rerunIntervalDays: days })
      .where('version_id IN (SELECT v.id FROM workflow_versions v WHERE v.workflow_id = :workflowId)', {
        workflowId,
      })
      .execute();
  }

  /**
   * Forgets what was learnt of an instance that now names another resource (its builds, ETag,
   * back-off, last check) and makes it due at `at`. The lease goes too: a check of the old resource
   * still under way then holds no row, and records nothing.
   */
  async startOver(tx: EntityManager, instanceId: number, at: Date): Promise<void> {
    await this.builds.removeOf(tx, instanceId);
    await this.statuses.buildsChanged(tx, [instanceId]);
    await tx.update(
      CheckStateEntity,
      { instanceId },
      {
        nextCheckAt: at,
        leaseOwner: null,
        leaseUntil: null,
        etag: null,
        failureCount: 0,
        lastCheckedAt: null,
        lastCheckFailed: false,
        lastError: null,
        lastCheckAt: null,
        rerunFrom: null,
        workflowDisabled: false,
      },
    );
  }

  /** Makes new instances due at `at` (an instance that has a row already keeps it). */
  async addDue(tx: EntityManager, added: readonly AddedInstance[], at: Date): Promise<void> {
    for (let from = 0; from < added.length; from += INSTANCES_PER_STATEMENT) {
      await insertMissing(
        tx,
        CheckStateEntity,
        added.slice(from, from + INSTANCES_PER_STATEMENT).map((instance) => ({
          instanceId: instance.instanceId,
          serviceId: instance.serviceId,
          versionId: instance.versionId,
          nextCheckAt: at,
          failureCount: 0,
          lastCheckFailed: false,
        })),
      );
      // Their workflow's re-run interval, read in the registration's transaction.
      await tx
        .createQueryBuilder()
        .update(CheckStateEntity)
        .set({
          rerunIntervalDays: () =>
            `(SELECT w.rerun_interval_days FROM workflow_versions v INNER JOIN workflows w ON w.id = v.workflow_id
              WHERE v.id = test_check_states.version_id)`,
        })
        .where('instance_id IN (:...ids)', {
          ids: added.slice(from, from + INSTANCES_PER_STATEMENT).map((instance) => instance.instanceId),
        })
        .execute();
    }
  }

  /**
   * Leases up to `batch` due instances to `owner` for `leaseMs`, the most overdue first, and
   * returns them. Due means `next_check_at <= now`, not leased (or the lease ran out: its copy
   * died), and the service not paused. The lease is one conditional UPDATE, so when several
   * copies race for the same rows each row goes to exactly one of them, on SQLite and MariaDB.
   */
  async claimDue(now: Date, owner: string, batch: number, leaseMs: number): Promise<ClaimedInstance[]> {
    const token = `${owner}#${++this.claims}`.slice(-64);
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const tried: number[] = [];
    let leased = 0;
    // A copy that loses a race for some candidates selects again, so it does not go idle while
    // instances are due; a few rounds are enough, the next tick takes what is left.
    for (let round = 0; round < CLAIM_ROUNDS && leased < batch; round++) {
      const candidates = await this.states
        .createQueryBuilder('c')
        .leftJoin(ServicePauseEntity, 'p', 'p.serviceId = c.serviceId')
        .select('c.instanceId', 'id')
        .where('c.nextCheckAt <= :now', { now })
        .andWhere('(c.leaseUntil IS NULL OR c.leaseUntil < :now)', { now })
        .andWhere('(p.pausedUntil IS NULL OR p.pausedUntil <= :now)', { now })
        .orderBy('c.nextCheckAt', 'ASC')
        .addOrderBy('c.instanceId', 'ASC')
        .limit(batch - leased)
        .getRawMany<{ id: number | string }>();
      if (candidates.length === 0) {
        break;
      }
      // Ascending ids: every writer locks rows in one order, so MariaDB cannot deadlock on them.
      const ids = candidates.map((row) => Number(row.id)).sort((a, b) => a - b);
      tried.push(...ids);
      const result = await retryOnDeadlock(() =>
        this.states
          .createQueryBuilder()
          .update(CheckStateEntity)
          .set({ leaseOwner: token, leaseUntil })
          .where('instance_id IN (:...ids)', { ids })
          .andWhere('next_check_at <= :now', { now })
          .andWhere('(lease_until IS NULL OR lease_until < :now)', { now })
          .execute(),
      );
      const won = result.affected ?? ids.length;
      leased += won;
      if (won === ids.length) {
        break;
      }
    }
    if (leased === 0) {
      return [];
    }
    // By primary key: the candidates this claim tried, of which it holds those with its token.
    const claimed = await this.states
      .createQueryBuilder('c')
      .where('c.instanceId IN (:...ids)', { ids: tried })
      .andWhere('c.leaseOwner = :token', { token })
      .orderBy('c.nextCheckAt', 'ASC')
      .addOrderBy('c.instanceId', 'ASC')
      .getMany();
    const targets = await this.registered.checkTargets(claimed.map((state) => state.instanceId));
    // An instance deleted since took its check state with it: nothing to check or release.
    return claimed.flatMap((state) => {
      const target = targets.get(state.instanceId);
      return target
        ? [
            {
              id: state.instanceId,
              resource: target.resource,
              etag: state.etag,
              failureCount: state.failureCount,
              leaseToken: token,
              service: target.service,
              selection: buildSelectionOf(target.version),
            },
          ]
        : [];
    });
  }

  /**
   * Writes the outcomes of several checks in one transaction (one commit for many checks keeps
   * SQLite fast). Each write is conditional on the claim's lease token: a copy whose lease ran
   * out and was taken over by another writes nothing. Builds are upserted by (instance, build id);
   * unchanged builds are not touched, and a 304 changes only the instance's check bookkeeping.
   */
  async recordChecks(records: readonly CheckRecord[]): Promise<void> {
    if (records.length === 0) {
      return;
    }
    const ordered = [...records].sort((a, b) => a.instanceId - b.instanceId);
    await retryOnDeadlock(() =>
      this.states.manager.transaction(async (tx) => {
        for (let at = 0; at < ordered.length; at += INSTANCES_PER_STATEMENT) {
          const chunk = ordered.slice(at, at + INSTANCES_PER_STATEMENT);
          const owned = await this.updateStates(tx, chunk);
          const fresh = chunk.flatMap((record) =>
            record.kind === 'builds' && record.builds.length > 0 && owned.has(record.instanceId)
              ? [{ instanceId: record.instanceId, builds: record.builds }]
              : [],
          );
          const before = this.results.listened
            ? await this.builds.latestFinished(
                tx,
                fresh.map((entry) => entry.instanceId),
              )
            : undefined;
          if (fresh.length > 0) {
            await this.builds.upsertBuilds(tx, fresh);
            await this.statuses.buildsChanged(
              tx,
              fresh.map((entry) => entry.instanceId),
            );
            await tx
              .createQueryBuilder()
              .update(CheckStateEntity)
              .set({ rerunFrom: () => rerunFromSql('last_trigger_at') })
              .where('instance_id IN (:...ids)', { ids: fresh.map((entry) => entry.instanceId) })
              .execute();
          }
          if (before) {
            await this.tellRecorded(
              tx,
              chunk,
              owned,
              new Set(fresh.map((entry) => entry.instanceId)),
              before,
            );
          }
        }
      }),
    );
  }

  /**
   * Tells CheckResults' listeners (in this transaction) what each successful check of an owned
   * instance left: its two latest finished builds now, and its latest finished one before.
   */
  private async tellRecorded(
    tx: EntityManager,
    chunk: readonly CheckRecord[],
    owned: ReadonlySet<number>,
    changed: ReadonlySet<number>,
    before: ReadonlyMap<number, RecordedBuildPair>,
  ): Promise<void> {
    const checked = chunk.filter(
      (record): record is Extract<CheckRecord, { kind: 'builds' | 'not_modified' }> =>
        (record.kind === 'builds' || record.kind === 'not_modified') && owned.has(record.instanceId),
    );
    if (checked.length === 0) {
      return;
    }
    const after = await this.builds.latestFinished(
      tx,
      checked.map((record) => record.instanceId),
    );
    const checks: RecordedCheck[] = checked.map((record) => {
      const now = after.get(record.instanceId);
      // A check that wrote no builds left the latest finished build as it was.
      const earlier = changed.has(record.instanceId) ? before.get(record.instanceId) : now;
      return {
        instanceId: record.instanceId,
        checkedAt: record.checkedAt,
        latestFinished: now?.latest,
        previousFinished: now?.previous,
        latestFinishedBefore: earlier?.latest,
        workflowDisabled: record.workflowDisabled === true,
      };
    });
    await this.results.recorded(tx, checks);
  }

  /** Makes instances due at `now` (a check in flight keeps its lease and writes its own next time). */
  async makeDue(instanceIds: readonly number[], now: Date): Promise<void> {
    await retryOnDeadlock(() =>
      this.states
        .createQueryBuilder()
        .update(CheckStateEntity)
        .set({ nextCheckAt: now })
        .where('instance_id IN (:...ids)', { ids: [...instanceIds].sort((a, b) => a - b) })
        .execute(),
    );
  }

  /**
   * Makes due at `now` the instances whose next regular check comes at `limit` or later (planned
   * under a longer interval than the one in force). A back-off (a failing instance, a service's
   * `Retry-After`) is kept; a rate limit's pause is its service's row, not the instance's. One
   * UPDATE over the due-time index: copies starting together move each row once.
   */
  async bringForward(limit: Date, now: Date): Promise<number> {
    const result = await retryOnDeadlock(() =>
      this.states
        .createQueryBuilder()
        .update(CheckStateEntity)
        .set({ nextCheckAt: now })
        .where('next_check_at >= :limit', { limit })
        .andWhere('failure_count = 0')
        .execute(),
    );
    return result.affected ?? 0;
  }

  /** The re-run intervals workflows set themselves (API.md 11), each once: read from their index. */
  async rerunIntervalsInUse(): Promise<number[]> {
    const rows = await this.states.manager
      .createQueryBuilder()
      .select('DISTINCT w.rerunIntervalDays', 'days')
      .from('WorkflowEntity', 'w')
      .where('w.rerunIntervalDays IS NOT NULL')
      .getRawMany<{ days: number | string }>();
    return rows.map((row) => Number(row.days));
  }

  /**
   * Instances due a periodic re-run (API.md 11) among those of workflows with this interval (`own`)
   * or without one (the service default): whose latest build started at `cutoff` or before, with
   * no trigger since, whose service is not paused at `now`. At most `limit`, the longest due
   * first: the next search takes the rest. Read from the (interval, rerun_from) index, so that only
   * due instances are read. An instance without builds has nothing to re-run.
   */
  async dueReruns(
    interval: { own: boolean; days: number },
    cutoff: Date,
    now: Date,
    limit: number,
  ): Promise<number[]> {
    const rows = await this.states
      .createQueryBuilder('c')
      .leftJoin(ServicePauseEntity, 'p', 'p.serviceId = c.serviceId')
      .select('c.instanceId', 'id')
      .where(interval.own ? 'c.rerunIntervalDays = :days' : 'c.rerunIntervalDays IS NULL', {
        days: interval.days,
      })
      .andWhere('c.rerunFrom <= :cutoff', { cutoff })
      .andWhere('(p.pausedUntil IS NULL OR p.pausedUntil <= :now)', { now })
      .orderBy('c.rerunFrom', 'ASC')
      .limit(limit)
      .getRawMany<{ id: number | string }>();
    return rows.map((row) => Number(row.id));
  }

  /**
   * Takes the instance's trigger for `at`, unless a build was triggered on it after `notBefore`
   * (API.md 11: one trigger per instance per 10 minutes; a periodic re-run: none since its due
   * time). One conditional UPDATE, so that of several copies trying at once one wins. `at` is
   * kept to the second, as MariaDB keeps it. Absent: the instance has no check state (it is
   * never checked).
   */
  async takeTrigger(
    instanceId: number,
    at: Date,
    notBefore: Date,
  ): Promise<{ taken: true; previous: Date | null } | { taken: false; last: Date } | undefined> {
    // The key is selected too: TypeORM takes a row whose selected columns are all null for no row.
    const row = await this.states.findOne({
      select: { instanceId: true, lastTriggerAt: true },
      where: { instanceId },
    });
    if (!row) {
      return undefined;
    }
    const result = await retryOnDeadlock(() =>
      this.states
        .createQueryBuilder()
        .update(CheckStateEntity)
        .set({ lastTriggerAt: at, rerunFrom: () => rerunFromSql(':at') })
        .where('instance_id = :instanceId', { instanceId })
        .andWhere('(last_trigger_at IS NULL OR last_trigger_at <= :notBefore)', { notBefore })
        .setParameter('at', at)
        .execute(),
    );
    if ((result.affected ?? 0) > 0) {
      return { taken: true, previous: row.lastTriggerAt };
    }
    const now = await this.states.findOne({
      select: { instanceId: true, lastTriggerAt: true },
      where: { instanceId },
    });
    return { taken: false, last: now?.lastTriggerAt ?? at };
  }

  /** Gives back a trigger taken at `at` whose build did not start: the instance's last trigger is `previous` again. */
  async giveBackTrigger(instanceId: number, at: Date, previous: Date | null): Promise<void> {
    await retryOnDeadlock(() =>
      this.states
        .createQueryBuilder()
        .update(CheckStateEntity)
        .set({ lastTriggerAt: previous, rerunFrom: () => rerunFromSql(':previous') })
        .where('instance_id = :instanceId', { instanceId })
        .andWhere('last_trigger_at = :at', { at })
        .setParameter('previous', previous)
        .execute(),
    );
  }

  /** Pauses a rate-limited service until `until` (a later pause already set is kept). */
  async pauseService(serviceId: number, until: Date): Promise<void> {
    // Whole seconds, rounded up: MariaDB would cut the milliseconds and end the pause early.
    until = new Date(Math.ceil(until.getTime() / 1000) * 1000);
    await retryOnDeadlock(() =>
      this.pauses.manager.transaction(async (tx) => {
        await insertMissing(tx, ServicePauseEntity, [{ serviceId, pausedUntil: until }]);
        await tx
          .createQueryBuilder()
          .update(ServicePauseEntity)
          .set({ pausedUntil: until })
          .where('service_id = :serviceId', { serviceId })
          .andWhere('paused_until < :until', { until })
          .execute();
      }),
    );
  }

  /** Services paused by a rate limit at `now`. */
  pausedServiceCount(now: Date): Promise<number> {
    return this.pauses.createQueryBuilder('p').where('p.pausedUntil > :now', { now }).getCount();
  }

  /** Of the given services, those paused at `now`. */
  async pausedServices(serviceIds: readonly number[], now: Date): Promise<Set<number>> {
    if (serviceIds.length === 0) {
      return new Set();
    }
    // Fixed SQL by primary key, not a query builder (this is on every status read); a service has
    // at most one pause row, so the ones already over are dropped here rather than in SQL.
    const ids = [...new Set(serviceIds)];
    const rows = await this.pauses.query<{ service_id: number | string; paused_until: Date | string }[]>(
      `SELECT service_id, paused_until FROM test_service_pauses WHERE service_id IN (${inList(ids.length)})`,
      ids,
    );
    return new Set(
      rows.filter((row) => rawDate(row.paused_until) > now).map((row) => Number(row.service_id)),
    );
  }

  /**
   * The check states of the instances of many versions, with each one's newest build start, in
   * one query (the version index, and the builds' (instance, start) index read backwards).
   */
  async statesOfVersions(versionIds: readonly number[]): Promise<VersionCheckState[]> {
    if (versionIds.length === 0) {
      return [];
    }
    const rows = await this.states.query<RawVersionCheckState[]>(
      `SELECT c.version_id, c.service_id, c.last_checked_at, c.last_check_failed, c.workflow_disabled,
         (SELECT MAX(b.started_at) FROM builds b WHERE b.instance_id = c.instance_id) AS newest_build_at
       FROM test_check_states c WHERE c.version_id IN (${inList(versionIds.length)})`,
      [...versionIds],
    );
    return rows.map(toVersionCheckState);
  }

  /** The check state of each instance that has one. */
  async viewsOf(instanceIds: readonly number[]): Promise<Map<number, CheckStateView>> {
    if (instanceIds.length === 0) {
      return new Map();
    }
    // Fixed SQL, not a query builder hydrating whole entities: this is on every status read.
    const rows = await this.states.query<RawCheckStateView[]>(
      `SELECT instance_id, last_checked_at, last_check_failed, last_check_at, last_error, workflow_disabled
       FROM test_check_states
       WHERE instance_id IN (${inList(instanceIds.length)})`,
      [...instanceIds],
    );
    return new Map(rows.map((row) => [Number(row.instance_id), toCheckStateView(row)]));
  }

  /**
   * Writes the check state of several instances with two statements: which of them this copy
   * still holds (lease token per record), then one UPDATE setting each row's own values through
   * CASE expressions. Returns the ids written.
   */
  private async updateStates(tx: EntityManager, records: readonly CheckRecord[]): Promise<Set<number>> {
    const byToken = new Map<string, number[]>();
    for (const record of records) {
      byToken.set(record.leaseToken, [...(byToken.get(record.leaseToken) ?? []), record.instanceId]);
    }
    const held = tx.createQueryBuilder(CheckStateEntity, 'c').select('c.instanceId', 'id');
    const guards: string[] = [];
    const guardParams: Record<string, unknown> = {};
    [...byToken].forEach(([token, ids], index) => {
      guards.push(`(c.leaseOwner = :token${index} AND c.instanceId IN (:...ids${index}))`);
      guardParams[`token${index}`] = token;
      guardParams[`ids${index}`] = ids;
    });
    held.where(guards.join(' OR '), guardParams);
    // Locks the rows until commit, so that no claim takes them between this read and the UPDATE.
    const owned = new Set(
      (await lockRows(held, 'write').getRawMany<{ id: number | string }>()).map((row) => Number(row.id)),
    );
    const mine = records.filter((record) => owned.has(record.instanceId));
    if (mine.length === 0) {
      return owned;
    }
    const cases = new CaseBuilder();
    const checked = mine.filter((record) => record.kind === 'builds' || record.kind === 'not_modified');
    const decided = mine.filter((record) => record.kind !== 'released');
    await tx
      .createQueryBuilder()
      .update(CheckStateEntity)
      .set({
        leaseOwner: null,
        leaseUntil: null,
        nextCheckAt: cases.of('next_check_at', decided, (r) => ('nextCheckAt' in r ? r.nextCheckAt : null)),
        etag: cases.of(
          'etag',
          mine.filter((record) => record.kind === 'builds'),
          (r) => (r.kind === 'builds' ? r.etag : null),
        ),
        failureCount: cases.of('failure_count', decided, (r) => (r.kind === 'failed' ? r.failureCount : 0)),
        lastCheckedAt: cases.of('last_checked_at', checked, (r) => ('checkedAt' in r ? r.checkedAt : null)),
        lastCheckAt: cases.of('last_check_at', decided, (r) => ('checkedAt' in r ? r.checkedAt : null)),
        lastCheckFailed: cases.of('last_check_failed', decided, (r) => r.kind === 'failed'),
        lastError: cases.of('last_error', decided, (r) =>
          r.kind === 'failed' ? r.reason.slice(0, MAX_ERROR_LENGTH) : null,
        ),
        workflowDisabled: cases.of(
          'workflow_disabled',
          checked.filter((record) => workflowStateOf(record) !== undefined),
          (r) => workflowStateOf(r) === true,
        ),
      })
      .where('instance_id IN (:...ids)', { ids: mine.map((record) => record.instanceId) })
      .setParameters(cases.parameters)
      .execute();
    return owned;
  }
}
