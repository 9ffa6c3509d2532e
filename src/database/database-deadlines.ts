import type { DataSource, Driver, QueryRunner } from 'typeorm';
import { DatabaseOutage, DatabaseUnavailableError } from './database-unavailable.js';

/** The part of a mysql2 pool connection this needs. */
interface PooledConnection {
  release(): void;
  destroy(): void;
}

interface MysqlDriverInternals {
  obtainMasterConnection(): Promise<PooledConnection>;
}

const deadlines = new WeakMap<DataSource, number>();

/** The deadline of one call on this data source, when one is installed. */
export function databaseDeadlineMs(dataSource: DataSource): number | undefined {
  return deadlines.get(dataSource);
}

/**
 * Puts a deadline on every call to a MariaDB/MySQL data source: taking a connection from the
 * pool (mysql2's pool has no acquisition timeout, so a caller queued behind hung queries would
 * wait for ever) and each query, both within one budget of `deadlineMs`. Past it, the call
 * fails with DatabaseUnavailableError (503). A connection whose query was cut is destroyed, not
 * returned to the pool: its command is still pending on it and would hold up the next caller,
 * and destroying it makes the server roll back whatever transaction it had open. A connection
 * the pool hands over after its caller gave up goes straight back. Failures of the connection
 * itself (refused, reset, lost) become DatabaseUnavailableError too; `outage` logs them once.
 */
export function boundDatabaseCalls(dataSource: DataSource, deadlineMs: number, outage: DatabaseOutage): void {
  const driver = dataSource.driver as Driver & MysqlDriverInternals;
  deadlines.set(dataSource, deadlineMs);
  const seconds = deadlineMs / 1000;
  const unavailable = (message: string, cause?: unknown): DatabaseUnavailableError => {
    const error = new DatabaseUnavailableError(message, { cause });
    outage.failed(error);
    return error;
  };

  const obtain: () => Promise<PooledConnection> = driver.obtainMasterConnection.bind(driver);
  driver.obtainMasterConnection = () =>
    new Promise<PooledConnection>((resolve, reject) => {
      let gaveUp = false;
      const timer = setTimeout(() => {
        gaveUp = true;
        reject(unavailable(`no database connection within ${seconds} s`));
      }, deadlineMs);
      obtain().then(
        (connection) => {
          if (gaveUp) {
            connection.release();
            return;
          }
          clearTimeout(timer);
          resolve(connection);
        },
        (error: unknown) => {
          if (gaveUp) {
            return;
          }
          clearTimeout(timer);
          reject(unavailable('could not connect to the database', error));
        },
      );
    });

  const create = driver.createQueryRunner.bind(driver);
  driver.createQueryRunner = (mode) => {
    const runner = create(mode);
    const query = runner.query.bind(runner);
    const bounded = async (...args: Parameters<QueryRunner['query']>): Promise<unknown> => {
      const started = Date.now();
      // Bounded by obtainMasterConnection above; the query gets what is left of the budget.
      const connection = (await runner.connect()) as PooledConnection;
      const remaining = Math.max(1, deadlineMs - (Date.now() - started));
      return new Promise((resolve, reject) => {
        let cut = false;
        const timer = setTimeout(() => {
          cut = true;
          connection.destroy();
          reject(unavailable(`the database did not answer within ${seconds} s`));
        }, remaining);
        query(...args).then(
          (result: unknown) => {
            if (cut) {
              return;
            }
            clearTimeout(timer);
            outage.answered();
            resolve(result);
          },
          (error: unknown) => {
            if (cut) {
              return;
            }
            clearTimeout(timer);
            if (connectionFailed(error)) {
              connection.destroy();
              reject(unavailable('the database connection failed', error));
              return;
            }
            // The database answered (with an error of the statement): it is there.
            outage.answered();
            reject(error instanceof Error ? error : new Error(String(error)));
          },
        );
      });
    };
    runner.query = bounded as QueryRunner['query'];
    return runner;
  };
}

/** mysql2 marks errors of the connection itself (not of a statement) `fatal`; TypeORM wraps them in driverError. */
function connectionFailed(error: unknown): boolean {
  const driverError = (error as { driverError?: { fatal?: unknown } } | null)?.driverError;
  return driverError?.fatal === true || (error as { fatal?: unknown } | null)?.fatal === true;
}
