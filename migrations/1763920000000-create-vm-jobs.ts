import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Asynchronous starts (API.md 8): one row per job, followed by the job poller. */
export class CreateVmJobs1763920000000 implements MigrationInterface {
  name = 'CreateVmJobs1763920000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'vm_jobs',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'cloud', type: 'varchar', length: '64', isNullable: false },
          { name: 'owner_id', type: 'integer', isNullable: false },
          { name: 'state', type: 'varchar', length: '16', isNullable: false },
          { name: 'request', type: 'text', isNullable: false },
          { name: 'node_id', type: 'varchar', length: '255', isNullable: true },
          { name: 'node', type: 'text', isNullable: true },
          { name: 'error', type: 'varchar', length: '1024', isNullable: true },
          { name: 'polls', type: 'integer', isNullable: false, default: 0 },
          { name: 'next_poll_at', type: 'datetime', isNullable: true },
          { name: 'claim_owner', type: 'varchar', length: '64', isNullable: true },
          { name: 'claim_until', type: 'datetime', isNullable: true },
          { name: 'created_at', type: 'datetime', isNullable: false },
        ],
        indices: [{ name: 'IDX_vm_jobs_next_poll_at', columnNames: ['next_poll_at'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('vm_jobs');
  }
}
