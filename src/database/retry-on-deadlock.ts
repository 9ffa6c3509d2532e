import { driverCode } from '../common/errors/unique-violation.js';

/**
 * True for the failures after which a transaction was rolled back whole and may simply run
 * again: MariaDB's deadlock victim and lock-wait timeout, SQLite's busy database.
 */
export function isDeadlock(error: unknown): boolean {
  const code = driverCode(error);
  return code === 'ER_LOCK_DEADLOCK' || code === 'ER_LOCK_WAIT_TIMEOUT' || code === 'SQLITE_BUSY';
}

/** Runs a transaction again (up to `attempts` times in all) when the database chose it as a deadlock victim. */
export async function retryOnDeadlock<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts || !isDeadlock(error)) {
        throw error;
      }
    }
  }
}
