import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

/** Build states that are a verdict, as they were when this ran. */
const FINISHED = ['passed', 'failed', 'error', 'aborted'];
/** Versions per UPDATE: well under SQLite's parameter limit. */
const CHUNK = 500;

const INDEXES = [
  new TableIndex({ name: 'IDX_workflows_status_latest', columnNames: ['test_status', 'latest_version_id'] }),
  new TableIndex({
    name: 'IDX_workflows_public_status_latest',
    columnNames: ['is_public', 'test_status', 'latest_version_id'],
  }),
  new TableIndex({
    name: 'IDX_workflows_owner_status_latest',
    columnNames: ['owner_id', 'test_status', 'latest_version_id', 'is_public'],
  }),
  new TableIndex({
    name: 'IDX_workflows_registry_status_latest',
    columnNames: ['registry_id', 'test_status', 'latest_version_id', 'is_public'],
  }),
];

/**
 * API.md 5.4: the wall reads its most urgent workflows and its counts from indexes. Each version
 * stores its aggregate test status (kept by test monitoring where builds are recorded or
 * forgotten and instances deleted), and each workflow its latest version's (kept by registration
 * and version deletion), indexed by who may see it, status and the list's order. Filled here from
 * the builds as the status reads compute it: per instance its latest finished build; none:
 * not_available; else all passing, all failing, or some passing.
 */
export class StoredTestStatuses1795770000000 implements MigrationInterface {
  name = 'StoredTestStatuses1795770000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = () =>
      new TableColumn({
        name: 'test_status',
        type: 'varchar',
        length: '16',
        isNullable: false,
        default: "'not_available'",
      });
    await queryRunner.addColumn('workflow_versions', column());
    await queryRunner.addColumn('workflows', column());
    const rows = (await queryRunner.query(
      `SELECT c.version_id AS version_id,
         (SELECT b.status FROM builds b WHERE b.instance_id = c.instance_id AND b.status IN (${FINISHED.map(() => '?').join(', ')})
           ORDER BY b.started_at DESC, b.id DESC LIMIT 1) AS status
       FROM test_check_states c`,
      FINISHED,
    )) as { version_id: number | string; status: string | null }[];
    const verdicts = new Map<number, { passing: number; failing: number }>();
    for (const row of rows) {
      const verdict = verdicts.get(Number(row.version_id)) ?? { passing: 0, failing: 0 };
      if (row.status === 'passed') {
        verdict.passing += 1;
      } else if (row.status !== null) {
        verdict.failing += 1;
      }
      verdicts.set(Number(row.version_id), verdict);
    }
    const byStatus = new Map<string, number[]>();
    for (const [versionId, { passing, failing }] of verdicts) {
      const status =
        passing + failing === 0
          ? 'not_available'
          : failing === 0
            ? 'all_passing'
            : passing === 0
              ? 'all_failing'
              : 'some_passing';
      byStatus.set(status, [...(byStatus.get(status) ?? []), versionId]);
    }
    byStatus.delete('not_available');
    for (const [status, ids] of byStatus) {
      for (let at = 0; at < ids.length; at += CHUNK) {
        const chunk = ids.slice(at, at + CHUNK);
        await queryRunner.query(
          `UPDATE workflow_versions SET test_status = ? WHERE id IN (${chunk.map(() => '?').join(', ')})`,
          [status, ...chunk],
        );
      }
    }
    await queryRunner.query(
      `UPDATE workflows SET test_status =
         (SELECT v.test_status FROM workflow_versions v WHERE v.id = workflows.latest_version_id)
       WHERE latest_version_id IS NOT NULL`,
    );
    await queryRunner.createIndices('workflows', INDEXES);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await withoutForeignKeysOnSqlite(
      queryRunner,
      async () => {
        for (const index of INDEXES) {
          await queryRunner.dropIndex('workflows', index.name ?? '');
        }
        await queryRunner.dropColumn('workflows', 'test_status');
        await queryRunner.dropColumn('workflow_versions', 'test_status');
      },
      this.name,
    );
  }
}
