import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

/**
 * API.md 16, "what changed since the last passing build": each build keeps the commit it ran on
 * (`head_sha`, as the CI's listing gives it: null where it gives none), and the last passing build
 * of an instance before a build is one lookup of the (instance_id, status, started_at) index
 * instead of a walk back through its failures.
 */
export class BuildChanges1795780000000 implements MigrationInterface {
  name = 'BuildChanges1795780000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'builds',
      new TableColumn({ name: 'head_sha', type: 'varchar', length: '64', isNullable: true }),
    );
    await queryRunner.createIndex(
      'builds',
      new TableIndex({
        name: 'IDX_builds_instance_status_started',
        columnNames: ['instance_id', 'status', 'started_at'],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await withoutForeignKeysOnSqlite(
      queryRunner,
      async () => {
        await queryRunner.dropIndex('builds', 'IDX_builds_instance_status_started');
        await queryRunner.dropColumn('builds', 'head_sha');
      },
      this.name,
    );
  }
}
