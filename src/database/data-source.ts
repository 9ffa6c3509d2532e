import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { boundDatabaseCalls } from './database-deadlines.js';
import { DatabaseOutage } from './database-unavailable.js';
import { MIGRATIONS } from './migrations.js';
import { underNamedLock } from './dialect.js';
import { bindNumbersOnSqlite } from './sqlite-parameters.js';
import { sqliteDriver } from './sqlite-driver.js';
import { serializeSqliteTransactions } from './sqlite-serializer.js';

/**
 * TypeORM's options, and the deadline of one call (see boundDatabaseCalls on MariaDB; on SQLite,
 * the longest wait for the connection's lock), which TypeORM ignores (its own
 * `maxQueryExecutionTime` would also print every slower query). How long start-up keeps trying
 * to reach it rides along in startup.ts's StartingDataSourceOptions.
 */
export type AppDataSourceOptions = DataSourceOptions & { callDeadlineMs?: number };

/**
 * SQLite's page cache, in KiB (its default is 2 MiB). At 100,000 workflows the indexes a status
 * read walks no longer fit in 2 MiB, so their pages came from the OS, a read() each, and the read
 * cost ~15-25 % more than at 1,000 (`npm run bench -- scale`). 32 MiB holds those indexes; it is
 * not 64 because a whole list read at 100,000 workflows reads every table, and the cache it filled
 * added its whole size to the RSS (`npm run bench -- speed`: 81-88 MiB of growth at 64, goal < 64).
 * Pages are cached as they are read, so a small database never uses it all.
 */
export const SQLITE_CACHE_KIB = 32 * 1024;

/** TypeORM options for the configured database. `synchronize` is off: the schema comes from migrations only. */
export function dataSourceOptions(config: AppConfig): AppDataSourceOptions {
  const common = {
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
  } as const;
  const database = config.database;
  if (database.type === 'sqlite') {
    if (database.path !== ':memory:') {
      mkdirSync(dirname(database.path), { recursive: true });
    }
    return {
      ...common,
      type: 'better-sqlite3',
      driver: sqliteDriver(),
      database: database.path,
      enableWAL: true,
      prepareDatabase: (db: { pragma(source: string): unknown }) => {
        // Negative: a size in KiB rather than in pages.
        db.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
      },
      // Waits for a writer in another connection instead of failing at once with SQLITE_BUSY.
      timeout: config.databaseTimeoutMs,
      callDeadlineMs: config.databaseTimeoutMs,
    };
  }
  return {
    ...common,
    type: 'mariadb',
    url: database.url,
    charset: 'utf8mb4',
    timezone: 'Z',
    connectTimeout: config.databaseTimeoutMs,
    extra: { connectionLimit: 20 },
    callDeadlineMs: config.databaseTimeoutMs,
  };
}

/**
 * Runs pending migrations. On MariaDB several copies may start at once, so they take a
 * named lock first: the first runs the migrations, the others then find nothing to do.
 */
export async function runMigrations(dataSource: DataSource): Promise<void> {
  await underNamedLock(dataSource, 'app_migrations', 120, async () => {
    await dataSource.runMigrations({ transaction: 'each' });
  });
}

/** Opens the database and brings its schema up to date. */
export async function openDataSource(options: AppDataSourceOptions): Promise<DataSource> {
  const dataSource = new DataSource(options);
  await dataSource.initialize();
  if (options.type === 'better-sqlite3') {
    bindNumbersOnSqlite(dataSource);
    serializeSqliteTransactions(dataSource, options.callDeadlineMs);
  }
  try {
    await runMigrations(dataSource);
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  // After the migrations, whose lock may rightly be waited for longer than one call's deadline.
  if (options.type === 'mariadb' && options.callDeadlineMs !== undefined) {
    boundDatabaseCalls(dataSource, options.callDeadlineMs, new DatabaseOutage());
  }
  return dataSource;
}

/**
 * Reverts the last migration. On SQLite with foreign keys off around it, as TypeORM's own runs
 * have them: TypeORM changes a SQLite column by copying its table and dropping the old one, and
 * its own switch comes inside the revert's transaction, where SQLite ignores it, so the drop
 * cascaded into every row that referenced the table (a revert of a column on `workflows`
 * deleted every version).
 */
export async function revertLastMigration(dataSource: DataSource): Promise<void> {
  const sqlite = dataSource.options.type === 'better-sqlite3';
  if (sqlite) {
    await dataSource.query('PRAGMA foreign_keys = OFF');
  }
  try {
    await dataSource.undoLastMigration({ transaction: 'each' });
  } finally {
    if (sqlite) {
      await dataSource.query('PRAGMA foreign_keys = ON');
    }
  }
}
