import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository, type EntityManager } from 'typeorm';
import { TestInstanceEntity } from '../workflows/entities/test-instance.entity.js';
import { TestServiceEntity } from '../workflows/entities/test-service.entity.js';
import { BuildEntity } from './entities/build.entity.js';
import {
  BUILD_STATUSES,
  isFinishedStatus,
  MAX_BUILD_LIMIT,
  type Build,
  type BuildStatus,
} from './testing-services/testing-service.js';
import { lockRows } from '../database/dialect.js';
import { retryOnDeadlock } from '../database/retry-on-deadlock.js';

/** Builds kept per instance; older ones are dropped when new ones arrive (the API shows at most 100). */
export const MAX_STORED_BUILDS = MAX_BUILD_LIMIT;
/** `last_error` column width. */
const MAX_ERROR_LENGTH = 512;
const FINISHED_STATUSES = BUILD_STATUSES.filter(isFinishedStatus);
/** Instances whose builds one statement reads or writes; bounds the statements' parameters. */
const INSTANCES_PER_STATEMENT = 50;
/** Builds per INSERT (7 values each). */
const ROWS_PER_INSERT = 200;
/** Select-and-lease rounds of one claim. */
const CLAIM_ROUNDS = 3;

/** An instance leased to this copy for one check. */
export interface ClaimedInstance {
  id: number;
  resource: string;
  etag: string | null;
  failureCount: number;
  /** The claim's token, held in `lease_owner`; writes are conditional on it. */
  leaseToken: string;
  service: { id: number; type: string; url: string };
}

/** What one check of a claimed instance changes; every kind also releases the lease. */
export type CheckRecord =
  /** New or changed builds, a fresh ETag (or none), the next regular check. */
  | {
      kind: 'builds';
      instanceId: number;
      leaseToken: string;
      checkedAt: Date;
      nextCheckAt: Date;
      etag: string | null;
      builds: readonly Build[];
    }
  /** 304: nothing but the check bookkeeping changes. */
  | { kind: 'not_modified'; instanceId: number; leaseToken: string; checkedAt: Date; nextCheckAt: Date }
  /** The check failed: builds and ETag stay, the back-off goes into the next check time. */
  | {
      kind: 'failed';
      instanceId: number;
      leaseToken: string;
      failureCount: number;
      nextCheckAt: Date;
      reason: string;
    }
  /** Not checked (its service is paused, or the copy is stopping): still due, free for anyone. */
  | { kind: 'released'; instanceId: number; leaseToken: string };

/** A build of a status read, with the instance it belongs to. */
export interface StoredBuild {
  id: number;
  instanceId: number;
  buildId: string;
  status: BuildStatus;
  startedAt: Date;
  durationSeconds: number;
  url: string;
}

/** An instance's latest build of any state and its latest finished one (absent when it has none). */
export interface LatestOfInstance {
  versionId: number;
  instanceId: number;
  latest?: StoredBuild;
  latestFinished?: StoredBuild;
}

/**
 * All SQL of test monitoring: the check state of instances (leases, due times, ETags,
 * back-off), service pauses, and the builds.
 */
@Injectable()
export class BuildsRepository {
  private claims = 0;

  constructor(
    @InjectRepository(BuildEntity) private readonly builds: Repository<BuildEntity>,
    @InjectRepository(TestInstanceEntity) private readonly instances: Repository<TestInstanceEntity>,
    @InjectRepository(TestServiceEntity) private readonly services: Repository<TestServiceEntity>,
  ) {}

