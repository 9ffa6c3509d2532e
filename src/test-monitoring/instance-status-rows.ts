import type { EntityManager } from 'typeorm';
import { inList } from '../database/plain-entities.js';
import { rawDate } from '../database/raw-date.js';
import { buildOfRow, type LatestOfInstance, type RawJoinedBuildColumns } from './build-rows.js';
import { toCheckStateView, type CheckStateView, type RawCheckStateView } from './check-state-views.js';
import { FAILURE_COLUMNS } from './failures/stored-failure.js';
import type { BuildStatus } from './testing-services/testing-service.js';
import { latestFinishedSql } from './latest-finished-sql.js';

/** What a status read (of a version or a suite) needs of each of its instances' monitoring. */
export interface InstancesMonitoring {
  /** Latest build and latest finished build (of `finishedStatuses`), of the instances that have builds. */
  latest: Map<number, LatestOfInstance>;
  /** The check state of each instance that has one. */
  states: Map<number, CheckStateView>;
  /**
   * The end of the rate-limit pause of each service of these check states (null: never paused),
   * read with them: a status read needs no statement of its own for the pauses of its services.
   */
  pausedUntil: Map<number, Date | null>;
}

/**
 * BuildsRepository.latestOfInstances and CheckStateRepository.viewsOf in one round trip: each
 * instance's check state row (by primary key) with the ids of its latest build and its latest
 * finished one (correlated subqueries on the (instance_id, started_at) index) and its service's
 * pause (by primary key), then those builds.
 */
export async function monitoringOfInstances(
  manager: EntityManager,
  instanceIds: readonly number[],
  finishedStatuses: readonly BuildStatus[],
): Promise<InstancesMonitoring> {
  const monitoring: InstancesMonitoring = { latest: new Map(), states: new Map(), pausedUntil: new Map() };
  if (instanceIds.length === 0) {
    return monitoring;
  }
  const rows = await manager.query<RawMonitoringRow[]>(
    `SELECT t.version_id AS version_id, t.instance_id AS instance_id, t.last_checked_at AS last_checked_at,
            t.last_check_failed AS last_check_failed, t.last_check_at AS last_check_at, t.last_error AS last_error,
            t.workflow_disabled AS workflow_disabled, t.latest_id AS latest_id, t.finished_id AS finished_id,
            t.service_id AS service_id, t.paused_until AS paused_until,
            b.id AS id, b.build_id AS build_id, b.status AS status, b.started_at AS started_at,
            b.duration_seconds AS duration_seconds, b.url AS url, ${FAILURE_COLUMNS('b')}
     FROM (
       SELECT c.version_id AS version_id, c.instance_id AS instance_id, c.last_checked_at AS last_checked_at,
         c.last_check_failed AS last_check_failed, c.last_check_at AS last_check_at, c.last_error AS last_error,
         c.workflow_disabled AS workflow_disabled, c.service_id AS service_id,
         (SELECT p.paused_until FROM test_service_pauses p WHERE p.service_id = c.service_id) AS paused_until,
         (SELECT x.id FROM builds x WHERE x.instance_id = c.instance_id
           ORDER BY x.started_at DESC, x.id DESC LIMIT 1) AS latest_id,
         ${latestFinishedSql(manager, 'id', 'c.instance_id', finishedStatuses)} AS finished_id
       FROM test_check_states c
       WHERE c.instance_id IN (${inList(instanceIds.length)})
     ) t
     LEFT JOIN builds b ON b.id IN (t.latest_id, t.finished_id)`,
    [...finishedStatuses, ...instanceIds],
  );
  for (const row of rows) {
    const instanceId = Number(row.instance_id);
    if (!monitoring.states.has(instanceId)) {
      monitoring.states.set(instanceId, toCheckStateView(row));
      monitoring.pausedUntil.set(
        Number(row.service_id),
        row.paused_until === null ? null : rawDate(row.paused_until),
      );
    }
    if (row.id === null || row.started_at === null) {
      // No build yet: its check state alone.
      continue;
    }
    const entry = monitoring.latest.get(instanceId) ?? { versionId: Number(row.version_id), instanceId };
    const build = buildOfRow({ ...row, id: row.id, started_at: row.started_at }, instanceId);
    if (Number(row.latest_id) === build.id) {
      entry.latest = build;
    }
    if (row.finished_id !== null && Number(row.finished_id) === build.id) {
      entry.latestFinished = build;
    }
    monitoring.latest.set(instanceId, entry);
  }
  // In the instances' order, as viewsOf's read by primary key gives them: status reads take the
  // first of equally recent checks.
  monitoring.states = new Map([...monitoring.states].sort(([a], [b]) => a - b));
  return monitoring;
}

interface RawMonitoringRow extends RawCheckStateView, RawJoinedBuildColumns {
  version_id: number | string;
  service_id: number | string;
  paused_until: Date | string | null;
  latest_id: number | string | null;
  finished_id: number | string | null;
}
