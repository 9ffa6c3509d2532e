import type { DataSource } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { AppDataSourceOptions } from './data-source.js';

/** Error codes of a database that is not there (yet): worth another attempt, unlike a wrong password. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
]);

/** Stops start-up with its message as the one line printed (see main.ts). */
export class DatabaseUnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseUnreachableError';
  }
}

export interface StartupAttempts {
  /** DATABASE_STARTUP_TIMEOUT_SECONDS, in ms: no attempt starts after it. */
  timeoutMs: number;
  clock: Clock;
  /** Called once per failed attempt with a line naming host and port, never the password. */
  warn: (line: string) => void;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The data source's options and how long start-up keeps trying to reach it (see openWithRetries):
 * they travel together through TypeOrmModule.forRootAsync, from its factory to its dataSourceFactory.
 */
export type StartingDataSourceOptions = AppDataSourceOptions & { startup?: StartupAttempts };

/** `host:port` of a mysql:// URL: what a log line may show of it. */
export function databaseAddress(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || '3306'}`;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Opens the database, trying again while a MariaDB/MySQL server does not answer (it may be
 * starting next to us) until `timeoutMs` has passed; then one error naming DATABASE_URL. Each
 * attempt is itself bounded by the connection timeout (DATABASE_TIMEOUT_SECONDS).
 */
export async function openWithRetries(
  options: AppDataSourceOptions,
  open: (options: AppDataSourceOptions) => Promise<DataSource>,
  attempts: StartupAttempts,
): Promise<DataSource> {
  if (options.type !== 'mariadb' || typeof options.url !== 'string') {
    return open(options);
  }
  const address = databaseAddress(options.url);
  const sleep = attempts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const deadline = attempts.clock.nowMs() + attempts.timeoutMs;
  let delayMs = 500;
  for (let attempt = 1; ; attempt++) {
    try {
      return await open(options);
    } catch (error) {
      const code = codeOf(error);
      if (code === undefined || !UNREACHABLE.has(code)) {
        throw error;
      }
      const left = deadline - attempts.clock.nowMs();
      if (left <= delayMs) {
        attempts.warn(`database ${address}: attempt ${attempt} failed (${code}); giving up`);
        throw new DatabaseUnreachableError(
          `DATABASE_URL: the database at ${address} did not answer within ${Math.round(attempts.timeoutMs / 1000)} s ` +
            `(${attempt} attempts, last: ${code}); check DATABASE_URL, or raise DATABASE_STARTUP_TIMEOUT_SECONDS`,
        );
      }
      attempts.warn(`database ${address}: attempt ${attempt} failed (${code}); next in ${delayMs / 1000} s`);
      await sleep(delayMs);
      delayMs = Math.min(delayMs * 2, 5000);
    }
  }
}
