import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

/**
 * API.md 18: a followed repository is on one of several hosts (or instances of one). `site`
 * says which (where its pages are), every row so far being GitHub's; an owner may be a group path
 * (`group/subgroup`), longer than GitHub's 39 characters, and the lower-case `owner/repo` with it.
 */
export class RepositoryHosts1795790000000 implements MigrationInterface {
  name = 'RepositoryHosts1795790000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'followed_repositories',
      new TableColumn({
        name: 'site',
        type: 'varchar',
        length: '255',
        isNullable: false,
        default: "'https://github.com'",
      }),
    );
    await this.setLengths(queryRunner, { owner: '255', full_name: '356' });
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Only GitHub's rows fit the table as it was.
    await queryRunner.query("DELETE FROM followed_repositories WHERE site <> 'https://github.com'");
    await this.setLengths(queryRunner, { owner: '39', full_name: '140' });
    await withoutForeignKeysOnSqlite(
      queryRunner,
      () => queryRunner.dropColumn('followed_repositories', 'site'),
      this.name,
    );
  }

  /**
   * MySQL and MariaDB widen in place (TypeORM's changeColumn would drop and add the columns there,
   * their values and index with them); SQLite rebuilds the table, whose refs must not go with the old one.
   */
  private async setLengths(queryRunner: QueryRunner, lengths: Record<string, string>): Promise<void> {
    const type = queryRunner.connection.options.type;
    if (type === 'mariadb' || type === 'mysql') {
      const changes = Object.entries(lengths).map(
        ([name, length]) => `MODIFY \`${name}\` varchar(${length}) NOT NULL`,
      );
      await queryRunner.query(`ALTER TABLE \`followed_repositories\` ${changes.join(', ')}`);
      return;
    }
    await withoutForeignKeysOnSqlite(
      queryRunner,
      async () => {
        const table = await queryRunner.getTable('followed_repositories');
        const changes = Object.entries(lengths).map(([name, length]) => {
          const current = table?.findColumnByName(name);
          if (!current) {
            throw new Error(`followed_repositories.${name} is missing`);
          }
          const changed = current.clone();
          changed.length = length;
          return { oldColumn: current, newColumn: new TableColumn(changed) };
        });
        await queryRunner.changeColumns('followed_repositories', changes);
      },
      this.name,
    );
  }
}
