import { Injectable } from '@nestjs/common';
import { rawDate } from '../database/raw-date.js';
import { inList } from '../database/plain-entities.js';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository, type EntityManager } from 'typeorm';
import type { RecordedBuild } from './check-results.js';
import { BuildEntity } from './entities/build.entity.js';
import { FAILURE_COLUMNS, failureColumns, failureOfRow } from './failures/stored-failure.js';
import {
  buildOfRow,
  dayOf,
  sameBuild,
  toStatus,
  toStoredBuild,
  type LatestOfInstance,
  type RawBuildColumns,
  type RawJoinedBuildColumns,
  type StoredBuild,
} from './build-rows.js';
import type { KnownBuilds } from './instance-checker.js';
import {
  BUILD_STATUSES,
  isFinishedStatus,
  MAX_BUILD_LIMIT,
  type Build,
} from './testing-services/testing-service.js';
import { listedOfVersions, type ListedOfInstance } from './listed-builds.js';
import { monitoringOfInstances, type InstancesMonitoring } from './instance-status-rows.js';
import { latestFinishedSql } from './latest-finished-sql.js';

/** Builds kept per instance; older ones are dropped when new ones arrive (the API shows at most 100). */
export const MAX_STORED_BUILDS = MAX_BUILD_LIMIT;
const FINISHED_STATUSES = BUILD_STATUSES.filter(isFinishedStatus);
const FAILING_STATUSES = FINISHED_STATUSES.filter((status) => status !== 'passed');
/** Versions per read of latestFinishedOfVersions: well under SQLite's 32,766 parameters. */
const VERSIONS_PER_READ = 1000;
/** Builds per INSERT (8 values each). */
const ROWS_PER_INSERT = 200;

export type { LatestOfInstance, StoredBuild } from './build-rows.js';
export type { ListedOfInstance } from './listed-builds.js';

/** API.md 5.3: an instance's finished builds in a window. */
export interface BuildStats {
  builds: number;
  passed: number;
  failed: number;
  lastPassed: Date | null;
  /** Seconds; the mean of the middle two for an even count; null without builds. */
  medianDuration: number | null;
  /** Runs with a failed attempt followed by a passed one. */
  flaky: number;
}

/** An instance's latest finished build and the finished one before it. */
export interface RecordedBuildPair {
  latest: RecordedBuild;
  previous?: RecordedBuild;
}

/**
 * Test monitoring's builds: the upsert and trim of what checks found (in the check-state
 * writes' transaction, see CheckStateRepository.recordChecks) and the status reads.
 */
@Injectable()
export class BuildsRepository {
  constructor(@InjectRepository(BuildEntity) private readonly builds: Repository<BuildEntity>) {}

  /**
   * The build ids stored for each instance (a client fetches earlier re-run attempts only once),
   * and those with a failure class (their log is never read again).
   */
  async buildIdsOf(instanceIds: readonly number[]): Promise<Map<number, KnownBuilds>> {
    const known = new Map(
      instanceIds.map((id) => [id, { ids: new Set<string>(), classified: new Set<string>() }]),
    );
    if (instanceIds.length === 0) {
      return known;
    }
    const rows = await this.builds
      .createQueryBuilder('b')
      .select('b.instanceId', 'instance_id')
      .addSelect('b.buildId', 'build_id')
      .addSelect('b.failureClass', 'failure_class')
      .where('b.instanceId IN (:...ids)', { ids: [...instanceIds] })
      .getRawMany<{ instance_id: number | string; build_id: string; failure_class: string | null }>();
    for (const row of rows) {
      const entry = known.get(Number(row.instance_id));
      entry?.ids.add(row.build_id);
      if (row.failure_class !== null) {
        entry?.classified.add(row.build_id);
      }
    }
    return known;
  }

