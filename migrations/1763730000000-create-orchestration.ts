import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Area C: the state of dummy clouds, and the assignments of the built-in assignment facility. */
export class CreateOrchestration1763730000000 implements MigrationInterface {
  name = 'CreateOrchestration1763730000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'dummy_clouds',
        columns: [
          { name: 'name', type: 'varchar', length: '64', isPrimary: true },
          { name: 'next_id', type: 'integer', isNullable: false },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'dummy_nodes',
        columns: [
          { name: 'cloud', type: 'varchar', length: '64', isPrimary: true },
          { name: 'node_id', type: 'integer', isPrimary: true },
          { name: 'name', type: 'varchar', length: '255', isNullable: false },
          { name: 'public_ips', type: 'varchar', length: '255', isNullable: false },
          { name: 'extra', type: 'text', isNullable: false },
        ],
        foreignKeys: [
          {
            name: 'FK_dummy_nodes_cloud',
            columnNames: ['cloud'],
            referencedTableName: 'dummy_clouds',
            referencedColumnNames: ['name'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'vm_assignments',
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
          { name: 'active_node_id', type: 'varchar', length: '255', isNullable: true },
          { name: 'hostname', type: 'varchar', length: '255', isNullable: false },
          { name: 'username', type: 'varchar', length: '255', isNullable: false },
          { name: 'vm_type', type: 'varchar', length: '255', isNullable: false },
          { name: 'assigned_at', type: 'datetime', isNullable: false },
          { name: 'released_at', type: 'datetime', isNullable: true },
        ],
        uniques: [{ name: 'UQ_vm_assignments_active_node', columnNames: ['cloud', 'active_node_id'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('vm_assignments');
    await queryRunner.dropTable('dummy_nodes');
    await queryRunner.dropTable('dummy_clouds');
  }
}