  /**
   * Leases up to `batch` due instances to `owner` for `leaseMs`, the most overdue first, and
   * returns them. Due means `next_check_at <= now`, not leased (or the lease ran out: its copy
   * died), and the service not paused. The lease is one conditional UPDATE, so when several
   * copies race for the same rows each row goes to exactly one of them, on SQLite and MariaDB.
   */
  async claimDue(now: Date, owner: string, batch: number, leaseMs: number): Promise<ClaimedInstance[]> {
    const token = `${owner}#${++this.claims}`.slice(-64);
    const leaseUntil = new Date(now.getTime() + leaseMs);
    let leased = 0;
    // A copy that loses a race for some candidates selects again, so it does not go idle while
    // instances are due; a few rounds are enough, the next tick takes what is left.
    for (let round = 0; round < CLAIM_ROUNDS && leased < batch; round++) {
      const candidates = await this.instances
        .createQueryBuilder('i')
        .innerJoin('i.service', 's')
        .select('i.id', 'id')
        .where('i.nextCheckAt <= :now', { now })
        .andWhere('(i.leaseUntil IS NULL OR i.leaseUntil < :now)', { now })
        .andWhere('(s.pausedUntil IS NULL OR s.pausedUntil <= :now)', { now })
        .orderBy('i.nextCheckAt', 'ASC')
        .addOrderBy('i.id', 'ASC')
        .limit(batch - leased)
        .getRawMany<{ id: number | string }>();
      if (candidates.length === 0) {
        break;
      }
      // Ascending ids: every writer locks rows in one order, so MariaDB cannot deadlock on them.
      const ids = candidates.map((row) => Number(row.id)).sort((a, b) => a - b);
      const result = await retryOnDeadlock(() =>
        this.instances
          .createQueryBuilder()
          .update(TestInstanceEntity)
          .set({ leaseOwner: token, leaseUntil })
          .where('id IN (:...ids)', { ids })
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
    const claimed = await this.instances
      .createQueryBuilder('i')
      .innerJoinAndSelect('i.service', 's')
      .where('i.leaseOwner = :token', { token })
      .orderBy('i.nextCheckAt', 'ASC')
      .addOrderBy('i.id', 'ASC')
      .getMany();
    return claimed.map((instance) => ({
      id: instance.id,
      resource: instance.resource,
      etag: instance.etag,
      failureCount: instance.failureCount,
      leaseToken: token,
      service: {
        id: instance.serviceId,
        type: instance.service?.type ?? '',
        url: instance.service?.url ?? '',
      },
    }));
  }

  /** The build ids stored for each instance (GitHub fetches earlier re-run attempts only once). */
  async buildIdsOf(instanceIds: readonly number[]): Promise<Map<number, Set<string>>> {
    const known = new Map<number, Set<string>>(instanceIds.map((id) => [id, new Set<string>()]));
    if (instanceIds.length === 0) {
      return known;
    }
    const rows = await this.builds
      .createQueryBuilder('b')
      .select('b.instanceId', 'instance_id')
      .addSelect('b.buildId', 'build_id')
      .where('b.instanceId IN (:...ids)', { ids: [...instanceIds] })
      .getRawMany<{ instance_id: number | string; build_id: string }>();
    for (const row of rows) {
      known.get(Number(row.instance_id))?.add(row.build_id);
    }
    return known;
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
      this.instances.manager.transaction(async (tx) => {
        for (let at = 0; at < ordered.length; at += INSTANCES_PER_STATEMENT) {
          const chunk = ordered.slice(at, at + INSTANCES_PER_STATEMENT);
          const owned = await this.updateInstances(tx, chunk);
          const fresh = chunk.flatMap((record) =>
            record.kind === 'builds' && record.builds.length > 0 && owned.has(record.instanceId)
              ? [{ instanceId: record.instanceId, builds: record.builds }]
              : [],
          );
          if (fresh.length > 0) {
            await this.upsertBuilds(tx, fresh);
          }
        }
      }),
    );
  }

  /** Pauses a rate-limited service until `until` (a later pause already set is kept). */
  async pauseService(serviceId: number, until: Date): Promise<void> {
    // Whole seconds, rounded up: MariaDB would cut the milliseconds and end the pause early.
    until = new Date(Math.ceil(until.getTime() / 1000) * 1000);
    await this.services
      .createQueryBuilder()
      .update(TestServiceEntity)
      .set({ pausedUntil: until })
      .where('id = :id', { id: serviceId })
      .andWhere('(paused_until IS NULL OR paused_until < :until)', { until })
      .execute();
  }

  /** Services paused by a rate limit at `now`. */
  pausedServiceCount(now: Date): Promise<number> {
    return this.services.createQueryBuilder('s').where('s.pausedUntil > :now', { now }).getCount();
  }

  /** The instances of a version with their suite and service, suite by suite, in crate order. */
  instancesOfVersion(versionId: number): Promise<TestInstanceEntity[]> {
    return this.instances
      .createQueryBuilder('i')
      .innerJoinAndSelect('i.suite', 'suite')
      .innerJoinAndSelect('i.service', 'service')
      .where('suite.versionId = :versionId', { versionId })
      .orderBy('suite.id', 'ASC')
      .addOrderBy('i.id', 'ASC')
      .getMany();
  }

  /** The instances of a suite with their suite and service. */
  instancesOfSuite(suiteId: number): Promise<TestInstanceEntity[]> {
    return this.instances
      .createQueryBuilder('i')
      .innerJoinAndSelect('i.suite', 'suite')
      .innerJoinAndSelect('i.service', 'service')
      .where('i.suiteId = :suiteId', { suiteId })
      .orderBy('i.id', 'ASC')
      .getMany();
  }

  /** Each instance's latest build and latest finished build, in one query. */
  async latestOfInstances(instanceIds: readonly number[]): Promise<Map<number, LatestOfInstance>> {
    if (instanceIds.length === 0) {
      return new Map();
    }
    const rows = await this.latestRows(`i.id IN (${placeholders(instanceIds.length)})`, instanceIds);
    return new Map(rows.map((row) => [row.instanceId, row]));
  }

  /** Each instance's latest build and latest finished build for many versions, in one query. */
  async latestOfVersions(versionIds: readonly number[]): Promise<LatestOfInstance[]> {
    if (versionIds.length === 0) {
      return [];
    }
    return this.latestRows(`s.version_id IN (${placeholders(versionIds.length)})`, versionIds);
  }

  /** An instance's builds, newest first. */
  async latestBuilds(instanceId: number, limit: number): Promise<StoredBuild[]> {
    const rows = await this.builds.find({
      where: { instanceId },
      order: { startedAt: 'DESC', id: 'DESC' },
      take: limit,
    });
    return rows.map(toStoredBuild);
  }

  async findBuild(instanceId: number, buildId: string): Promise<StoredBuild | undefined> {
    const row = await this.builds.findOneBy({ instanceId, buildId });
    return row ? toStoredBuild(row) : undefined;
  }

  /**
   * Writes the check state of several instances with two statements: which of them this copy
   * still holds (lease token per record), then one UPDATE setting each row's own values through
   * CASE expressions. Returns the ids written.
   */
  private async updateInstances(tx: EntityManager, records: readonly CheckRecord[]): Promise<Set<number>> {
    const byToken = new Map<string, number[]>();
    for (const record of records) {
      byToken.set(record.leaseToken, [...(byToken.get(record.leaseToken) ?? []), record.instanceId]);
    }
    const held = tx.createQueryBuilder(TestInstanceEntity, 'i').select('i.id', 'id');
    const guards: string[] = [];
    const guardParams: Record<string, unknown> = {};
    [...byToken].forEach(([token, ids], index) => {
      guards.push(`(i.leaseOwner = :token${index} AND i.id IN (:...ids${index}))`);
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
      .update(TestInstanceEntity)
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
        lastCheckFailed: cases.of('last_check_failed', decided, (r) => r.kind === 'failed'),
        lastError: cases.of('last_error', decided, (r) =>
          r.kind === 'failed' ? r.reason.slice(0, MAX_ERROR_LENGTH) : null,
        ),
      })
      .where('id IN (:...ids)', { ids: mine.map((record) => record.instanceId) })
      .setParameters(cases.parameters)
      .execute();
    return owned;
  }

  /**
   * Inserts new builds and updates changed ones of several instances with a few statements
   * (the first check of thousands of instances writes tens of thousands of builds), then drops
   * what is beyond MAX_STORED_BUILDS per instance.
   */
  private async upsertBuilds(
    tx: EntityManager,
    fresh: readonly { instanceId: number; builds: readonly Build[] }[],
  ): Promise<void> {
    const instanceIds = fresh.map((entry) => entry.instanceId);
    const buildIds = [...new Set(fresh.flatMap((entry) => entry.builds.map((build) => build.buildId)))];
    const existing = new Map(
      (
        await tx
          .createQueryBuilder(BuildEntity, 'b')
          .where('b.instanceId IN (:...instanceIds)', { instanceIds })
          .andWhere('b.buildId IN (:...buildIds)', { buildIds })
          .getMany()
      ).map((row) => [`${row.instanceId} ${row.buildId}`, row]),
    );
    const inserts: Partial<BuildEntity>[] = [];
    const grown = new Set<number>();
    for (const { instanceId, builds } of fresh) {
      const seen = new Set<string>();
      for (const build of builds) {
        if (seen.has(build.buildId)) {
          continue;
        }
        seen.add(build.buildId);
        const values = {
          status: build.status,
          startedAt: build.startedAt,
          durationSeconds: build.durationSeconds,
          url: build.url.slice(0, 1024),
        };
        const row = existing.get(`${instanceId} ${build.buildId}`);
        if (!row) {
          inserts.push({ instanceId, buildId: build.buildId.slice(0, 64), ...values });
          grown.add(instanceId);
        } else if (!sameBuild(row, values)) {
          await tx.update(BuildEntity, { id: row.id }, values);
        }
      }
    }
    for (let at = 0; at < inserts.length; at += ROWS_PER_INSERT) {
      await tx.insert(BuildEntity, inserts.slice(at, at + ROWS_PER_INSERT));
    }
    if (grown.size === 0) {
      return;
    }
    const ids = [...grown];
    const surplus = await tx.query<{ id: number | string }[]>(
      `SELECT ranked.id AS id FROM (
         SELECT b.id AS id,
           ROW_NUMBER() OVER (PARTITION BY b.instance_id ORDER BY b.started_at DESC, b.id DESC) AS n
         FROM builds b WHERE b.instance_id IN (${placeholders(ids.length)})
       ) ranked WHERE ranked.n > ?`,
      [...ids, MAX_STORED_BUILDS],
    );
    if (surplus.length > 0) {
      await tx.delete(BuildEntity, { id: In(surplus.map((row) => Number(row.id))) });
    }
  }

  private async latestRows(filter: string, params: readonly number[]): Promise<LatestOfInstance[]> {
    const finished = FINISHED_STATUSES.map(() => '?').join(', ');
    // Per instance: the id of its latest build and of its latest finished one (correlated
    // subqueries on the (instance_id, started_at) index), then those builds, in one round trip.
    const sql = `
      SELECT t.version_id AS version_id, t.instance_id AS instance_id,
             t.latest_id AS latest_id, t.finished_id AS finished_id,
             b.id AS id, b.build_id AS build_id, b.status AS status, b.started_at AS started_at,
             b.duration_seconds AS duration_seconds, b.url AS url
      FROM (
        SELECT s.version_id AS version_id, i.id AS instance_id,
          (SELECT x.id FROM builds x WHERE x.instance_id = i.id
            ORDER BY x.started_at DESC, x.id DESC LIMIT 1) AS latest_id,
          (SELECT y.id FROM builds y WHERE y.instance_id = i.id AND y.status IN (${finished})
            ORDER BY y.started_at DESC, y.id DESC LIMIT 1) AS finished_id
        FROM test_instances i
        INNER JOIN test_suites s ON s.id = i.suite_id
        WHERE ${filter}
      ) t
      INNER JOIN builds b ON b.id IN (t.latest_id, t.finished_id)`;
    const rows = await this.builds.query<RawLatestRow[]>(sql, [...FINISHED_STATUSES, ...params]);
    const byInstance = new Map<number, LatestOfInstance>();
    for (const row of rows) {
      const instanceId = Number(row.instance_id);
      const entry = byInstance.get(instanceId) ?? { versionId: Number(row.version_id), instanceId };
      const build: StoredBuild = {
        id: Number(row.id),
        instanceId,
        buildId: String(row.build_id),
        status: toStatus(String(row.status)),
        startedAt: rawDate(row.started_at),
        durationSeconds: Number(row.duration_seconds),
        url: String(row.url),
      };
      if (Number(row.latest_id) === build.id) {
        entry.latest = build;
      }
      if (row.finished_id !== null && Number(row.finished_id) === build.id) {
        entry.latestFinished = build;
      }
      byInstance.set(instanceId, entry);
    }
    return [...byInstance.values()];
  }
}

interface RawLatestRow {
  version_id: number | string;
  instance_id: number | string;
  latest_id: number | string | null;
  finished_id: number | string | null;
  id: number | string;
  build_id: string;
  status: string;
  started_at: Date | string;
  duration_seconds: number | string;
  url: string;
}

/** `CASE id WHEN … THEN … ELSE <column> END` expressions with named parameters, for one UPDATE of many rows. */
class CaseBuilder {
  readonly parameters: Record<string, unknown> = {};
  private next = 0;

