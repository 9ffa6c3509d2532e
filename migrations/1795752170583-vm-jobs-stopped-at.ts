import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Usage over a window for all users (an admin's `GET /api/v1/usage`) reads the starts still held or
 * stopped within the window: led by `stopped_at`, that is a range of the index, where `created_at`
 * alone would read every start before the window's end, the whole history.
 */
export class VmJobsStoppedAt1795752170583 implements MigrationInterface {
  name = 'VmJobsStoppedAt1795752170583';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createIndex(
      'vm_jobs',
      new TableIndex({ name: 'IDX_vm_jobs_stopped_at', columnNames: ['stopped_at', 'created_at'] }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('vm_jobs', 'IDX_vm_jobs_stopped_at');
  }
}
