import type { ClaimedInstance } from './check-records.js';
import {
  CHECK_TIMEOUTS,
  LEASE_MS,
  leaseDeadline,
  leaseMs,
  recordOf,
  skipReason,
  tickMs,
} from './refresh-decisions.js';
import { backoffDelayMs, nextRegularCheck } from './refresh-schedule.js';

const I = 300_000;
const NOW = new Date('2024-05-01T12:00:00.000Z');
const INSTANCE: ClaimedInstance = {
  id: 42,
  resource: 'repos/o/r/actions/workflows/ci.yml',
  etag: 'W/"old"',
  failureCount: 2,
  leaseToken: 'copy-a#1',
  service: { id: 3, type: 'github', url: 'https://api.github.com' },
  selection: { refs: ['1.0'], from: new Date('2024-04-01T00:00:00.000Z') },
};

describe('tickMs', () => {
  it('ticks a twentieth of the interval, never faster than 0.2 s nor slower than 1 s', () => {
    expect(tickMs(10_000)).toBe(500);
    expect(tickMs(2_000)).toBe(200);
    expect(tickMs(1_000)).toBe(200);
    expect(tickMs(300_000)).toBe(1000);
  });
});

describe('leaseMs and leaseDeadline', () => {
  it('holds a claim five minutes, or twice the upstream timeouts of a check when longer', () => {
    expect(leaseMs(10_000)).toBe(LEASE_MS);
    expect(leaseMs(60_000)).toBe(2 * CHECK_TIMEOUTS * 60_000);
  });

  it('starts no check that could outlast the lease', () => {
    const lease = leaseMs(10_000);
    expect(leaseDeadline(1_000, lease, 10_000)).toBe(1_000 + lease - CHECK_TIMEOUTS * 10_000);
  });
});

describe('skipReason', () => {
  const base = {
    stopping: false,
    nowMs: 1_000,
    leaseDeadline: 2_000,
    pausedUntil: undefined,
    claimedFor: NOW,
  };

  it('makes the check when nothing stands in the way', () => {
    expect(skipReason(base)).toBeUndefined();
    expect(skipReason({ ...base, nowMs: 2_000 })).toBeUndefined();
  });

  it('releases the check of a stopping copy first', () => {
    expect(skipReason({ ...base, stopping: true, nowMs: 5_000 })).toBe('stopping');
  });

  it('releases a check whose lease may be gone', () => {
    expect(skipReason({ ...base, nowMs: 2_001 })).toBe('lease_may_be_gone');
  });

  it('releases a check of a service paused beyond the time the batch was claimed for', () => {
    const later = new Date(NOW.getTime() + 1_000);
    expect(skipReason({ ...base, pausedUntil: later })).toBe('service_paused');
    expect(skipReason({ ...base, pausedUntil: NOW })).toBeUndefined();
  });
});

describe('recordOf', () => {
  it('stores new builds and their ETag, and schedules the regular slot', () => {
    const builds = [
      { buildId: '1', status: 'passed' as const, startedAt: NOW, durationSeconds: 5, url: 'https://x/1' },
    ];
    expect(recordOf(INSTANCE, { kind: 'builds', builds, etag: 'W/"new"' }, NOW, I, 0.5)).toEqual({
      kind: 'builds',
      instanceId: 42,
      leaseToken: 'copy-a#1',
      checkedAt: NOW,
      nextCheckAt: nextRegularCheck(42, NOW, I),
      etag: 'W/"new"',
      builds,
    });
    expect(recordOf(INSTANCE, { kind: 'builds', builds: [] }, NOW, I, 0.5)).toMatchObject({ etag: null });
  });

  it('changes only the bookkeeping on a 304', () => {
    expect(recordOf(INSTANCE, { kind: 'not_modified' }, NOW, I, 0.5)).toEqual({
      kind: 'not_modified',
      instanceId: 42,
      leaseToken: 'copy-a#1',
      checkedAt: NOW,
      nextCheckAt: nextRegularCheck(42, NOW, I),
    });
  });

  it('counts a failure and backs off by the failures so far, or to Retry-After when later', () => {
    const failed = recordOf(INSTANCE, { kind: 'failed', reason: 'down' }, NOW, I, 0.5);
    expect(failed).toEqual({
      kind: 'failed',
      instanceId: 42,
      leaseToken: 'copy-a#1',
      checkedAt: NOW,
      failureCount: 3,
      reason: 'down',
      nextCheckAt: new Date(NOW.getTime() + backoffDelayMs(3, I, 0.5)),
    });
    const retryAfter = new Date(NOW.getTime() + 30 * 24 * 3600_000);
    expect(recordOf(INSTANCE, { kind: 'failed', reason: 'down', retryAfter }, NOW, I, 0.5)).toMatchObject({
      nextCheckAt: retryAfter,
    });
  });

  it('releases a rate-limited instance still due: the pause is its service’s, not its failure', () => {
    const until = new Date(NOW.getTime() + 3600_000);
    expect(recordOf(INSTANCE, { kind: 'rate_limited', until }, NOW, I, 0.5)).toEqual({
      kind: 'released',
      instanceId: 42,
      leaseToken: 'copy-a#1',
    });
  });
});
