import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, type EntityManager } from 'typeorm';
import type { Viewer } from '../auth/optional-auth.decorator.js';
import { inList } from '../database/plain-entities.js';
import { WorkflowEntity } from './entities/registry.entities.js';
import type { AggregateTestStatus } from './workflow-status-source.js';
import type { WorkflowFilter } from './workflow-list.reader.js';
import { visibleList } from './workflow-lists.service.js';

/** Versions per UPDATE of `record`: well under SQLite's parameter limit. */
const VERSIONS_PER_STATEMENT = 500;

/**
 * Which of a viewer's workflows a wall read takes, as `WorkflowFilter` says it: each side is one
 * equality that leads an index ending with (test_status, latest_version_id); `exclusive` is
 * the own side without the public side's rows, for counting a union once.
 */
interface Side {
  condition: string;
  parameters: number[];
  exclusive: string;
}

function sidesOf(filter: WorkflowFilter): Side[] {
  const own =
    filter.ownerId !== undefined
      ? { column: 'w.owner_id', value: filter.ownerId }
      : filter.registryId !== undefined
        ? { column: 'w.registry_id', value: filter.registryId }
        : undefined;
  const sides: Side[] = [];
  if (own) {
    const condition = `${own.column} = ?`;
    sides.push({
      condition,
      parameters: [own.value],
      exclusive: filter.public ? `${condition} AND w.is_public = 0` : condition,
    });
  }
  if (filter.public) {
    sides.push({ condition: 'w.is_public = 1', parameters: [], exclusive: 'w.is_public = 1' });
  }
  // None: an admin's, every workflow, from the index that leads with the status.
  return sides.length > 0 ? sides : [{ condition: '1 = 1', parameters: [], exclusive: '1 = 1' }];
}

/**
 * The aggregate test status of each version (`workflow_versions.test_status`) and of each
 * workflow's latest version (`workflows.test_status`), stored so that the wall (API.md 5.4) reads
 * its most urgent workflows and its counts from indexes instead of computing every visible
 * workflow's status. Test monitoring computes the statuses and writes them through `record`, in
 * the transaction that recorded the builds; the registry's repository keeps the workflow's copy
 * when its latest version changes (a new version has no builds yet; a deleted one hands over to
 * the one before it).
 */
@Injectable()
export class StoredTestStatuses {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Stores these versions' statuses (by version id) in the caller's transaction, and that of
   * each workflow whose latest version is one of them; rows already holding theirs are not written.
   */
  async record(tx: EntityManager, statuses: ReadonlyMap<number, AggregateTestStatus>): Promise<void> {
    const byStatus = new Map<AggregateTestStatus, number[]>();
    // Sorted, so that two transactions writing the same rows take their locks in one order.
    for (const [versionId, status] of [...statuses].sort(([a], [b]) => a - b)) {
      byStatus.set(status, [...(byStatus.get(status) ?? []), versionId]);
    }
    for (const [status, versionIds] of byStatus) {
      for (let at = 0; at < versionIds.length; at += VERSIONS_PER_STATEMENT) {
        const chunk = versionIds.slice(at, at + VERSIONS_PER_STATEMENT);
        await tx.query(
          `UPDATE workflow_versions SET test_status = ? WHERE id IN (${inList(chunk.length)}) AND test_status <> ?`,
          [status, ...chunk, status],
        );
        await tx.query(
          `UPDATE workflows SET test_status = ?
           WHERE latest_version_id IN (${inList(chunk.length)}) AND test_status <> ?`,
          [status, ...chunk, status],
        );
      }
    }
  }

  /**
   * The first `limit` workflows in `status` of those the viewer may see (as `GET /workflows`
   * shows them), in the list's order, each with its versions. Each side of what they may see
   * (their own, the public ones; an admin: all) takes its first `limit` from its own index and
   * the union is cut to `limit`, as the list reads its pages.
   */
  async latestIn(viewer: Viewer, status: AggregateTestStatus, limit: number): Promise<WorkflowEntity[]> {
    const sides = sidesOf(visibleList(viewer));
    const side = ({ condition }: Side, alias: string) =>
      `SELECT * FROM (SELECT w.id AS id, w.latest_version_id AS latest FROM workflows w
         WHERE ${condition} AND w.test_status = ? AND w.latest_version_id IS NOT NULL
         ORDER BY w.latest_version_id DESC LIMIT ?) ${alias}`;
    const rows = await this.dataSource.query<{ id: number | string }[]>(
      `SELECT u.id AS id FROM (${sides.map((each, index) => side(each, `s${index}`)).join(' UNION ')}) u
       ORDER BY u.latest DESC LIMIT ?`,
      [...sides.flatMap((each) => [...each.parameters, status, limit]), limit],
    );
    const ids = rows.map((row) => Number(row.id));
    if (ids.length === 0) {
      return [];
    }
    const found = await this.dataSource
      .getRepository(WorkflowEntity)
      .find({ where: { id: In(ids) }, relations: { versions: true } });
    const byId = new Map(found.map((workflow) => [workflow.id, workflow]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /**
   * How many of the workflows the viewer may see are in each status (statuses without any are
   * absent), counted on the same indexes as `latestIn`: a workflow both their own and public once.
   */
  async counts(
    viewer: Viewer,
    statuses: readonly AggregateTestStatus[],
  ): Promise<Map<AggregateTestStatus, number>> {
    const counts = new Map<AggregateTestStatus, number>();
    for (const { exclusive, parameters } of sidesOf(visibleList(viewer))) {
      const rows = await this.dataSource.query<{ status: AggregateTestStatus; n: number | string }[]>(
        `SELECT w.test_status AS status, COUNT(*) AS n FROM workflows w
         WHERE ${exclusive} AND w.test_status IN (${inList(statuses.length)}) AND w.latest_version_id IS NOT NULL
         GROUP BY w.test_status`,
        [...parameters, ...statuses],
      );
      for (const row of rows) {
        counts.set(row.status, (counts.get(row.status) ?? 0) + Number(row.n));
      }
    }
    return counts;
  }
}
