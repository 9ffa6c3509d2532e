import { DiscoveryService } from '@nestjs/core';

/**
 * Rows that stop meaning anything at their expiry (sign-in states, authorization codes, tokens):
 * a repository of any module that keeps such rows implements this and carries
 * @RemovesExpiredRows(), and the expiry janitor clears them on its timer.
 */
export interface ExpiringRows {
  /** What the rows are, for the janitor's log line. */
  readonly expiringRows: string;
  /** Deletes up to `batch` rows expired before `now`; resolves with how many went. */
  removeExpired(now: Date, batch: number): Promise<number>;
}

export const RemovesExpiredRows = DiscoveryService.createDecorator<void>();
