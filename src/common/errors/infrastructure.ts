import { DomainError } from './domain-error.js';

/** What a client is told when a disk the service writes to is full; the path goes to the log only. */
export const STORAGE_FULL = "The server's storage is full; the request was not carried out";

/** What a client is told when the database is away or too slow; its address goes to the log only. */
export const DATABASE_UNAVAILABLE_DETAIL = 'The database is unavailable; try again later';
/** When to try again after a 503 for the database. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Codes of a write refused for lack of space: the file system's, and SQLite's own. */
const STORAGE_FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);
/**
 * A call the database did not carry out: in time (src/database's DatabaseUnavailableError, the
 * SQLite connection's lock, MariaDB's lock wait), or at all (SQLite could not read or open its file).
 */
const DATABASE_UNAVAILABLE_CODES = new Set([
  'DATABASE_UNAVAILABLE',
  'SQLITE_BUSY',
  'SQLITE_CANTOPEN',
  'ER_LOCK_WAIT_TIMEOUT',
]);

function databaseUnavailable(code: string): boolean {
  // SQLite's extended codes: SQLITE_IOERR_READ, SQLITE_IOERR_FSYNC, …
  return DATABASE_UNAVAILABLE_CODES.has(code) || code.startsWith('SQLITE_IOERR');
}

/**
 * The error a failure of our own storage or database is answered with, or undefined for any other error.
 * Looks through TypeORM's `driverError` and `cause`, and matches structurally: errors made by
 * Node's internals or by a driver can come from another realm (jest's VM) than `Error`.
 */
export function infrastructureError(error: unknown): DomainError | undefined {
  for (const candidate of causes(error)) {
    const code = (candidate as { code?: unknown }).code;
    if (typeof code === 'string' && STORAGE_FULL_CODES.has(code)) {
      return new DomainError('insufficient_storage', STORAGE_FULL);
    }
    if (typeof code === 'string' && databaseUnavailable(code)) {
      return new DomainError(
        'database_unavailable',
        DATABASE_UNAVAILABLE_DETAIL,
        [],
        DATABASE_RETRY_AFTER_SECONDS,
      );
    }
  }
  return undefined;
}

/** The error, then what it wraps (TypeORM's driverError, an Error's cause), a few levels deep. */
export function causes(error: unknown): object[] {
  const found: object[] = [];
  let current: unknown = error;
  while (typeof current === 'object' && current !== null && found.length < 5 && !found.includes(current)) {
    found.push(current);
    const { driverError, cause } = current as { driverError?: unknown; cause?: unknown };
    current = driverError ?? cause;
  }
  return found;
}

/** Where a file-system error happened, for the log: its path, when it has one. */
export function pathOf(error: unknown): string | undefined {
  for (const candidate of causes(error)) {
    const path = (candidate as { path?: unknown }).path;
    if (typeof path === 'string') {
      return path;
    }
  }
  return undefined;
}

/**
 * A storage-full error that carries no path (writes through a file handle have none), with
 * `path` put on a wrapper for the log. Other errors are returned as they are: a socket's
 * error must not start looking like one of our files'.
 */
export function atPath(error: unknown, path: string): unknown {
  if (typeof error !== 'object' || error === null || pathOf(error) !== undefined) {
    return error;
  }
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || !STORAGE_FULL_CODES.has(code)) {
    return error;
  }
  return Object.assign(new Error(`${String(message)} (${path})`, { cause: error }), { code, path });
}