  /** The column's new value per record; rows of other records keep theirs. */
  of<R extends CheckRecord>(
    column: string,
    records: readonly R[],
    value: (record: R) => unknown,
  ): () => string {
    if (records.length === 0) {
      return () => column;
    }
    const whens = records.map((record) => {
      const at = this.next++;
      this.parameters[`cid${at}`] = record.instanceId;
      this.parameters[`cval${at}`] = value(record);
      return `WHEN :cid${at} THEN :cval${at}`;
    });
    const sql = `CASE id ${whens.join(' ')} ELSE ${column} END`;
    return () => sql;
  }
}

function placeholders(count: number): string {
  return Array.from({ length: count }, () => '?').join(', ');
}

function toStoredBuild(row: BuildEntity): StoredBuild {
  return {
    id: row.id,
    instanceId: row.instanceId,
    buildId: row.buildId,
    status: toStatus(row.status),
    startedAt: row.startedAt,
    durationSeconds: row.durationSeconds,
    url: row.url,
  };
}

function toStatus(value: string): BuildStatus {
  return (BUILD_STATUSES as readonly string[]).includes(value) ? (value as BuildStatus) : 'error';
}

/** Whole seconds: MariaDB keeps DATETIME to the second, so milliseconds must not count as a change. */
function sameBuild(
  row: BuildEntity,
  values: { status: string; startedAt: Date; durationSeconds: number; url: string },
): boolean {
  return (
    row.status === values.status &&
    Math.floor(row.startedAt.getTime() / 1000) === Math.floor(values.startedAt.getTime() / 1000) &&
    row.durationSeconds === values.durationSeconds &&
    row.url === values.url
  );
}

/** A DATETIME from a raw row: a Date from mysql2, a `YYYY-MM-DD HH:MM:SS[.fff]` UTC string from SQLite. */
export function rawDate(value: Date | string): Date {
  if (value instanceof Date) {
    return value;
  }
  const iso = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/.test(value) ? `${value.replace(' ', 'T')}Z` : value;
  return new Date(iso);
}
