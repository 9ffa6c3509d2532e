import type { EntityManager } from 'typeorm';
import { throughIndex } from '../database/dialect.js';
import type { BuildStatus } from './testing-services/testing-service.js';

/**
 * A correlated subquery giving `column` of the latest finished build (of `finishedStatuses`, as
 * many `?` placeholders, to be bound first) of the instance `instanceColumn`: a backward walk of
 * the (instance_id, started_at) index that stops at the first finished build, one index dive in
 * practice (unfinished builds are the newest few at most).
 *
 * The index is named: on `status IN (...)` MariaDB takes the (instance_id, status, started_at)
 * index, which covers the subquery but gives each status's builds apart, out of start order, and
 * sorts each instance's finished builds (a filesort per instance read).
 */
export function latestFinishedSql(
  manager: EntityManager,
  column: 'id' | 'status',
  instanceColumn: string,
  finishedStatuses: readonly BuildStatus[],
): string {
  const finished = finishedStatuses.map(() => '?').join(', ');
  return `(SELECT y.${column} FROM builds y ${throughIndex(manager, 'IDX_builds_instance_started')}
           WHERE y.instance_id = ${instanceColumn} AND y.status IN (${finished})
           ORDER BY y.started_at DESC, y.id DESC LIMIT 1)`;
}
