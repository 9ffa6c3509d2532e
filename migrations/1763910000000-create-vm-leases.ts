import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Leases of assignments (API.md 8): when each ends, what then happens, and the scheduler's claim. */
export class CreateVmLeases1763910000000 implements MigrationInterface {
  name = 'CreateVmLeases1763910000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'vm_leases',
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
          { name: 'expires_at', type: 'datetime', isNullable: false },
          { name: 'on_expiry', type: 'varchar', length: '16', isNullable: false },
          { name: 'claim_owner', type: 'varchar', length: '64', isNullable: true },
          { name: 'claim_until', type: 'datetime', isNullable: true },
        ],
        uniques: [{ name: 'UQ_vm_leases_node', columnNames: ['cloud', 'node_id'] }],
        indices: [{ name: 'IDX_vm_leases_expires_at', columnNames: ['expires_at'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('vm_leases');
  }
}
