import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

/**
 * The badge token of a workflow (API.md 5.2): its SHA-256, against which badge requests are
 * checked, and the token sealed with a key derived from JWT_SECRET, so that its owner can read it
 * again (a database alone does not give it away). Both null while the workflow has none.
 */
export class BadgeTokens1764300000001 implements MigrationInterface {
  name = 'BadgeTokens1764300000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumns('workflows', [
      new TableColumn({ name: 'badge_token_sha256', type: 'varchar', length: '64', isNullable: true }),
      new TableColumn({ name: 'badge_token_sealed', type: 'varchar', length: '255', isNullable: true }),
    ]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Dropping a column rebuilds workflows on SQLite: with foreign keys on, its versions, suites
    // and instances would go by cascade.
    await withoutForeignKeysOnSqlite(
      queryRunner,
      async () => {
        await queryRunner.dropColumn('workflows', 'badge_token_sealed');
        await queryRunner.dropColumn('workflows', 'badge_token_sha256');
      },
      this.name,
    );
  }
}
