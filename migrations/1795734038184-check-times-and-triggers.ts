import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

/**
 * API.md 11: every instance reply says when it was last checked and, when that check failed, why
 * (`last_check`), so a failed check records its time too: `last_check_at` is the last check's
 * time whatever its outcome (`last_checked_at` stays the last successful one). `last_trigger_at`
 * is when a build was last triggered on the instance's CI service, the one trigger per instance
 * per 10 minutes that every copy of the service honours, and the start of the next periodic
 * re-run's interval.
 */
export class CheckTimesAndTriggers1795734038184 implements MigrationInterface {
  name = 'CheckTimesAndTriggers1795734038184';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumns('test_check_states', [
      new TableColumn({ name: 'last_check_at', type: 'datetime', isNullable: true }),
      new TableColumn({ name: 'last_trigger_at', type: 'datetime', isNullable: true }),
    ]);
    // A failed check's time was not kept: such rows show no last check until their next one.
    await queryRunner.query(
      'UPDATE test_check_states SET last_check_at = last_checked_at WHERE last_check_failed = 0',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await withoutForeignKeysOnSqlite(
      queryRunner,
      async () => {
        await queryRunner.dropColumn('test_check_states', 'last_trigger_at');
        await queryRunner.dropColumn('test_check_states', 'last_check_at');
      },
      this.name,
    );
  }
}
