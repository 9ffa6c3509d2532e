import type { EntityManager } from 'typeorm';
import type { LastCheck } from '../workflows/index.js';
import { inList } from '../database/plain-entities.js';
import { buildOfRow, toStatus, type RawBuildColumns, type StoredBuild } from './build-rows.js';
import { lastCheckOfRow, type RawLastCheck } from './check-state-views.js';
import { FAILURE_COLUMNS } from './failures/stored-failure.js';
import type { BuildStatus } from './testing-services/testing-service.js';
import { latestFinishedSql } from './latest-finished-sql.js';

/** An instance's latest build, the status of its latest finished one, and its last check. */
export interface ListedOfInstance {
  versionId: number;
  instanceId: number;
  latest: StoredBuild;
  finishedStatus?: BuildStatus;
  lastCheck: LastCheck | null;
}

/**
 * BuildsRepository.latestOfVersions as a list's batch shows it, in one query: each instance's
 * latest build whole, only the status of its latest finished one (of `finishedStatuses`), and its
 * last check (from the same check state row). An instance without builds is left out, as
 * latestOfVersions leaves it out.
 */
export async function listedOfVersions(
  manager: EntityManager,
  versionIds: readonly number[],
  finishedStatuses: readonly BuildStatus[],
): Promise<ListedOfInstance[]> {
  if (versionIds.length === 0) {
    return [];
  }
  const rows = await manager.query<RawListedRow[]>(
    `SELECT t.version_id AS version_id, t.instance_id AS instance_id, t.finished_status AS finished_status,
            t.last_check_at AS last_check_at, t.last_check_failed AS last_check_failed, t.last_error AS last_error,
            b.id AS id, b.build_id AS build_id, b.status AS status, b.started_at AS started_at,
            b.duration_seconds AS duration_seconds, b.url AS url, ${FAILURE_COLUMNS('b')}
     FROM (
       SELECT c.version_id AS version_id, c.instance_id AS instance_id, c.last_check_at AS last_check_at,
         c.last_check_failed AS last_check_failed, c.last_error AS last_error,
         (SELECT x.id FROM builds x WHERE x.instance_id = c.instance_id
           ORDER BY x.started_at DESC, x.id DESC LIMIT 1) AS latest_id,
         ${latestFinishedSql(manager, 'status', 'c.instance_id', finishedStatuses)} AS finished_status
       FROM test_check_states c
       WHERE c.version_id IN (${inList(versionIds.length)})
     ) t
     INNER JOIN builds b ON b.id = t.latest_id`,
    [...finishedStatuses, ...versionIds],
  );
  return rows.map((row) => {
    const instanceId = Number(row.instance_id);
    return {
      versionId: Number(row.version_id),
      instanceId,
      latest: buildOfRow(row, instanceId),
      finishedStatus: row.finished_status === null ? undefined : toStatus(row.finished_status),
      lastCheck: lastCheckOfRow(row),
    };
  });
}

interface RawListedRow extends RawLastCheck, RawBuildColumns {
  version_id: number | string;
  instance_id: number | string;
  finished_status: string | null;
}
