import { Table, TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

/**
 * Repository checks (API.md 12): the issues found at a version's registration, one row per
 * issue type and version; and, on a test instance the crate left uncheckable (no resource, or one
 * its service cannot check), why it is never checked.
 */
export class VersionIssues1795730871956 implements MigrationInterface {
  name = 'VersionIssues1795730871956';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'workflow_version_issues',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'version_id', type: 'integer', isNullable: false },
          { name: 'issue_type', type: 'varchar', length: '128', isNullable: false },
          { name: 'name', type: 'varchar', length: '256', isNullable: false },
          { name: 'description', type: 'varchar', length: '2048', isNullable: false },
          { name: 'severity', type: 'varchar', length: '16', isNullable: false },
        ],
        // Led by version_id: it is also the index of the foreign key, and of the reads by version.
        uniques: [{ name: 'UQ_workflow_version_issues_type', columnNames: ['version_id', 'issue_type'] }],
        foreignKeys: [
          {
            name: 'FK_workflow_version_issues_version',
            columnNames: ['version_id'],
            referencedTableName: 'workflow_versions',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
    await queryRunner.addColumn(
      'test_instances',
      new TableColumn({ name: 'unchecked_reason', type: 'varchar', length: '512', isNullable: true }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Dropping a column rebuilds test_instances on SQLite: with foreign keys on, its builds and
    // check states would go by cascade.
    await withoutForeignKeysOnSqlite(
      queryRunner,
      () => queryRunner.dropColumn('test_instances', 'unchecked_reason'),
      this.name,
    );
    await queryRunner.dropTable('workflow_version_issues');
  }
}
