import { Table, TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Test monitoring's check state leaves the registry's tables: the due time, lease, ETag and
 * back-off of each instance move from `test_instances` to `test_check_states`, and a service's
 * rate-limit pause from `test_services.paused_until` to `test_service_pauses`. Every value is
 * copied as it is, both ways.
 */
export class MonitoringCheckState1763800000000 implements MigrationInterface {
  name = 'MonitoringCheckState1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'test_check_states',
        columns: [
          { name: 'instance_id', type: 'integer', isPrimary: true },
          { name: 'service_id', type: 'integer', isNullable: false },
          { name: 'version_id', type: 'integer', isNullable: false },
          ...CHECK_COLUMNS.map(copyOf),
        ],
        indices: [
          { name: 'IDX_test_check_states_due', columnNames: ['next_check_at'] },
          { name: 'IDX_test_check_states_service', columnNames: ['service_id'] },
          { name: 'IDX_test_check_states_version', columnNames: ['version_id'] },
        ],
        foreignKeys: [
          {
            name: 'FK_test_check_states_instance',
            columnNames: ['instance_id'],
            referencedTableName: 'test_instances',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
          {
            name: 'FK_test_check_states_service',
            columnNames: ['service_id'],
            referencedTableName: 'test_services',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
          {
            name: 'FK_test_check_states_version',
            columnNames: ['version_id'],
            referencedTableName: 'workflow_versions',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
    const names = CHECK_COLUMNS.map((column) => column.name);
    await queryRunner.query(
      `INSERT INTO test_check_states (instance_id, service_id, version_id, ${names.join(', ')})
       SELECT i.id, i.service_id, s.version_id, ${names.map((name) => `i.${name}`).join(', ')}
       FROM test_instances i INNER JOIN test_suites s ON s.id = i.suite_id`,
    );
    await queryRunner.createTable(
      new Table({
        name: 'test_service_pauses',
        columns: [
          { name: 'service_id', type: 'integer', isPrimary: true },
          { name: 'paused_until', type: 'datetime', isNullable: false },
        ],
        indices: [{ name: 'IDX_test_service_pauses_until', columnNames: ['paused_until'] }],
        foreignKeys: [
          {
            name: 'FK_test_service_pauses_service',
            columnNames: ['service_id'],
            referencedTableName: 'test_services',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
    await queryRunner.query(
      `INSERT INTO test_service_pauses (service_id, paused_until)
       SELECT id, paused_until FROM test_services WHERE paused_until IS NOT NULL`,
    );
    await queryRunner.dropIndex('test_instances', 'IDX_test_instances_due');
    await queryRunner.dropColumns(
      'test_instances',
      CHECK_COLUMNS.map((column) => column.name),
    );
    await queryRunner.dropColumn('test_services', 'paused_until');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await withoutForeignKeysOnSqlite(queryRunner, () => this.undo(queryRunner));
  }

  private async undo(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'test_services',
      new TableColumn({ name: 'paused_until', type: 'datetime', isNullable: true }),
    );
    await queryRunner.query(
      `UPDATE test_services SET paused_until =
         (SELECT p.paused_until FROM test_service_pauses p WHERE p.service_id = test_services.id)`,
    );
    await queryRunner.dropTable('test_service_pauses');
    // Nullable first (the rows exist already), filled from the check states, then NOT NULL again.
    await queryRunner.addColumns(
      'test_instances',
      CHECK_COLUMNS.map((column) => new TableColumn({ ...copyOf(column), isNullable: true })),
    );
    for (const column of CHECK_COLUMNS) {
      await queryRunner.query(
        `UPDATE test_instances SET ${column.name} =
           (SELECT c.${column.name} FROM test_check_states c WHERE c.instance_id = test_instances.id)`,
      );
    }
    // An instance without a check state (none, unless written between) is due at once.
    await queryRunner.query(
      'UPDATE test_instances SET next_check_at = CURRENT_TIMESTAMP WHERE next_check_at IS NULL',
    );
    await queryRunner.query('UPDATE test_instances SET failure_count = 0 WHERE failure_count IS NULL');
    await queryRunner.query(
      'UPDATE test_instances SET last_check_failed = 0 WHERE last_check_failed IS NULL',
    );
    await queryRunner.changeColumns(
      'test_instances',
      CHECK_COLUMNS.filter((column) => !column.isNullable).map((column) => ({
        oldColumn: new TableColumn({ ...copyOf(column), isNullable: true }),
        newColumn: new TableColumn(copyOf(column)),
      })),
    );
    await queryRunner.createIndex(
      'test_instances',
      new TableIndex({ name: 'IDX_test_instances_due', columnNames: ['next_check_at'] }),
    );
    await queryRunner.dropTable('test_check_states');
  }
}

/** The check-state columns as 1763710000000-create-registry.ts made them in `test_instances`. */
const CHECK_COLUMNS = [
  { name: 'next_check_at', type: 'datetime', isNullable: false },
  { name: 'lease_owner', type: 'varchar', length: '64', isNullable: true },
  { name: 'lease_until', type: 'datetime', isNullable: true },
  { name: 'etag', type: 'varchar', length: '256', isNullable: true },
  { name: 'failure_count', type: 'integer', isNullable: false, default: 0 },
  { name: 'last_checked_at', type: 'datetime', isNullable: true },
  { name: 'last_check_failed', type: 'boolean', isNullable: false, default: 0 },
  { name: 'last_error', type: 'varchar', length: '512', isNullable: true },
] as const;

function copyOf(column: (typeof CHECK_COLUMNS)[number]): {
  name: string;
  type: string;
  length?: string;
  isNullable: boolean;
  default?: number;
} {
  return { ...column };
}

/**
 * Adding columns to `test_instances` rebuilds the table on SQLite (copy, drop, rename), and a
 * DROP TABLE with foreign keys on deletes the builds that reference it by cascade. TypeORM's
 * undo opens its transaction before it turns foreign keys off, where SQLite ignores the pragma;
 * so on SQLite this runs `work` in a transaction of its own with the keys off, checks them
 * before committing, and opens a new transaction for TypeORM to finish in. Later migrations
 * that rebuild `test_instances` on their way down use it too.
 */
export async function withoutForeignKeysOnSqlite(
  queryRunner: QueryRunner,
  work: () => Promise<void>,
  undoing = MonitoringCheckState1763800000000.name,
): Promise<void> {
  if (queryRunner.connection.options.type !== 'better-sqlite3' || !queryRunner.isTransactionActive) {
    return work();
  }
  await queryRunner.commitTransaction();
  await queryRunner.query('PRAGMA foreign_keys = OFF');
  try {
    await queryRunner.startTransaction();
    try {
      await work();
      const broken = (await queryRunner.query('PRAGMA foreign_key_check')) as unknown[];
      if (broken.length > 0) {
        throw new Error(`undoing ${undoing} broke ${broken.length} foreign key(s)`);
      }
      await queryRunner.commitTransaction();
    } catch (error) {
      await queryRunner.rollbackTransaction();
      throw error;
    }
  } finally {
    await queryRunner.query('PRAGMA foreign_keys = ON');
    await queryRunner.startTransaction();
  }
}
