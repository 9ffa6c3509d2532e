import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

/**
 * API.md 11: the search for due periodic re-runs reads, per interval, only the instances due,
 * from one index: `rerun_interval_days` is the instance's workflow's (null: RERUN_INTERVAL_DAYS),
 * kept by the registration and by `PUT /workflows/{uuid}`, and `rerun_from` the later of its latest
 * build's start and its last trigger (null without builds: nothing to re-run), kept where builds
 * are recorded and triggers taken. An instance is due when `rerun_from` is its interval ago.
 */
export class RerunSearchKeys1795760000000 implements MigrationInterface {
  name = 'RerunSearchKeys1795760000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumns('test_check_states', [
      new TableColumn({ name: 'rerun_interval_days', type: 'integer', isNullable: true }),
      new TableColumn({ name: 'rerun_from', type: 'datetime', isNullable: true }),
    ]);
    await queryRunner.query(
      `UPDATE test_check_states SET rerun_interval_days =
         (SELECT w.rerun_interval_days FROM workflow_versions v INNER JOIN workflows w ON w.id = v.workflow_id
          WHERE v.id = test_check_states.version_id)`,
    );
    const latest =
      'SELECT MAX(b.started_at) FROM builds b WHERE b.instance_id = test_check_states.instance_id';
    await queryRunner.query(
      `UPDATE test_check_states SET rerun_from = CASE
         WHEN last_trigger_at IS NOT NULL AND last_trigger_at > (${latest}) THEN last_trigger_at
         ELSE (${latest}) END`,
    );
    await queryRunner.createIndex(
      'test_check_states',
      new TableIndex({
        name: 'IDX_test_check_states_rerun',
        columnNames: ['rerun_interval_days', 'rerun_from'],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await withoutForeignKeysOnSqlite(
      queryRunner,
      async () => {
        await queryRunner.dropIndex('test_check_states', 'IDX_test_check_states_rerun');
        await queryRunner.dropColumn('test_check_states', 'rerun_from');
        await queryRunner.dropColumn('test_check_states', 'rerun_interval_days');
      },
      this.name,
    );
  }
}
