import { DomainError } from '../common/errors/domain-error.js';

/** The bounds of a lease (API.md 8): at least a minute, at most a year (365 days). */
export const MIN_LEASE_SECONDS = 60;
export const MAX_LEASE_SECONDS = 31_536_000;

/** How a request says when a lease ends: after `ttlSeconds`, or at `expiresAt` (ISO 8601). */
export interface LeaseEnd {
  readonly ttlSeconds?: number;
  readonly expiresAt?: string;
}

/**
 * The end of a lease asked for at `nowMs`, rounded up to a whole second. `ttlSeconds` is checked by the request's validation
 * (60..31 536 000); `expiresAt` must be later than now and at most a year ahead, else 'invalid_input'.
 */
export function leaseEndsAt(nowMs: number, end: LeaseEnd): Date {
  if (end.ttlSeconds !== undefined) {
    return wholeSecond(nowMs + end.ttlSeconds * 1000);
  }
  const at = Date.parse(end.expiresAt ?? '');
  const problem = Number.isNaN(at)
    ? 'expires_at must be an ISO 8601 date and time with a time zone'
    : at <= nowMs
      ? `expires_at ${end.expiresAt} is in the past`
      : at > nowMs + MAX_LEASE_SECONDS * 1000
        ? `expires_at ${end.expiresAt} is more than a year ahead`
        : undefined;
  if (problem !== undefined) {
    throw new DomainError('invalid_input', problem, [{ field: 'expires_at', message: problem }]);
  }
  return wholeSecond(at);
}

/** MariaDB's DATETIME keeps whole seconds: a lease ends at the next one, never sooner than asked. */
function wholeSecond(ms: number): Date {
  return new Date(Math.ceil(ms / 1000) * 1000);
}
