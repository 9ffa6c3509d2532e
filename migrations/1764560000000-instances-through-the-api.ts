import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

/**
 * Test instances added through the API (API.md 7.3) have no `@id` in a crate: `roc_instance` is
 * null for them, which is also how the API tells them from the crate's own.
 */
export class InstancesThroughTheApi1764560000000 implements MigrationInterface {
  name = 'InstancesThroughTheApi1764560000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await this.setNullable(queryRunner, true);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Rebuilding test_instances on SQLite must not take the builds and check states along.
    await withoutForeignKeysOnSqlite(
      queryRunner,
      async () => {
        // Instances without a crate @id cannot survive a column that requires one (their builds
        // and check state go with them).
        await queryRunner.query(
          'DELETE FROM builds WHERE instance_id IN (SELECT id FROM test_instances WHERE roc_instance IS NULL)',
        );
        await queryRunner.query(
          'DELETE FROM test_check_states WHERE instance_id IN (SELECT id FROM test_instances WHERE roc_instance IS NULL)',
        );
        await queryRunner.query('DELETE FROM test_instances WHERE roc_instance IS NULL');
        await this.setNullable(queryRunner, false);
      },
      this.name,
    );
  }

  private async setNullable(queryRunner: QueryRunner, nullable: boolean): Promise<void> {
    const table = await queryRunner.getTable('test_instances');
    const current = table?.findColumnByName('roc_instance');
    if (!current) {
      throw new Error('test_instances.roc_instance is missing');
    }
    const changed = current.clone();
    changed.isNullable = nullable;
    await queryRunner.changeColumn('test_instances', current, new TableColumn(changed));
  }
}
