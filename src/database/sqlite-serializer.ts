import type { DataSource, QueryRunner } from 'typeorm';

/**
 * TypeORM's better-sqlite3 driver hands every caller one shared QueryRunner on one
 * connection. Two requests in transactions at once then nest as savepoints of a single
 * transaction, and any other request's query runs inside whichever transaction is open: a
 * rollback of one request silently drops another's writes. This gives each caller its own
 * runner (still on the one connection, sharing its prepared statements) and a lock that an
 * open transaction holds until it ends: other queries and transactions wait for it, as they
 * would for SQLite's own write lock on a second connection.
 */
export const SQLITE_LOCK_WAIT_MS = 10_000;

class ConnectionLock {
  private holder?: QueryRunner;
  private waiters: (() => void)[] = [];

  constructor(private readonly waitMs: number) {}

  /** Waits until no other runner holds the lock; a holder passes straight through. */
  async waitTurn(runner: QueryRunner, take: boolean): Promise<void> {
    const deadline = Date.now() + this.waitMs;
    while (this.holder !== undefined && this.holder !== runner) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        // A transaction that waits on a query outside itself would otherwise hang for ever.
        throw Object.assign(
          new Error(`SQLITE_BUSY: the database was locked by a transaction for ${this.waitMs} ms`),
          { code: 'SQLITE_BUSY' },
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    if (take) {
      this.holder = runner;
    }
  }

  heldBy(runner: QueryRunner): boolean {
    return this.holder === runner;
  }

  release(runner: QueryRunner): void {
    if (this.holder !== runner) {
      return;
    }
    this.holder = undefined;
    for (const wake of this.waiters.splice(0)) {
      wake();
    }
  }
}

interface SqliteRunner extends QueryRunner {
  transactionDepth: number;
  isTransactionActive: boolean;
  stmtCache: Map<string, unknown>;
}

/** The better-sqlite3 connection: whether SQLite itself still has a transaction open. */
interface SqliteConnection {
  inTransaction: boolean;
  exec(sql: string): unknown;
}

/**
 * Installs the per-caller runners and the transaction lock on a better-sqlite3 DataSource.
 *
 * The lock is held from BEGIN until the outermost transaction has ended in SQLite, whatever
 * way it ends: a COMMIT that fails (SQLITE_FULL on a full disk rolls the transaction back
 * inside SQLite, and TypeORM's ROLLBACK then fails in turn, "no transaction is active"), a
 * ROLLBACK that fails, or a runner released with its transaction still open. Each of these
 * used to leave the lock held, so every later query waited for it and failed with
 * SQLITE_BUSY until the process restarted.
 */
export function serializeSqliteTransactions(dataSource: DataSource, lockWaitMs = SQLITE_LOCK_WAIT_MS): void {
  const driver = dataSource.driver;
  const shared = driver.createQueryRunner('master') as SqliteRunner;
  const Runner = shared.constructor as new (driverInstance: unknown) => SqliteRunner;
  const lock = new ConnectionLock(lockWaitMs);
  const connection = (): SqliteConnection =>
    (driver as typeof driver & { databaseConnection: SqliteConnection }).databaseConnection;

  driver.createQueryRunner = () => {
    const runner = new Runner(driver);
    runner.stmtCache = shared.stmtCache;
    const query = runner.query.bind(runner);
    const start = runner.startTransaction.bind(runner);
    const commit = runner.commitTransaction.bind(runner);
    const rollback = runner.rollbackTransaction.bind(runner);
    const release = runner.release.bind(runner);

    /**
     * Ends this runner's hold on the connection: rolls back what SQLite still has open (so the
     * next holder does not start inside it), forgets the transaction and frees the lock.
     */
    const abandon = (): void => {
      try {
        if (connection().inTransaction) {
          connection().exec('ROLLBACK');
        }
      } finally {
        runner.transactionDepth = 0;
        runner.isTransactionActive = false;
        lock.release(runner);
      }
    };

    const waitThenQuery = async (...args: Parameters<QueryRunner['query']>): Promise<unknown> => {
      await lock.waitTurn(runner, false);
      return (await query(...args)) as unknown;
    };
    runner.query = waitThenQuery as QueryRunner['query'];
    runner.startTransaction = async (...args: Parameters<QueryRunner['startTransaction']>) => {
      const outermost = runner.transactionDepth === 0;
      if (outermost) {
        await lock.waitTurn(runner, true);
      }
      try {
        await start(...args);
      } catch (error) {
        if (outermost) {
          abandon();
        }
        throw error;
      }
    };
    runner.commitTransaction = async () => {
      const outermost = runner.transactionDepth <= 1;
      try {
        await commit();
      } catch (error) {
        // A COMMIT that left SQLite's transaction open (SQLITE_BUSY) may still be rolled back by
        // the caller; one that SQLite rolled back itself is over.
        if (outermost && !connection().inTransaction) {
          abandon();
        }
        throw error;
      } finally {
        if (runner.transactionDepth === 0) {
          lock.release(runner);
        }
      }
    };
    runner.rollbackTransaction = async () => {
      const outermost = runner.transactionDepth <= 1;
      try {
        await rollback();
      } catch (error) {
        if (outermost) {
          abandon();
        }
        throw error;
      } finally {
        if (runner.transactionDepth === 0) {
          lock.release(runner);
        }
      }
    };
    runner.release = async () => {
      if (lock.heldBy(runner)) {
        abandon();
      }
      await release();
    };
    return runner;
  };
}
