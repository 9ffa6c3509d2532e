import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Followed repositories (API.md 12): per workflow registered from a GitHub repository link, what
 * it follows (through the API, or its `.lifemonitor.yaml`) and the polling of its refs; per ref
 * seen, what following it did (a version registered, a failure, a name ignored); and the pause
 * of GitHub's API after a rate limit, shared by every copy.
 */
export class FollowedRepositories1795735901419 implements MigrationInterface {
  name = 'FollowedRepositories1795735901419';

  async up(queryRunner: QueryRunner): Promise<void> {
    const id = {
      name: 'id',
      type: 'integer',
      isPrimary: true,
      isGenerated: true,
      generationStrategy: 'increment' as const,
    };
    const claim = [
      { name: 'claim_owner', type: 'varchar', length: '64', isNullable: true },
      { name: 'claim_until', type: 'datetime', isNullable: true },
    ];
    await queryRunner.createTable(
      new Table({
        name: 'followed_repositories',
        columns: [
          id,
          { name: 'workflow_id', type: 'integer', isNullable: false },
          { name: 'full_name', type: 'varchar', length: '140', isNullable: false },
          { name: 'owner', type: 'varchar', length: '39', isNullable: false },
          { name: 'repo', type: 'varchar', length: '100', isNullable: false },
          { name: 'api_follow', type: 'text', isNullable: true },
          { name: 'file_follow', type: 'text', isNullable: true },
          { name: 'refs_read_at', type: 'datetime', isNullable: true },
          { name: 'refs_etags', type: 'text', isNullable: true },
          { name: 'next_poll_at', type: 'datetime', isNullable: true },
          ...claim,
          { name: 'polled_at', type: 'datetime', isNullable: true },
          { name: 'poll_error', type: 'varchar', length: '1024', isNullable: true },
          { name: 'gone_at', type: 'datetime', isNullable: true },
        ],
        // The unique key on workflow_id is also its foreign key's index.
        uniques: [{ name: 'UQ_followed_repositories_workflow', columnNames: ['workflow_id'] }],
        indices: [
          { name: 'IDX_followed_repositories_full_name', columnNames: ['full_name'] },
          { name: 'IDX_followed_repositories_next_poll', columnNames: ['next_poll_at'] },
        ],
        foreignKeys: [
          {
            name: 'FK_followed_repositories_workflow',
            columnNames: ['workflow_id'],
            referencedTableName: 'workflows',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'followed_refs',
        columns: [
          id,
          { name: 'repository_id', type: 'integer', isNullable: false },
          { name: 'kind', type: 'varchar', length: '8', isNullable: false },
          { name: 'name', type: 'varchar', length: '255', isNullable: false },
          { name: 'commit_sha', type: 'varchar', length: '64', isNullable: true },
          { name: 'state', type: 'varchar', length: '16', isNullable: false },
          { name: 'version', type: 'varchar', length: '64', isNullable: true },
          { name: 'reason', type: 'varchar', length: '1024', isNullable: true },
          { name: 'attempts', type: 'integer', isNullable: false, default: 0 },
          { name: 'next_attempt_at', type: 'datetime', isNullable: true },
          ...claim,
          { name: 'updated_at', type: 'datetime', isNullable: false },
        ],
        // Led by repository_id: also the index of the foreign key.
        uniques: [{ name: 'UQ_followed_refs_ref', columnNames: ['repository_id', 'kind', 'name'] }],
        indices: [
          { name: 'IDX_followed_refs_next_attempt', columnNames: ['next_attempt_at'] },
          { name: 'IDX_followed_refs_recent', columnNames: ['repository_id', 'updated_at'] },
        ],
        foreignKeys: [
          {
            name: 'FK_followed_refs_repository',
            columnNames: ['repository_id'],
            referencedTableName: 'followed_repositories',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'github_api_pauses',
        columns: [
          { name: 'api_url', type: 'varchar', length: '255', isPrimary: true },
          { name: 'paused_until', type: 'datetime', isNullable: false },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('github_api_pauses');
    await queryRunner.dropTable('followed_refs');
    await queryRunner.dropTable('followed_repositories');
  }
}
