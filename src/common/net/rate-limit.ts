import type { IncomingHttpHeaders } from 'node:http';

/** A 429 that says nothing about when to come back pauses the service this long. */
export const DEFAULT_RATE_LIMIT_PAUSE_MS = 60_000;

/** `Retry-After` in seconds or as an HTTP date, as an instant; undefined when absent or unreadable. */
export function parseRetryAfter(headers: IncomingHttpHeaders, now: Date): Date | undefined {
  const value = headers['retry-after'];
  if (typeof value !== 'string' || value.trim() === '') {
    return undefined;
  }
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) {
    return new Date(now.getTime() + Number(trimmed) * 1000);
  }
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : new Date(date);
}

/**
 * When a rate-limited service may be called again, or undefined when the answer is not a rate
 * limit. A primary limit is a 403/429 with `x-ratelimit-remaining: 0` (or `ratelimit-remaining`)
 * and the reset in epoch seconds, a secondary limit one with `Retry-After` (or only a message); a bare 429
 * from any service pauses it for DEFAULT_RATE_LIMIT_PAUSE_MS. The later of the hints wins.
 */
export function parseRateLimit(
  status: number,
  headers: IncomingHttpHeaders,
  now: Date,
  message = '',
): Date | undefined {
  if (status !== 403 && status !== 429) {
    return undefined;
  }
  const hints: number[] = [];
  const retryAfter = parseRetryAfter(headers, now);
  if (retryAfter) {
    hints.push(retryAfter.getTime());
  }
  // GitHub's `x-ratelimit-*`, and the same without `x-` (the names of the IETF draft).
  const remaining = headers['x-ratelimit-remaining'] ?? headers['ratelimit-remaining'];
  const reset = headers['x-ratelimit-reset'] ?? headers['ratelimit-reset'];
  if (remaining === '0' && typeof reset === 'string' && /^\d+$/.test(reset.trim())) {
    hints.push(Number(reset.trim()) * 1000);
  }
  const exhausted = remaining === '0' || /rate limit/i.test(message);
  if (hints.length === 0 && (status === 429 || exhausted)) {
    hints.push(now.getTime() + DEFAULT_RATE_LIMIT_PAUSE_MS);
  }
  if (hints.length === 0) {
    return undefined;
  }
  // A reset already past (clock skew) still means "now", never a date in the past.
  return new Date(Math.max(now.getTime(), ...hints));
}
