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

  /** Waits until no other runner holds the lock; a holder passes straight through. */
  async waitTurn(runner: QueryRunner, take: boolean): Promise<void> {
    const deadline = Date.now() + SQLITE_LOCK_WAIT_MS;
    while (this.holder !== undefined && this.holder !== runner) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        // A transaction that waits on a query outside itself would otherwise hang for ever.
        throw new Error(
          `SQLITE_BUSY: the database was locked by a transaction for ${SQLITE_LOCK_WAIT_MS} ms`,
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
  stmtCache: Map<string, unknown>;
}

/** Installs the per-caller runners and the transaction lock on a better-sqlite3 DataSource. */
export function serializeSqliteTransactions(dataSource: DataSource): void {
  const driver = dataSource.driver;
  const shared = driver.createQueryRunner('master') as SqliteRunner;
  const Runner = shared.constructor as new (driverInstance: unknown) => SqliteRunner;
  const lock = new ConnectionLock();

  driver.createQueryRunner = () => {
    const runner = new Runner(driver);
    runner.stmtCache = shared.stmtCache;
    const query = runner.query.bind(runner);
    const start = runner.startTransaction.bind(runner);
    const commit = runner.commitTransaction.bind(runner);
    const rollback = runner.rollbackTransaction.bind(runner);
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
          lock.release(runner);
        }
        throw error;
      }
    };
    runner.commitTransaction = async () => {
      try {
        await commit();
      } finally {
        if (runner.transactionDepth === 0) {
          lock.release(runner);
        }
      }
    };
    runner.rollbackTransaction = async () => {
      try {
        await rollback();
      } finally {
        if (runner.transactionDepth === 0) {
          lock.release(runner);
        }
      }
    };
    return runner;
  };
}
