import { Logger } from '@nestjs/common';

/** The `code` of a DatabaseUnavailableError, matched structurally (errors may cross jest's realms). */
export const DATABASE_UNAVAILABLE = 'DATABASE_UNAVAILABLE';

/**
 * The database did not answer in time, refused the connection, or lost it. Callers answer
 * 503 with Retry-After (see src/common/errors/infrastructure.ts); the cause stays for the log.
 */
export class DatabaseUnavailableError extends Error {
  readonly code = DATABASE_UNAVAILABLE;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * Logs an outage of the database once, at error with its cause, when the first call fails,
 * and once more when a call succeeds again; the failures in between are only counted, so that
 * a busy service does not write a line per request while the database is away.
 */
export class DatabaseOutage {
  private readonly logger = new Logger('Database');
  private since?: number;
  private failures = 0;

  failed(error: unknown): void {
    if (this.since === undefined) {
      this.since = Date.now();
      this.failures = 1;
      this.logger.error(
        { err: error },
        `the database is unavailable: ${messageOf(error)}; requests answer 503 until it answers again`,
      );
      return;
    }
    this.failures += 1;
  }

  answered(): void {
    if (this.since === undefined) {
      return;
    }
    const seconds = ((Date.now() - this.since) / 1000).toFixed(1);
    this.logger.warn(`the database answers again after ${seconds} s (${this.failures} failed call(s))`);
    this.since = undefined;
  }
}

function messageOf(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  const cause = (error as { cause?: { message?: unknown } } | null)?.cause?.message;
  return [message, cause].filter((part) => typeof part === 'string').join(': ') || String(error);
}