  /**
   * The build ids stored as finished for each instance. Asked only for instances that select jobs
   * (API.md 16): their clients read a build's jobs until it is stored finished, never after.
   */
  async finishedBuildIdsOf(instanceIds: readonly number[]): Promise<Map<number, Set<string>>> {
    const finished = new Map<number, Set<string>>(instanceIds.map((id) => [id, new Set<string>()]));
    if (instanceIds.length === 0) {
      return finished;
    }
    const rows = await this.builds
      .createQueryBuilder('b')
      .select('b.instanceId', 'instance_id')
      .addSelect('b.buildId', 'build_id')
      .where('b.instanceId IN (:...ids)', { ids: [...instanceIds] })
      .andWhere('b.status IN (:...finished)', { finished: FINISHED_STATUSES })
      .getRawMany<{ instance_id: number | string; build_id: string }>();
    for (const row of rows) {
      finished.get(Number(row.instance_id))?.add(row.build_id);
    }
    return finished;
  }

  /** Each instance's latest build and latest finished build, in one query. */
  async latestOfInstances(instanceIds: readonly number[]): Promise<Map<number, LatestOfInstance>> {
    if (instanceIds.length === 0) {
      return new Map();
    }
    const rows = await this.latestRows(`c.instance_id IN (${inList(instanceIds.length)})`, instanceIds);
    return new Map(rows.map((row) => [row.instanceId, row]));
  }

  /**
   * Each instance's latest build and latest finished build, and its check state (what
   * CheckStateRepository.viewsOf reads), in one query: a status read's monitoring.
   */
  monitoringOfInstances(instanceIds: readonly number[]): Promise<InstancesMonitoring> {
    return monitoringOfInstances(this.builds.manager, instanceIds, FINISHED_STATUSES);
  }

  /** Each instance's latest build and latest finished build for many versions, in one query. */
  async latestOfVersions(versionIds: readonly number[]): Promise<LatestOfInstance[]> {
    if (versionIds.length === 0) {
      return [];
    }
    return this.latestRows(`c.version_id IN (${inList(versionIds.length)})`, versionIds);
  }

  /** latestOfVersions as a list's batch shows it, in one query (listedOfVersions). */
  listedOfVersions(versionIds: readonly number[]): Promise<ListedOfInstance[]> {
    return listedOfVersions(this.builds.manager, versionIds, FINISHED_STATUSES);
  }

  /**
   * Each instance of these versions with its latest finished build (absent when it has none), by
   * version: one query per VERSIONS_PER_READ versions, on the check states' version index and the
   * builds' (instance_id, started_at) index. Read in `tx` when given.
   */
  async latestFinishedOfVersions(
    versionIds: readonly number[],
    tx: EntityManager = this.builds.manager,
  ): Promise<Map<number, (StoredBuild | undefined)[]>> {
    const byVersion = new Map<number, (StoredBuild | undefined)[]>(versionIds.map((id) => [id, []]));
    const unique = [...new Set(versionIds)];
    for (let at = 0; at < unique.length; at += VERSIONS_PER_READ) {
      const chunk = unique.slice(at, at + VERSIONS_PER_READ);
      const rows = await tx.query<RawFinishedOfVersionRow[]>(
        `SELECT t.version_id AS version_id, t.instance_id AS instance_id, b.id AS id, b.build_id AS build_id,
                b.status AS status, b.started_at AS started_at, b.duration_seconds AS duration_seconds, b.url AS url,
                ${FAILURE_COLUMNS('b')}
         FROM (
           SELECT c.version_id AS version_id, c.instance_id AS instance_id,
             ${latestFinishedSql(tx, 'id', 'c.instance_id', FINISHED_STATUSES)} AS finished_id
           FROM test_check_states c
           WHERE c.version_id IN (${inList(chunk.length)})
         ) t
         LEFT JOIN builds b ON b.id = t.finished_id
         ORDER BY t.instance_id`,
        [...FINISHED_STATUSES, ...chunk],
      );
      for (const row of rows) {
        const instanceId = Number(row.instance_id);
        byVersion
          .get(Number(row.version_id))
          ?.push(
            row.id === null || row.started_at === null
              ? undefined
              : buildOfRow({ ...row, id: row.id, started_at: row.started_at }, instanceId),
          );
      }
    }
    return byVersion;
  }

