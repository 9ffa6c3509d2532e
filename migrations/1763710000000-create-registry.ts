import { Table, type MigrationInterface, type QueryRunner, type TableColumnOptions } from 'typeorm';

const id: TableColumnOptions = {
  name: 'id',
  type: 'integer',
  isPrimary: true,
  isGenerated: true,
  generationStrategy: 'increment',
};
const uuid: TableColumnOptions = { name: 'uuid', type: 'varchar', length: '36', isNullable: false };

export class CreateRegistry1763710000000 implements MigrationInterface {
  name = 'CreateRegistry1763710000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'workflows',
        columns: [
          id,
          uuid,
          { name: 'owner_id', type: 'integer', isNullable: false },
          { name: 'created_at', type: 'datetime', isNullable: false, default: 'CURRENT_TIMESTAMP' },
        ],
        uniques: [{ name: 'UQ_workflows_uuid', columnNames: ['uuid'] }],
        foreignKeys: [
          {
            name: 'FK_workflows_owner',
            columnNames: ['owner_id'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'RESTRICT',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'workflow_versions',
        columns: [
          id,
          uuid,
          { name: 'workflow_id', type: 'integer', isNullable: false },
          { name: 'version', type: 'varchar', length: '64', isNullable: false },
          { name: 'name', type: 'varchar', length: '512', isNullable: false },
          { name: 'roc_link', type: 'varchar', length: '2048', isNullable: false },
          { name: 'archive_sha256', type: 'varchar', length: '64', isNullable: false },
          { name: 'archive_size', type: 'integer', isNullable: false },
          { name: 'submitter_id', type: 'integer', isNullable: false },
          { name: 'registered_at', type: 'datetime', isNullable: false, default: 'CURRENT_TIMESTAMP' },
        ],
        uniques: [
          { name: 'UQ_workflow_versions_uuid', columnNames: ['uuid'] },
          { name: 'UQ_workflow_versions_workflow_version', columnNames: ['workflow_id', 'version'] },
        ],
        indices: [{ name: 'IDX_workflow_versions_archive', columnNames: ['archive_sha256'] }],
        foreignKeys: [
          {
            name: 'FK_workflow_versions_workflow',
            columnNames: ['workflow_id'],
            referencedTableName: 'workflows',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
          {
            name: 'FK_workflow_versions_submitter',
            columnNames: ['submitter_id'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'RESTRICT',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'test_suites',
        columns: [
          id,
          uuid,
          { name: 'version_id', type: 'integer', isNullable: false },
          { name: 'roc_suite', type: 'varchar', length: '512', isNullable: false },
          { name: 'name', type: 'varchar', length: '512', isNullable: true },
          { name: 'definition_path', type: 'varchar', length: '1024', isNullable: true },
          { name: 'engine_type', type: 'varchar', length: '64', isNullable: true },
          { name: 'engine_version', type: 'varchar', length: '64', isNullable: true },
        ],
        uniques: [{ name: 'UQ_test_suites_uuid', columnNames: ['uuid'] }],
        foreignKeys: [
          {
            name: 'FK_test_suites_version',
            columnNames: ['version_id'],
            referencedTableName: 'workflow_versions',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'test_services',
        columns: [
          id,
          uuid,
          { name: 'type', type: 'varchar', length: '16', isNullable: false },
          { name: 'url', type: 'varchar', length: '512', isNullable: false },
          { name: 'paused_until', type: 'datetime', isNullable: true },
        ],
        uniques: [
          { name: 'UQ_test_services_uuid', columnNames: ['uuid'] },
          { name: 'UQ_test_services_type_url', columnNames: ['type', 'url'] },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'test_instances',
        columns: [
          id,
          uuid,
          { name: 'suite_id', type: 'integer', isNullable: false },
          { name: 'service_id', type: 'integer', isNullable: false },
          { name: 'roc_instance', type: 'varchar', length: '512', isNullable: false },
          { name: 'name', type: 'varchar', length: '512', isNullable: true },
          { name: 'resource', type: 'varchar', length: '1024', isNullable: false },
          { name: 'managed', type: 'boolean', isNullable: false, default: 0 },
          { name: 'next_check_at', type: 'datetime', isNullable: false },
          { name: 'lease_owner', type: 'varchar', length: '64', isNullable: true },
          { name: 'lease_until', type: 'datetime', isNullable: true },
          { name: 'etag', type: 'varchar', length: '256', isNullable: true },
          { name: 'failure_count', type: 'integer', isNullable: false, default: 0 },
          { name: 'last_checked_at', type: 'datetime', isNullable: true },
          { name: 'last_check_failed', type: 'boolean', isNullable: false, default: 0 },
          { name: 'last_error', type: 'varchar', length: '512', isNullable: true },
        ],
        uniques: [{ name: 'UQ_test_instances_uuid', columnNames: ['uuid'] }],
        indices: [{ name: 'IDX_test_instances_due', columnNames: ['next_check_at'] }],
        foreignKeys: [
          {
            name: 'FK_test_instances_suite',
            columnNames: ['suite_id'],
            referencedTableName: 'test_suites',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
          {
            name: 'FK_test_instances_service',
            columnNames: ['service_id'],
            referencedTableName: 'test_services',
            referencedColumnNames: ['id'],
            onDelete: 'RESTRICT',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [
      'test_instances',
      'test_services',
      'test_suites',
      'workflow_versions',
      'workflows',
    ]) {
      await queryRunner.dropTable(table);
    }
  }
}
