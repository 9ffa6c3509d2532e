/**
 * When instances are checked again: pure functions, so that the scheduler's timing rules are
 * tested without clocks or databases.
 *
 * Regular checks run in windows of one interval aligned on the epoch (`[k·I, (k+1)·I)`), each
 * instance at its own fixed offset inside the window. So every copy of the service agrees on
 * when an instance is due, each instance is checked once per window however late a tick runs
 * (within the slack), and the instances of a crate registered at once do not stay bunched:
 * their offsets are spread over the window.
 */

/** Share of the interval the offsets are spread over; the rest is slack for ticks that run late. */
export const SLOT_SPREAD = 0.9;
/** The golden ratio's fraction: consecutive ids land far apart and fill the window evenly. */
const GOLDEN_FRACTION = 0.6180339887498949;

/** The interval used when the scheduler is off (REFRESH_INTERVAL_SECONDS=0) and a tick is run by hand. */
export const DEFAULT_REFRESH_INTERVAL_MS = 300_000;

/** A failing instance is not retried later than this (before jitter), unless two intervals are longer. */
export const MAX_BACKOFF_MS = 6 * 3600_000;

/** The instance's fixed offset inside every window, in milliseconds (0 ≤ offset < SLOT_SPREAD·interval). */
export function slotOffsetMs(instanceId: number, intervalMs: number): number {
  const fraction = (instanceId * GOLDEN_FRACTION) % 1;
  return Math.floor(fraction * intervalMs * SLOT_SPREAD);
}

/** The regular next check after a successful one at `now`: the instance's slot in the next window. */
export function nextRegularCheck(instanceId: number, now: Date, intervalMs: number): Date {
  const nextWindow = Math.floor(now.getTime() / intervalMs) + 1;
  return new Date(nextWindow * intervalMs + slotOffsetMs(instanceId, intervalMs));
}

/**
 * The time from which a due time cannot have been planned as a regular check under `intervalMs`:
 * the start of the window after next (a regular check is planned in the next window, within
 * SLOT_SPREAD of its start). A later one was planned under a longer interval set before.
 */
export function regularPlanLimit(now: Date, intervalMs: number): Date {
  return new Date((Math.floor(now.getTime() / intervalMs) + 2) * intervalMs);
}

/**
 * The delay before retrying an instance whose last `failures` checks (≥ 1) failed: twice the
 * interval after the first failure, doubling with each further one up to MAX_BACKOFF_MS, times
 * a random factor of 0.75–1.25 (`random` in [0, 1)) so that instances of a service that went
 * down together do not come back in one burst. Always longer than a regular period.
 */
export function backoffDelayMs(failures: number, intervalMs: number, random: number): number {
  const exponent = Math.min(Math.max(1, Math.floor(failures)), 30);
  // A daily interval still backs off to at least two intervals.
  const base = Math.min(intervalMs * 2 ** exponent, Math.max(MAX_BACKOFF_MS, 2 * intervalMs));
  return Math.round(base * (0.75 + 0.5 * random));
}

/** The next check after a failed one: the back-off, or the service's `Retry-After` when that is later. */
export function nextCheckAfterFailure(
  failures: number,
  now: Date,
  intervalMs: number,
  random: number,
  retryAfter?: Date,
): Date {
  const backoff = now.getTime() + backoffDelayMs(failures, intervalMs, random);
  return new Date(Math.max(backoff, retryAfter?.getTime() ?? 0));
}
