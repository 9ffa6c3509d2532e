import { Table, TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

const id = {
  name: 'id',
  type: 'integer',
  isPrimary: true,
  isGenerated: true,
  generationStrategy: 'increment' as const,
};

/**
 * Registries (API.md 10.1): the registries and their OAuth2 client, the tokens issued to them,
 * the local identities of their users (and a user's own link to a registry, with the personal
 * token sealed); on workflows, the registry a workflow came from and its id there; on versions,
 * the registry's page of the version (`links.origin`). The workflow's registry is not a foreign
 * key: the registries feature clears it when it deletes a registry (registries know workflows
 * through the registry's exports, never the other way round).
 */
export class Registries1795735080206 implements MigrationInterface {
  name = 'Registries1795735080206';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'registries',
        columns: [
          id,
          { name: 'uuid', type: 'varchar', length: '36', isNullable: false },
          { name: 'name', type: 'varchar', length: '128', isNullable: false },
          { name: 'type', type: 'varchar', length: '16', isNullable: false },
          { name: 'uri', type: 'varchar', length: '2048', isNullable: false },
          { name: 'client_id', type: 'varchar', length: '64', isNullable: false },
          { name: 'client_secret_hash', type: 'varchar', length: '64', isNullable: false },
          { name: 'user_id', type: 'integer', isNullable: false },
          { name: 'created_at', type: 'datetime', isNullable: false, default: 'CURRENT_TIMESTAMP' },
        ],
        uniques: [
          { name: 'UQ_registries_uuid', columnNames: ['uuid'] },
          { name: 'UQ_registries_name', columnNames: ['name'] },
          { name: 'UQ_registries_client', columnNames: ['client_id'] },
          // Also the index of the foreign key.
          { name: 'UQ_registries_user', columnNames: ['user_id'] },
        ],
        foreignKeys: [
          {
            name: 'FK_registries_user',
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
        name: 'registry_tokens',
        columns: [
          id,
          { name: 'registry_id', type: 'integer', isNullable: false },
          { name: 'token_hash', type: 'varchar', length: '64', isNullable: false },
          { name: 'scopes', type: 'varchar', length: '512', isNullable: false },
          { name: 'created_at', type: 'datetime', isNullable: false, default: 'CURRENT_TIMESTAMP' },
          { name: 'expires_at', type: 'datetime', isNullable: false },
        ],
        uniques: [{ name: 'UQ_registry_tokens_hash', columnNames: ['token_hash'] }],
        indices: [
          { name: 'IDX_registry_tokens_registry', columnNames: ['registry_id'] },
          { name: 'IDX_registry_tokens_expiry', columnNames: ['expires_at'] },
        ],
        foreignKeys: [
          {
            name: 'FK_registry_tokens_registry',
            columnNames: ['registry_id'],
            referencedTableName: 'registries',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'registry_identities',
        columns: [
          id,
          { name: 'registry_id', type: 'integer', isNullable: false },
          { name: 'user_id', type: 'integer', isNullable: false },
          { name: 'external_id', type: 'varchar', length: '64', isNullable: true },
          { name: 'token_sealed', type: 'varchar', length: '1024', isNullable: true },
          { name: 'created_at', type: 'datetime', isNullable: false, default: 'CURRENT_TIMESTAMP' },
        ],
        uniques: [
          // Led by registry_id: also the index of that foreign key, and of the registry's user list.
          { name: 'UQ_registry_identities_user', columnNames: ['registry_id', 'user_id'] },
          { name: 'UQ_registry_identities_external', columnNames: ['registry_id', 'external_id'] },
        ],
        indices: [{ name: 'IDX_registry_identities_user', columnNames: ['user_id'] }],
        foreignKeys: [
          {
            name: 'FK_registry_identities_registry',
            columnNames: ['registry_id'],
            referencedTableName: 'registries',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
          {
            name: 'FK_registry_identities_user',
            columnNames: ['user_id'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
    await queryRunner.addColumns('workflows', [
      new TableColumn({ name: 'registry_id', type: 'integer', isNullable: true }),
      new TableColumn({ name: 'registry_identifier', type: 'varchar', length: '64', isNullable: true }),
    ]);
    await queryRunner.createIndex(
      'workflows',
      new TableIndex({
        name: 'IDX_workflows_registry_latest',
        columnNames: ['registry_id', 'latest_version_id'],
      }),
    );
    await queryRunner.addColumn(
      'workflow_versions',
      new TableColumn({ name: 'origin_link', type: 'varchar', length: '2048', isNullable: true }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Dropping columns rebuilds the tables on SQLite: with foreign keys on, their children would go by cascade.
    await withoutForeignKeysOnSqlite(
      queryRunner,
      async () => {
        await queryRunner.dropColumn('workflow_versions', 'origin_link');
        await queryRunner.dropIndex('workflows', 'IDX_workflows_registry_latest');
        await queryRunner.dropColumn('workflows', 'registry_identifier');
        await queryRunner.dropColumn('workflows', 'registry_id');
      },
      this.name,
    );
    await queryRunner.dropTable('registry_identities');
    await queryRunner.dropTable('registry_tokens');
    await queryRunner.dropTable('registries');
  }
}
