/**
 * The decisions of a refresh as pure functions, so that they are tested without clocks,
 * databases or CI services: how often the timer ticks, how long a claim holds and until when
 * its checks may start, whether a claimed check runs, and what its outcome writes (the next
 * check time: the regular slot, the back-off, or unchanged while the service is paused).
 * When exactly an instance is due is refresh-schedule.ts.
 */
import type { CheckRecord, ClaimedInstance } from './check-records.js';
import { nextCheckAfterFailure, nextRegularCheck } from './refresh-schedule.js';
import type { BuildCheckResult } from './testing-services/testing-service.js';

/**
 * How long a claim holds its instances at least. A copy that dies leaves its leases to run out,
 * then any copy takes the instances; a live copy leaves the checks it could not start in time
 * to others.
 */
export const LEASE_MS = 5 * 60_000;
/** Upstream timeouts a check may take (a check can send several requests, e.g. for re-run attempts). */
export const CHECK_TIMEOUTS = 4;

/** How often the timer ticks: a twentieth of the interval, between 0.2 and 1 s. */
export function tickMs(intervalMs: number): number {
  return Math.min(1000, Math.max(200, Math.floor(intervalMs / 20)));
}

/** How long a claim holds its instances: LEASE_MS, longer with long upstream timeouts. */
export function leaseMs(upstreamTimeoutMs: number): number {
  return Math.max(LEASE_MS, 2 * CHECK_TIMEOUTS * upstreamTimeoutMs);
}

/**
 * The time (ms since the epoch) after which a check of a batch claimed at `claimedAtMs` is no
 * longer started: the slowest check must end before the lease does, or another copy may have
 * taken the instance meanwhile.
 */
export function leaseDeadline(claimedAtMs: number, lease: number, upstreamTimeoutMs: number): number {
  return claimedAtMs + lease - CHECK_TIMEOUTS * upstreamTimeoutMs;
}

/** Why a claimed check is not made now, if it is not. */
export type SkipReason = 'stopping' | 'lease_may_be_gone' | 'service_paused';

/**
 * Whether a claimed check is released instead of made: the copy is stopping, the claim's lease
 * may have run out (`nowMs` past the deadline), or the service was paused by a rate limit
 * earlier in this run, beyond the time the batch was claimed for.
 */
export function skipReason(input: {
  stopping: boolean;
  nowMs: number;
  leaseDeadline: number;
  pausedUntil: Date | undefined;
  claimedFor: Date;
}): SkipReason | undefined {
  if (input.stopping) {
    return 'stopping';
  }
  if (input.nowMs > input.leaseDeadline) {
    return 'lease_may_be_gone';
  }
  if (input.pausedUntil !== undefined && input.pausedUntil > input.claimedFor) {
    return 'service_paused';
  }
  return undefined;
}

/**
 * What a check's outcome writes to the instance's check state: builds and bookkeeping, and the
 * next check time (`random` in [0, 1) spreads the back-off). A rate limit is not the instance's
 * failure: it is released still due, and checked once its service's pause ends.
 */
export function recordOf(
  instance: ClaimedInstance,
  result: BuildCheckResult,
  now: Date,
  intervalMs: number,
  random: number,
): CheckRecord {
  const base = { instanceId: instance.id, leaseToken: instance.leaseToken };
  switch (result.kind) {
    case 'builds':
      return {
        ...base,
        kind: 'builds',
        checkedAt: now,
        nextCheckAt: nextRegularCheck(instance.id, now, intervalMs),
        etag: result.etag ?? null,
        builds: result.builds,
        ...(result.workflowDisabled === undefined ? {} : { workflowDisabled: result.workflowDisabled }),
      };
    case 'not_modified':
      return {
        ...base,
        kind: 'not_modified',
        checkedAt: now,
        nextCheckAt: nextRegularCheck(instance.id, now, intervalMs),
        ...(result.workflowDisabled === undefined ? {} : { workflowDisabled: result.workflowDisabled }),
      };
    case 'failed': {
      const failureCount = instance.failureCount + 1;
      return {
        ...base,
        kind: 'failed',
        checkedAt: now,
        failureCount,
        reason: result.reason,
        nextCheckAt: nextCheckAfterFailure(failureCount, now, intervalMs, random, result.retryAfter),
      };
    }
    case 'rate_limited':
      return { ...base, kind: 'released' };
  }
}
