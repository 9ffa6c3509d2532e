import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

const id = {
  name: 'id',
  type: 'integer',
  isPrimary: true,
  isGenerated: true,
  generationStrategy: 'increment' as const,
};

const cascade = (name: string, column: string, table: string) => ({
  name,
  columnNames: [column],
  referencedTableName: table,
  referencedColumnNames: ['id'],
  onDelete: 'CASCADE',
  onUpdate: 'NO ACTION',
});

/**
 * The OAuth2 authorization server for other applications (API.md 15): the clients people
 * register; a grant per approval, holding its authorization code (as a hash, single use) until
 * exchanged and then standing for the family of tokens issued from it, so that revoking it (a
 * refresh token used twice, a code replayed) takes every one of them; the access and refresh
 * tokens of a grant, as hashes. A grant lives until `expires_at` (its code's 60 s, then its latest
 * refresh token's lifetime), which is what the clean-up deletes by.
 */
export class AuthorizationServer1795810000000 implements MigrationInterface {
  name = 'AuthorizationServer1795810000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'oauth_clients',
        columns: [
          id,
          { name: 'client_id', type: 'varchar', length: '64', isNullable: false },
          { name: 'user_id', type: 'integer', isNullable: false },
          { name: 'name', type: 'varchar', length: '128', isNullable: false },
          { name: 'redirect_uris', type: 'text', isNullable: false },
          { name: 'confidential', type: 'boolean', isNullable: false },
          { name: 'client_secret_hash', type: 'varchar', length: '64', isNullable: true },
          { name: 'created_at', type: 'datetime', isNullable: false, default: 'CURRENT_TIMESTAMP' },
        ],
        uniques: [{ name: 'UQ_oauth_clients_client_id', columnNames: ['client_id'] }],
        indices: [{ name: 'IDX_oauth_clients_user', columnNames: ['user_id'] }],
        foreignKeys: [cascade('FK_oauth_clients_user', 'user_id', 'users')],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'oauth_grants',
        columns: [
          id,
          { name: 'oauth_client_id', type: 'integer', isNullable: false },
          { name: 'user_id', type: 'integer', isNullable: false },
          { name: 'scopes', type: 'varchar', length: '512', isNullable: false },
          { name: 'redirect_uri', type: 'varchar', length: '2048', isNullable: false },
          { name: 'code_hash', type: 'varchar', length: '64', isNullable: false },
          { name: 'code_challenge', type: 'varchar', length: '128', isNullable: true },
          { name: 'code_used_at', type: 'datetime', isNullable: true },
          { name: 'created_at', type: 'datetime', isNullable: false, default: 'CURRENT_TIMESTAMP' },
          { name: 'expires_at', type: 'datetime', isNullable: false },
        ],
        uniques: [{ name: 'UQ_oauth_grants_code', columnNames: ['code_hash'] }],
        indices: [
          { name: 'IDX_oauth_grants_client', columnNames: ['oauth_client_id'] },
          { name: 'IDX_oauth_grants_user', columnNames: ['user_id'] },
          { name: 'IDX_oauth_grants_expiry', columnNames: ['expires_at'] },
        ],
        foreignKeys: [
          cascade('FK_oauth_grants_client', 'oauth_client_id', 'oauth_clients'),
          cascade('FK_oauth_grants_user', 'user_id', 'users'),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'oauth_tokens',
        columns: [
          id,
          { name: 'grant_id', type: 'integer', isNullable: false },
          { name: 'kind', type: 'varchar', length: '8', isNullable: false },
          { name: 'token_hash', type: 'varchar', length: '64', isNullable: false },
          { name: 'scopes', type: 'varchar', length: '512', isNullable: false },
          { name: 'created_at', type: 'datetime', isNullable: false, default: 'CURRENT_TIMESTAMP' },
          { name: 'expires_at', type: 'datetime', isNullable: false },
          { name: 'used_at', type: 'datetime', isNullable: true },
        ],
        uniques: [{ name: 'UQ_oauth_tokens_hash', columnNames: ['token_hash'] }],
        indices: [
          { name: 'IDX_oauth_tokens_grant', columnNames: ['grant_id'] },
          { name: 'IDX_oauth_tokens_expiry', columnNames: ['expires_at'] },
        ],
        foreignKeys: [cascade('FK_oauth_tokens_grant', 'grant_id', 'oauth_grants')],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('oauth_tokens');
    await queryRunner.dropTable('oauth_grants');
    await queryRunner.dropTable('oauth_clients');
  }
}
