import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/** API keys (API.md 7.3): a visible prefix to find the row by, a keyed hash of the key, an optional expiry. */
export class CreateApiKeys1764550000000 implements MigrationInterface {
  name = 'CreateApiKeys1764550000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'api_keys',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'user_id', type: 'integer', isNullable: false },
          { name: 'name', type: 'varchar', length: '128', isNullable: false },
          { name: 'prefix', type: 'varchar', length: '16', isNullable: false },
          { name: 'key_hash', type: 'varchar', length: '64', isNullable: false },
          { name: 'created_at', type: 'datetime', isNullable: false, default: 'CURRENT_TIMESTAMP' },
          { name: 'expires_at', type: 'datetime', isNullable: true },
        ],
        uniques: [{ name: 'UQ_api_keys_prefix', columnNames: ['prefix'] }],
        indices: [{ name: 'IDX_api_keys_user', columnNames: ['user_id'] }],
        foreignKeys: [
          {
            name: 'FK_api_keys_user',
            columnNames: ['user_id'],
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
    await queryRunner.dropTable('api_keys');
  }
}
