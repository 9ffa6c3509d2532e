import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Sign-in with identity providers (API.md 15): the identities linked to accounts, one per
 * (provider, subject), and the sign-ins under way (a state, its PKCE verifier and nonce, for at
 * most ten minutes) kept in the database so that any copy of the service can finish a sign-in
 * another copy started, and a state is used once.
 */
export class SignInIdentities1795800000000 implements MigrationInterface {
  name = 'SignInIdentities1795800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'identities',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'provider', type: 'varchar', length: '32', isNullable: false },
          { name: 'subject', type: 'varchar', length: '255', isNullable: false },
          { name: 'user_id', type: 'integer', isNullable: false },
          { name: 'username', type: 'varchar', length: '256', isNullable: true },
          { name: 'email', type: 'varchar', length: '320', isNullable: true },
          { name: 'linked_at', type: 'datetime', isNullable: false, default: 'CURRENT_TIMESTAMP' },
          { name: 'last_used_at', type: 'datetime', isNullable: true },
        ],
        uniques: [{ name: 'UQ_identities_subject', columnNames: ['provider', 'subject'] }],
        indices: [{ name: 'IDX_identities_user', columnNames: ['user_id'] }],
        foreignKeys: [
          {
            name: 'FK_identities_user',
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
        name: 'sign_in_flows',
        columns: [
          { name: 'state_hash', type: 'varchar', length: '64', isPrimary: true },
          { name: 'provider', type: 'varchar', length: '32', isNullable: false },
          { name: 'code_verifier', type: 'varchar', length: '128', isNullable: false },
          { name: 'nonce', type: 'varchar', length: '128', isNullable: false },
          { name: 'next', type: 'varchar', length: '512', isNullable: false },
          { name: 'link_user_id', type: 'integer', isNullable: true },
          { name: 'expires_at', type: 'datetime', isNullable: false },
        ],
        indices: [
          { name: 'IDX_sign_in_flows_expiry', columnNames: ['expires_at'] },
          { name: 'IDX_sign_in_flows_link_user', columnNames: ['link_user_id'] },
        ],
        foreignKeys: [
          {
            name: 'FK_sign_in_flows_link_user',
            columnNames: ['link_user_id'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('sign_in_flows');
    await queryRunner.dropTable('identities');
  }
}
