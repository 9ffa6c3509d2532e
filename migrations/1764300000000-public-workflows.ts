import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

/**
 * Public workflows (API.md 5.1): readable by anybody. `GET /workflows` and the status page read
 * a page of the public ones (beside the caller's own, IDX_workflows_owner_latest) and an admin's
 * page of all, each in the list's order, from these indexes.
 */
export class PublicWorkflows1764300000000 implements MigrationInterface {
  name = 'PublicWorkflows1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'workflows',
      new TableColumn({ name: 'is_public', type: 'boolean', isNullable: false, default: 0 }),
    );
    await queryRunner.createIndices('workflows', [
      new TableIndex({
        name: 'IDX_workflows_public_latest',
        columnNames: ['is_public', 'latest_version_id'],
      }),
      new TableIndex({ name: 'IDX_workflows_latest', columnNames: ['latest_version_id'] }),
    ]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('workflows', 'IDX_workflows_latest');
    await queryRunner.dropIndex('workflows', 'IDX_workflows_public_latest');
    // Dropping a column rebuilds workflows on SQLite: with foreign keys on, its versions, suites
    // and instances would go by cascade.
    await withoutForeignKeysOnSqlite(
      queryRunner,
      () => queryRunner.dropColumn('workflows', 'is_public'),
      this.name,
    );
  }
}