  /** The versions of these instances (by their check states, in `tx`), each once. */
  async versionsOfInstances(tx: EntityManager, instanceIds: readonly number[]): Promise<number[]> {
    if (instanceIds.length === 0) {
      return [];
    }
    const rows = await tx.query<{ version_id: number | string }[]>(
      `SELECT DISTINCT c.version_id AS version_id FROM test_check_states c
       WHERE c.instance_id IN (${inList(instanceIds.length)})`,
      [...instanceIds],
    );
    return rows.map((row) => Number(row.version_id));
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
   * The instance's latest passed build that started before `startedAt` (API.md 16, what changed
   * since it): one backward step on the (instance_id, status, started_at) index.
   */
  async lastPassingBefore(instanceId: number, startedAt: Date): Promise<StoredBuild | undefined> {
    const row = await this.builds
      .createQueryBuilder('b')
      .where('b.instanceId = :instanceId', { instanceId })
      .andWhere('b.status = :passed', { passed: 'passed' })
      .andWhere('b.startedAt < :startedAt', { startedAt })
      .orderBy('b.startedAt', 'DESC')
      .addOrderBy('b.id', 'DESC')
      .limit(1)
      .getOne();
    return row ? toStoredBuild(row) : undefined;
  }

  /**
   * Each instance's two latest finished builds, read in `tx` (one query, on the
   * (instance_id, started_at) index); instances without a finished build are absent.
   */
  async latestFinished(
    tx: EntityManager,
    instanceIds: readonly number[],
  ): Promise<Map<number, RecordedBuildPair>> {
    const pairs = new Map<number, RecordedBuildPair>();
    if (instanceIds.length === 0) {
      return pairs;
    }
    const finished = FINISHED_STATUSES.map(() => '?').join(', ');
    const rows = await tx.query<RawFinishedRow[]>(
      `SELECT r.instance_id AS instance_id, r.build_id AS build_id, r.status AS status,
              r.started_at AS started_at, r.duration_seconds AS duration_seconds, r.url AS url, r.n AS n,
              ${FAILURE_COLUMNS('r')}
       FROM (
         SELECT b.instance_id AS instance_id, b.build_id AS build_id, b.status AS status,
           b.started_at AS started_at, b.duration_seconds AS duration_seconds, b.url AS url,
           ${FAILURE_COLUMNS('b')},
           ROW_NUMBER() OVER (PARTITION BY b.instance_id ORDER BY b.started_at DESC, b.id DESC) AS n
         FROM builds b
         WHERE b.instance_id IN (${inList(instanceIds.length)}) AND b.status IN (${finished})
       ) r WHERE r.n <= 2 ORDER BY r.instance_id, r.n`,
      [...instanceIds, ...FINISHED_STATUSES],
    );
    for (const row of rows) {
      const instanceId = Number(row.instance_id);
      const build: RecordedBuild = {
        buildId: String(row.build_id),
        status: toStatus(String(row.status)),
        startedAt: rawDate(row.started_at),
        durationSeconds: Number(row.duration_seconds),
        url: String(row.url),
        ...failureOfRow(row),
      };
      const pair = pairs.get(instanceId);
      if (pair) {
        pair.previous = build;
      } else {
        pairs.set(instanceId, { latest: build });
      }
    }
    return pairs;
  }

