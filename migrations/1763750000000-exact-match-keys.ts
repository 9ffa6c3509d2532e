import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Usernames, version labels and service URLs are compared exactly on SQLite; MySQL and
 * MariaDB compare text case-insensitively by default, so `1.0-RC` and `1.0-rc` (or `Alice`
 * and `alice`) would clash there, and a lookup would find the other one. A binary collation
 * without padding (`utf8mb4_bin` ignores trailing spaces, so `alice ` would still be `alice`)
 * makes both databases agree. SQLite's comparisons are binary already.
 */
const EXACT_KEYS: { table: string; column: string; length: string }[] = [
  { table: 'users', column: 'username', length: '256' },
  { table: 'workflow_versions', column: 'version', length: '64' },
  { table: 'test_services', column: 'url', length: '512' },
];

export class ExactMatchKeys1763750000000 implements MigrationInterface {
  name = 'ExactMatchKeys1763750000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (!isMySql(queryRunner)) {
      return;
    }
    const [{ version }] = (await queryRunner.query('SELECT VERSION() AS version')) as { version: string }[];
    // MariaDB's no-pad binary collation; MySQL 8's binary collations of the 0900 family do not pad.
    await this.setCollation(queryRunner, /mariadb/i.test(version) ? 'utf8mb4_nopad_bin' : 'utf8mb4_0900_bin');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (isMySql(queryRunner)) {
      await this.setCollation(queryRunner, undefined);
    }
  }

  private async setCollation(queryRunner: QueryRunner, collation: string | undefined): Promise<void> {
    for (const key of EXACT_KEYS) {
      const table = await queryRunner.getTable(key.table);
      const current = table?.findColumnByName(key.column);
      if (!current) {
        throw new Error(`${key.table}.${key.column} is missing`);
      }
      const changed = current.clone();
      changed.charset = collation ? 'utf8mb4' : undefined;
      changed.collation = collation;
      await queryRunner.changeColumn(key.table, current, new TableColumn(changed));
    }
  }
}

function isMySql(queryRunner: QueryRunner): boolean {
  const type = queryRunner.connection.options.type;
  return type === 'mariadb' || type === 'mysql';
}
