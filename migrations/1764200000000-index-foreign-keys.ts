import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * An index on every foreign key column that had none. InnoDB indexes a foreign key by itself;
 * SQLite does not, so a status read joining suites and instances by their version scanned every
 * instance there. On MariaDB the new index takes over from the one InnoDB made for the key.
 */
export const FOREIGN_KEY_INDEXES: { table: string; index: string; column: string; foreignKey: string }[] = [
  {
    table: 'workflow_versions',
    index: 'IDX_workflow_versions_submitter',
    column: 'submitter_id',
    foreignKey: 'FK_workflow_versions_submitter',
  },
  {
    table: 'test_suites',
    index: 'IDX_test_suites_version',
    column: 'version_id',
    foreignKey: 'FK_test_suites_version',
  },
  {
    table: 'test_instances',
    index: 'IDX_test_instances_suite',
    column: 'suite_id',
    foreignKey: 'FK_test_instances_suite',
  },
  {
    table: 'test_instances',
    index: 'IDX_test_instances_service',
    column: 'service_id',
    foreignKey: 'FK_test_instances_service',
  },
];

export class IndexForeignKeys1764200000000 implements MigrationInterface {
  name = 'IndexForeignKeys1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const key of FOREIGN_KEY_INDEXES) {
      await queryRunner.createIndex(
        key.table,
        new TableIndex({ name: key.index, columnNames: [key.column] }),
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const key of [...FOREIGN_KEY_INDEXES].reverse()) {
      await dropForeignKeyIndex(queryRunner, key.table, key.index, key.foreignKey);
    }
  }
}

/**
 * Drops an index that serves a foreign key. MariaDB refuses to drop the one index a foreign key
 * uses, so there the key goes first and comes back after, with an index of its own again.
 */
export async function dropForeignKeyIndex(
  queryRunner: QueryRunner,
  tableName: string,
  index: string,
  foreignKey: string,
): Promise<void> {
  const type = queryRunner.connection.options.type;
  if (type !== 'mariadb' && type !== 'mysql') {
    await queryRunner.dropIndex(tableName, index);
    return;
  }
  const table = await queryRunner.getTable(tableName);
  const key = table?.foreignKeys.find((candidate) => candidate.name === foreignKey);
  if (!table || !key) {
    throw new Error(`${tableName} has no foreign key ${foreignKey}`);
  }
  await queryRunner.dropForeignKey(table, key);
  await queryRunner.dropIndex(tableName, index);
  await queryRunner.createForeignKey(tableName, key);
}
