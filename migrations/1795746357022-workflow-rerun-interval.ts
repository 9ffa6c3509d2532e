import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

/**
 * API.md 11: a workflow's own interval of periodic re-runs, in days (null: the service's
 * RERUN_INTERVAL_DAYS). Indexed: the scheduler reads the intervals in use, and the workflows of
 * each, at every search for due re-runs.
 */
export class WorkflowRerunInterval1795746357022 implements MigrationInterface {
  name = 'WorkflowRerunInterval1795746357022';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'workflows',
      new TableColumn({ name: 'rerun_interval_days', type: 'integer', isNullable: true }),
    );
    await queryRunner.createIndex(
      'workflows',
      new TableIndex({ name: 'IDX_workflows_rerun_interval', columnNames: ['rerun_interval_days'] }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await withoutForeignKeysOnSqlite(
      queryRunner,
      async () => {
        await queryRunner.dropIndex('workflows', 'IDX_workflows_rerun_interval');
        await queryRunner.dropColumn('workflows', 'rerun_interval_days');
      },
      this.name,
    );
  }
}
