import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

export class CreateUsers1763700000000 implements MigrationInterface {
  name = 'CreateUsers1763700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'users',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'username', type: 'varchar', length: '256', isNullable: false },
          { name: 'password_hash', type: 'varchar', length: '255', isNullable: false },
          { name: 'roles', type: 'varchar', length: '64', isNullable: false },
          { name: 'active', type: 'boolean', isNullable: false, default: 1 },
          { name: 'created_at', type: 'datetime', isNullable: false, default: 'CURRENT_TIMESTAMP' },
          { name: 'updated_at', type: 'datetime', isNullable: false, default: 'CURRENT_TIMESTAMP' },
        ],
        uniques: [{ name: 'UQ_users_username', columnNames: ['username'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'revoked_tokens',
        columns: [
          { name: 'jti', type: 'varchar', length: '36', isPrimary: true },
          { name: 'expires_at', type: 'datetime', isNullable: false },
        ],
        indices: [{ name: 'IDX_revoked_tokens_expires_at', columnNames: ['expires_at'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('revoked_tokens');
    await queryRunner.dropTable('users');
  }
}
