import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

/**
 * API.md 16: a status is stale while the CI has switched the instance's workflow off (GitHub's
 * `disabled_*` states). The state is read only now and then (after a changed runs listing, else
 * once per period), so what was read last is kept with the instance's check state for the status
 * reads in between. Unknown until read: false.
 */
export class CiWorkflowDisabled1795940291861 implements MigrationInterface {
  name = 'CiWorkflowDisabled1795940291861';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'test_check_states',
      new TableColumn({ name: 'workflow_disabled', type: 'boolean', isNullable: false, default: 0 }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await withoutForeignKeysOnSqlite(
      queryRunner,
      () => queryRunner.dropColumn('test_check_states', 'workflow_disabled'),
      this.name,
    );
  }
}
