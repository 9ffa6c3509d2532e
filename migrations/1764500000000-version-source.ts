import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

/** The ref and commit a version was registered from, for links naming a GitHub repository (API.md 7.1). */
export class VersionSource1764500000000 implements MigrationInterface {
  name = 'VersionSource1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumns('workflow_versions', [
      new TableColumn({ name: 'source_ref', type: 'varchar', length: '255', isNullable: true }),
      new TableColumn({ name: 'source_commit', type: 'varchar', length: '64', isNullable: true }),
    ]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Dropping a column rebuilds workflow_versions on SQLite: with foreign keys on, its suites and
    // instances would go by cascade.
    await withoutForeignKeysOnSqlite(
      queryRunner,
      async () => {
        await queryRunner.dropColumn('workflow_versions', 'source_commit');
        await queryRunner.dropColumn('workflow_versions', 'source_ref');
      },
      this.name,
    );
  }
}