  /**
   * Pass/fail figures of an instance's finished builds that started at or after `since`
   * (API.md 5.3), in three statements on the (instance_id, started_at) index: counts and last
   * pass; the median duration (window functions); re-runs that failed and then passed, from
   * GitHub's `<run id>_<attempt>` build ids (other services' ids have no `_` and count none).
   */
  async statsOf(instanceId: number, since: Date): Promise<BuildStats> {
    const window = 'b.instance_id = :instanceId AND b.started_at >= :since AND b.status IN (:...finished)';
    const parameters = { instanceId, since, finished: FINISHED_STATUSES, failing: FAILING_STATUSES };
    const [counts] = await this.select<{
      builds: number | string;
      passed: number | string | null;
      failed: number | string | null;
      last_passed: Date | string | null;
    }>(
      `SELECT COUNT(*) AS builds,
         SUM(CASE WHEN b.status = 'passed' THEN 1 ELSE 0 END) AS passed,
         SUM(CASE WHEN b.status IN (:...failing) THEN 1 ELSE 0 END) AS failed,
         MAX(CASE WHEN b.status = 'passed' THEN b.started_at END) AS last_passed
       FROM builds b WHERE ${window}`,
      parameters,
    );
    // The middle one, or the mean of the middle two: the rows n with c <= 2n <= c + 2.
    const [median] = await this.select<{ median: number | string | null }>(
      `SELECT AVG(r.d) AS median FROM (
         SELECT b.duration_seconds AS d,
           ROW_NUMBER() OVER (ORDER BY b.duration_seconds) AS n, COUNT(*) OVER () AS c
         FROM builds b WHERE ${window}
       ) r WHERE 2 * r.n >= r.c AND 2 * r.n <= r.c + 2`,
      parameters,
    );
    const attempt = "SUBSTR(b.build_id, INSTR(b.build_id, '_') + 1) + 0";
    const [flaky] = await this.select<{ flaky: number | string }>(
      `SELECT COUNT(*) AS flaky FROM (
         SELECT MIN(CASE WHEN b.status IN (:...failing) THEN ${attempt} END) AS first_failed,
                MAX(CASE WHEN b.status = 'passed' THEN ${attempt} END) AS last_passed
         FROM builds b WHERE ${window} AND INSTR(b.build_id, '_') > 1
         GROUP BY SUBSTR(b.build_id, 1, INSTR(b.build_id, '_') - 1)
       ) runs WHERE runs.last_passed > runs.first_failed`,
      parameters,
    );
    return {
      builds: Number(counts.builds),
      passed: Number(counts.passed ?? 0),
      failed: Number(counts.failed ?? 0),
      lastPassed: counts.last_passed === null ? null : rawDate(counts.last_passed),
      medianDuration: median === undefined || median.median === null ? null : Number(median.median),
      flaky: Number(flaky.flaky),
    };
  }

  /**
   * Finished builds per UTC day of the given instances since `since`, passing and failing
   * (API.md 5.3): only the days that have some, oldest first, as `YYYY-MM-DD`.
   */
  async dailyCounts(
    instanceIds: readonly number[],
    since: Date,
  ): Promise<{ date: string; passed: number; failed: number }[]> {
    if (instanceIds.length === 0) {
      return [];
    }
    const rows = await this.select<{ day: Date | string; passed: number | string; failed: number | string }>(
      `SELECT DATE(b.started_at) AS day,
         SUM(CASE WHEN b.status = 'passed' THEN 1 ELSE 0 END) AS passed,
         SUM(CASE WHEN b.status IN (:...failing) THEN 1 ELSE 0 END) AS failed
       FROM builds b
       WHERE b.instance_id IN (:...instanceIds) AND b.started_at >= :since AND b.status IN (:...finished)
       GROUP BY DATE(b.started_at)
       ORDER BY day`,
      { instanceIds: [...instanceIds], since, finished: FINISHED_STATUSES, failing: FAILING_STATUSES },
    );
    return rows.map((row) => ({
      date: dayOf(row.day),
      passed: Number(row.passed),
      failed: Number(row.failed),
    }));
  }

  /**
   * `dailyCounts` of the instances of many versions at once, by version (a status page's rows),
   * through the check states' version index.
   */
  async dailyCountsOfVersions(
    versionIds: readonly number[],
    since: Date,
  ): Promise<Map<number, { date: string; passed: number; failed: number }[]>> {
    const byVersion = new Map<number, { date: string; passed: number; failed: number }[]>();
    if (versionIds.length === 0) {
      return byVersion;
    }
    const rows = await this.select<{
      version_id: number | string;
      day: Date | string;
      passed: number | string;
      failed: number | string;
    }>(
      `SELECT c.version_id AS version_id, DATE(b.started_at) AS day,
         SUM(CASE WHEN b.status = 'passed' THEN 1 ELSE 0 END) AS passed,
         SUM(CASE WHEN b.status IN (:...failing) THEN 1 ELSE 0 END) AS failed
       FROM test_check_states c
       INNER JOIN builds b ON b.instance_id = c.instance_id
       WHERE c.version_id IN (:...versionIds) AND b.started_at >= :since AND b.status IN (:...finished)
       GROUP BY c.version_id, DATE(b.started_at)`,
      { versionIds: [...versionIds], since, finished: FINISHED_STATUSES, failing: FAILING_STATUSES },
    );
    for (const row of rows) {
      const versionId = Number(row.version_id);
      const days = byVersion.get(versionId) ?? [];
      days.push({ date: dayOf(row.day), passed: Number(row.passed), failed: Number(row.failed) });
      byVersion.set(versionId, days);
    }
    return byVersion;
  }

