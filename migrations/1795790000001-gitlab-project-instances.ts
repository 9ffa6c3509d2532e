import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The indexed project key of every GitLab CI instance, for its webhooks in (API.md 18): `{instance
 * url}/{path}` or `{instance url}#{id}`, lower case. No instance can be GitLab's before this
 * migration (the service type arrives with it), so there is nothing to fill.
 */
export class GitlabProjectInstances1795790000001 implements MigrationInterface {
  name = 'GitlabProjectInstances1795790000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'gitlab_project_instances',
        columns: [
          { name: 'instance_id', type: 'integer', isPrimary: true },
          { name: 'project_key', type: 'varchar', length: '255', isNullable: false },
        ],
        indices: [{ name: 'IDX_gitlab_project_instances_key', columnNames: ['project_key'] }],
        foreignKeys: [
          {
            name: 'FK_gitlab_project_instances_instance',
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
    await queryRunner.dropTable('gitlab_project_instances');
  }
}
