import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

export class CreateBuilds1763720000000 implements MigrationInterface {
  name = 'CreateBuilds1763720000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'builds',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'instance_id', type: 'integer', isNullable: false },
          { name: 'build_id', type: 'varchar', length: '64', isNullable: false },
          { name: 'status', type: 'varchar', length: '16', isNullable: false },
          { name: 'started_at', type: 'datetime', isNullable: false },
          { name: 'duration_seconds', type: 'integer', isNullable: false },
          { name: 'url', type: 'varchar', length: '1024', isNullable: false },
        ],
        uniques: [{ name: 'UQ_builds_instance_build', columnNames: ['instance_id', 'build_id'] }],
        indices: [{ name: 'IDX_builds_instance_started', columnNames: ['instance_id', 'started_at'] }],
        foreignKeys: [
          {
            name: 'FK_builds_instance',
            columnNames: ['instance_id'],
            referencedTableName: 'test_instances',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('builds');
  }
}