  /** Raw SQL with named parameters, which the driver writes as its dialect wants (dates too). */
  private select<T>(sql: string, parameters: Record<string, unknown>): Promise<T[]> {
    const [query, values] = this.builds.manager.connection.driver.escapeQueryWithParameters(sql, parameters);
    return this.builds.query<T[]>(query, values);
  }

  /**
   * Inserts new builds and updates changed ones of several instances with a few statements
   * (the first check of thousands of instances writes tens of thousands of builds), then drops
   * what is beyond MAX_STORED_BUILDS per instance.
   */
  async upsertBuilds(
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
          headSha: build.headSha?.slice(0, 64) ?? null,
          ...failureColumns(build),
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
         FROM builds b WHERE b.instance_id IN (${inList(ids.length)})
       ) ranked WHERE ranked.n > ?`,
      [...ids, MAX_STORED_BUILDS],
    );
    if (surplus.length > 0) {
      await tx.delete(BuildEntity, { id: In(surplus.map((row) => Number(row.id))) });
    }
  }

  /** Forgets every build of an instance, in the caller's transaction. */
  async removeOf(tx: EntityManager, instanceId: number): Promise<void> {
    await tx.delete(BuildEntity, { instanceId });
  }

  private async latestRows(filter: string, params: readonly number[]): Promise<LatestOfInstance[]> {
    // Per instance (its check state row, by primary key or the version index): the id of its
    // latest build and of its latest finished one (correlated subqueries on the (instance_id, started_at) index), then
    // those builds, in one round trip.
    const sql = `
      SELECT t.version_id AS version_id, t.instance_id AS instance_id, t.latest_id AS latest_id, t.finished_id AS finished_id,
             b.id AS id, b.build_id AS build_id, b.status AS status, b.started_at AS started_at,
             b.duration_seconds AS duration_seconds, b.url AS url, ${FAILURE_COLUMNS('b')}
      FROM (
        SELECT c.version_id AS version_id, c.instance_id AS instance_id,
          (SELECT x.id FROM builds x WHERE x.instance_id = c.instance_id
            ORDER BY x.started_at DESC, x.id DESC LIMIT 1) AS latest_id,
          ${latestFinishedSql(this.builds.manager, 'id', 'c.instance_id', FINISHED_STATUSES)} AS finished_id
        FROM test_check_states c
        WHERE ${filter}
      ) t
      INNER JOIN builds b ON b.id IN (t.latest_id, t.finished_id)`;
    const rows = await this.builds.query<RawLatestRow[]>(sql, [...FINISHED_STATUSES, ...params]);
    const byInstance = new Map<number, LatestOfInstance>();
    for (const row of rows) {
      const instanceId = Number(row.instance_id);
      const entry = byInstance.get(instanceId) ?? { versionId: Number(row.version_id), instanceId };
      const build = buildOfRow(row, instanceId);
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

interface RawFinishedRow extends Omit<RawBuildColumns, 'id'> {
  instance_id: number | string;
  n: number | string;
}

interface RawFinishedOfVersionRow extends RawJoinedBuildColumns {
  version_id: number | string;
  instance_id: number | string;
}

interface RawLatestRow extends RawBuildColumns {
  version_id: number | string;
  instance_id: number | string;
  latest_id: number | string | null;
  finished_id: number | string | null;
}
