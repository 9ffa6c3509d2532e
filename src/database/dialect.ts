import type {
  DataSource,
  EntityManager,
  EntityTarget,
  ObjectLiteral,
  QueryDeepPartialEntity,
  SelectQueryBuilder,
} from 'typeorm';
import { databaseDeadlineMs } from './database-deadlines.js';
import { DatabaseUnavailableError } from './database-unavailable.js';

/**
 * The few operations whose SQL differs between SQLite and MariaDB, in one place, so that
 * repositories state what they need (lock these rows, hold this name across copies, insert
 * unless present) and never test the database type themselves.
 *
 * On SQLite one write transaction at a time holds the whole database (sqlite-serializer.ts
 * in this process, SQLite's own lock across processes), so row and named locks are nothing
 * there; MariaDB locks rows and names for real, which is what lets several copies of the
 * service share one database.
 */

type Source = DataSource | EntityManager;

function dataSourceOf(source: Source): DataSource {
  return 'manager' in source ? source : source.connection;
}

function onMariaDb(source: Source): boolean {
  return dataSourceOf(source).options.type === 'mariadb';
}

/**
 * Locks the rows the query reads until the transaction ends: `write` (FOR UPDATE) for rows
 * about to be changed, `read` (LOCK IN SHARE MODE) to see rows committed after the
 * transaction's snapshot (InnoDB's consistent reads would not) and keep them from changing.
 */
export function lockRows<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  mode: 'write' | 'read',
): SelectQueryBuilder<T> {
  if (!onMariaDb(query.connection)) {
    return query;
  }
  return query.setLock(mode === 'write' ? 'pessimistic_write' : 'pessimistic_read');
}

/**
 * The index hint, written after a table's alias in FROM, that has the database read the table
 * through `index`: for the reads where MariaDB's cost model takes a covering index that leaves
 * each lookup to be sorted. FORCE INDEX on MariaDB; INDEXED BY on SQLite, which fails the
 * statement rather than read without the index.
 */
export function throughIndex(source: Source, index: string): string {
  return onMariaDb(source) ? `FORCE INDEX (${index})` : `INDEXED BY ${index}`;
}

/** MariaDB lock names are at most 64 characters. */
export const MAX_LOCK_NAME_LENGTH = 64;

/**
 * Runs `work` while holding a lock on `name` that every copy of the service sharing the
 * database respects (MariaDB's GET_LOCK, on a connection of its own, so that `work` may use
 * transactions on others). Throws when the lock is not free within `timeoutSeconds`.
 */
export async function underNamedLock<T>(
  source: Source,
  name: string,
  timeoutSeconds: number,
  work: () => Promise<T>,
): Promise<T> {
  if (!onMariaDb(source)) {
    return work();
  }
  if (name.length > MAX_LOCK_NAME_LENGTH) {
    throw new Error(`lock name longer than ${MAX_LOCK_NAME_LENGTH} characters: ${name}`);
  }
  const dataSource = dataSourceOf(source);
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    // The wait for the lock stays within the deadline of one call, which would otherwise cut it.
    const deadlineMs = databaseDeadlineMs(dataSource);
    const wait =
      deadlineMs === undefined ? timeoutSeconds : Math.min(timeoutSeconds, Math.floor(deadlineMs / 2000));
    const [row] = (await runner.query('SELECT GET_LOCK(?, ?) AS locked', [name, wait])) as {
      locked: number | string | null;
    }[];
    if (Number(row?.locked) !== 1) {
      throw new DatabaseUnavailableError(`could not take the lock ${name} within ${wait} s`);
    }
    try {
      return await work();
    } finally {
      await runner.query('SELECT RELEASE_LOCK(?)', [name]);
    }
  } finally {
    await runner.release();
  }
}

/**
 * Inserts the rows whose primary or unique key is not taken yet and skips the others, in one
 * statement (`INSERT OR IGNORE` on SQLite, `INSERT IGNORE` on MariaDB): when several copies
 * insert the same key at once, exactly one row results and nobody fails.
 */
export async function insertMissing<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  rows: QueryDeepPartialEntity<T>[],
): Promise<void> {
  if (rows.length === 0) {
    return;
  }
  await manager.createQueryBuilder().insert().into(entity).values(rows).orIgnore().execute();
}

/**
 * Adds one to `table.column` in the row whose `keyColumn` is `key` and returns the new value,
 * atomically, so that no two callers in this process or another copy get the same one; undefined
 * when there is no such row. SQLite does it in one `UPDATE … RETURNING`; MariaDB (no RETURNING
 * for UPDATE) in a transaction of its own, the UPDATE holding the row until the read and commit.
 * Table and column names are the caller's constants, never input.
 */
export async function incrementAndRead(
  source: Source,
  table: string,
  column: string,
  keyColumn: string,
  key: string | number,
): Promise<number | undefined> {
  const dataSource = dataSourceOf(source);
  if (!onMariaDb(dataSource)) {
    const rows = await dataSource.query<Record<string, number | string>[]>(
      `UPDATE ${table} SET ${column} = ${column} + 1 WHERE ${keyColumn} = ? RETURNING ${column}`,
      [key],
    );
    return rows[0] === undefined ? undefined : Number(rows[0][column]);
  }
  return dataSource.transaction(async (tx) => {
    await tx.query(`UPDATE ${table} SET ${column} = ${column} + 1 WHERE ${keyColumn} = ?`, [key]);
    const rows = await tx.query<Record<string, number | string>[]>(
      `SELECT ${column} FROM ${table} WHERE ${keyColumn} = ?`,
      [key],
    );
    return rows[0] === undefined ? undefined : Number(rows[0][column]);
  });
}
