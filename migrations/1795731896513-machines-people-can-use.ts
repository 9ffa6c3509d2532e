import { Table, TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Area C's machines people can use (API.md 13): every start recorded with its owner, size and stop
 * (vm_jobs), quotas per user, the public addresses the service attached, the dummy clouds' key pairs.
 */
export class MachinesPeopleCanUse1795731896513 implements MigrationInterface {
  name = 'MachinesPeopleCanUse1795731896513';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumns('vm_jobs', [
      new TableColumn({
        name: 'owner_name',
        type: 'varchar',
        length: '256',
        isNullable: false,
        default: "''",
      }),
      new TableColumn({ name: 'vcpus', type: 'integer', isNullable: false, default: 0 }),
      new TableColumn({ name: 'ram_mib', type: 'integer', isNullable: false, default: 0 }),
      new TableColumn({ name: 'stopped_at', type: 'datetime', isNullable: true }),
    ]);
    // A job that failed before its node existed holds nothing.
    await queryRunner.query(
      "UPDATE vm_jobs SET stopped_at = created_at WHERE state = 'failed' AND node_id IS NULL",
    );
    await queryRunner.createIndices('vm_jobs', [
      new TableIndex({ name: 'IDX_vm_jobs_owner_stopped', columnNames: ['owner_id', 'stopped_at'] }),
      new TableIndex({ name: 'IDX_vm_jobs_cloud_node', columnNames: ['cloud', 'node_id'] }),
      new TableIndex({ name: 'IDX_vm_jobs_created_at', columnNames: ['created_at'] }),
    ]);
    await queryRunner.createTable(
      new Table({
        name: 'user_quotas',
        columns: [
          { name: 'user_id', type: 'integer', isPrimary: true },
          { name: 'max_nodes', type: 'integer', isNullable: true },
          { name: 'max_vcpus', type: 'integer', isNullable: true },
          { name: 'max_ram_mib', type: 'integer', isNullable: true },
        ],
        foreignKeys: [
          {
            name: 'FK_user_quotas_user',
            columnNames: ['user_id'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'vm_addresses',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'cloud', type: 'varchar', length: '64', isNullable: false },
          { name: 'node_id', type: 'varchar', length: '255', isNullable: false },
          { name: 'address', type: 'varchar', length: '64', isNullable: true },
          { name: 'created_at', type: 'datetime', isNullable: false },
        ],
        uniques: [{ name: 'UQ_vm_addresses_node', columnNames: ['cloud', 'node_id'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'dummy_key_pairs',
        columns: [
          { name: 'cloud', type: 'varchar', length: '64', isPrimary: true },
          { name: 'name', type: 'varchar', length: '255', isPrimary: true },
          { name: 'fingerprint', type: 'varchar', length: '128', isNullable: false },
          { name: 'public_key', type: 'text', isNullable: false },
        ],
        foreignKeys: [
          {
            name: 'FK_dummy_key_pairs_cloud',
            columnNames: ['cloud'],
            referencedTableName: 'dummy_clouds',
            referencedColumnNames: ['name'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('dummy_key_pairs');
    await queryRunner.dropTable('vm_addresses');
    await queryRunner.dropTable('user_quotas');
    for (const index of ['IDX_vm_jobs_created_at', 'IDX_vm_jobs_cloud_node', 'IDX_vm_jobs_owner_stopped']) {
      await queryRunner.dropIndex('vm_jobs', index);
    }
    for (const column of ['stopped_at', 'ram_mib', 'vcpus', 'owner_name']) {
      await queryRunner.dropColumn('vm_jobs', column);
    }
  }
}
