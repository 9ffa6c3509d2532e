import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Rows written per INSERT of the backfill. */
const BATCH = 200;

/**
 * The indexed `owner/repo/workflow` key of every GitHub Actions instance, for webhooks in
 * (API.md 6.5), filled for the instances registered before it. The key's rule is copied here on
 * purpose: a migration is the schema as it was when it ran.
 */
export class GithubWorkflowInstances1764400000001 implements MigrationInterface {
  name = 'GithubWorkflowInstances1764400000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'github_workflow_instances',
        columns: [
          { name: 'instance_id', type: 'integer', isPrimary: true },
          { name: 'workflow_key', type: 'varchar', length: '255', isNullable: false },
        ],
        indices: [{ name: 'IDX_github_workflow_instances_key', columnNames: ['workflow_key'] }],
        foreignKeys: [
          {
            name: 'FK_github_workflow_instances_instance',
            columnNames: ['instance_id'],
            referencedTableName: 'test_instances',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
    const rows = (await queryRunner.query(
      `SELECT i.id AS id, i.resource AS resource FROM test_instances i
       INNER JOIN test_services s ON s.id = i.service_id WHERE s.type = 'github'`,
    )) as { id: number | string; resource: string }[];
    const keyed = rows.flatMap((row) => {
      const match = /^repos\/([^/]+)\/([^/]+)\/actions\/workflows\/([^/]+)$/.exec(row.resource);
      const key = match ? `${match[1]}/${match[2]}/${match[3]}`.toLowerCase() : undefined;
      return key && key.length <= 255 ? [[Number(row.id), key] as const] : [];
    });
    for (let at = 0; at < keyed.length; at += BATCH) {
      const batch = keyed.slice(at, at + BATCH);
      await queryRunner.query(
        `INSERT INTO github_workflow_instances (instance_id, workflow_key) VALUES ${batch.map(() => '(?, ?)').join(', ')}`,
        batch.flat(),
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('github_workflow_instances');
  }
}
