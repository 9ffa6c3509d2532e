import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Managed test instances (API.md 17): the runs the service's own runners run, and what each
 * runner last said it can run.
 *
 * A run is queued with everything a runner needs to run it without the registry (the crate's
 * archive, the suite's definition and engine, the executor), so that runners need the database and
 * the crate store only. `due_at` is set while a runner should take it (queued, or running under a
 * claim that may run out) and null once it ended: claims read the `due_at` index only. A run's
 * build id is `m-<id>`; its log tail is a file beside the crate store's (runs-logs/), not a
 * column: MariaDB's TEXT stops at 64 KiB and MAX_LOG_BYTES is 1 MiB. `changed_at` is when its
 * status last changed: the API's copies read it to check the instance at once.
 */
export class ManagedRuns1795820000000 implements MigrationInterface {
  name = 'ManagedRuns1795820000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'managed_runs',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'instance_id', type: 'integer', isNullable: false },
          { name: 'executor', type: 'varchar', length: '64', isNullable: false },
          { name: 'engine', type: 'varchar', length: '64', isNullable: true },
          { name: 'archive_sha256', type: 'varchar', length: '64', isNullable: false },
          { name: 'definition_path', type: 'varchar', length: '1024', isNullable: true },
          { name: 'workflow_url', type: 'varchar', length: '2048', isNullable: true },
          { name: 'status', type: 'varchar', length: '16', isNullable: false },
          { name: 'reason', type: 'varchar', length: '512', isNullable: true },
          { name: 'exit_code', type: 'integer', isNullable: true },
          { name: 'queued_at', type: 'datetime', isNullable: false },
          { name: 'started_at', type: 'datetime', isNullable: true },
          { name: 'finished_at', type: 'datetime', isNullable: true },
          { name: 'changed_at', type: 'datetime', isNullable: false },
          { name: 'due_at', type: 'datetime', isNullable: true },
          { name: 'claim_owner', type: 'varchar', length: '64', isNullable: true },
          { name: 'claim_until', type: 'datetime', isNullable: true },
          { name: 'attempts', type: 'integer', isNullable: false, default: 0 },
          { name: 'handle', type: 'varchar', length: '255', isNullable: true },
          { name: 'cancel_requested', type: 'boolean', isNullable: false, default: 0 },
        ],
        indices: [
          // An instance's runs newest first (its builds), and the foreign key's index.
          { name: 'IDX_managed_runs_instance', columnNames: ['instance_id', 'id'] },
          { name: 'IDX_managed_runs_due', columnNames: ['due_at'] },
          { name: 'IDX_managed_runs_changed', columnNames: ['changed_at'] },
        ],
        foreignKeys: [
          {
            name: 'FK_managed_runs_instance',
            columnNames: ['instance_id'],
            referencedTableName: 'test_instances',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'managed_runners',
        columns: [
          { name: 'id', type: 'varchar', length: '64', isPrimary: true },
          { name: 'executor', type: 'varchar', length: '64', isNullable: false },
          { name: 'engines', type: 'text', isNullable: false },
          { name: 'seen_at', type: 'datetime', isNullable: false },
        ],
        indices: [{ name: 'IDX_managed_runners_seen', columnNames: ['seen_at'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('managed_runners');
    await queryRunner.dropTable('managed_runs');
  }
}
