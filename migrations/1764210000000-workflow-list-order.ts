import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { dropForeignKeyIndex } from './1764200000000-index-foreign-keys.js';

/**
 * The list's order on the workflow row: `latest_version_id`, the id of its most recently
 * registered version (ids grow with registration), kept by registration and version deletion
 * in their transactions. With the index (owner_id, latest_version_id) a page of an owner's
 * list reads only its own rows, instead of grouping every version of the owner's workflows.
 * Not a foreign key: it is an order, and a key back to the versions would make the two
 * tables depend on each other.
 */
export class WorkflowListOrder1764210000000 implements MigrationInterface {
  name = 'WorkflowListOrder1764210000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'workflows',
      new TableColumn({ name: 'latest_version_id', type: 'integer', isNullable: true }),
    );
    await queryRunner.query(
      `UPDATE workflows SET latest_version_id =
         (SELECT MAX(v.id) FROM workflow_versions v WHERE v.workflow_id = workflows.id)`,
    );
    await queryRunner.createIndex(
      'workflows',
      new TableIndex({ name: 'IDX_workflows_owner_latest', columnNames: ['owner_id', 'latest_version_id'] }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropForeignKeyIndex(queryRunner, 'workflows', 'IDX_workflows_owner_latest', 'FK_workflows_owner');
    const type = queryRunner.connection.options.type;
    if (type === 'mariadb' || type === 'mysql') {
      await queryRunner.dropColumn('workflows', 'latest_version_id');
      return;
    }
    // TypeORM drops a SQLite column by copying the table and dropping the old one, and a revert
    // runs with foreign keys on: dropping `workflows` would cascade into every version. SQLite
    // (3.35 and later) drops an unindexed column in place.
    await queryRunner.query('ALTER TABLE workflows DROP COLUMN latest_version_id');
  }
}
