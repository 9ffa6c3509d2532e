import {
  backoffDelayMs,
  MAX_BACKOFF_MS,
  nextCheckAfterFailure,
  nextRegularCheck,
  regularPlanLimit,
  SLOT_SPREAD,
  slotOffsetMs,
} from './refresh-schedule.js';

const I = 300_000;

describe('nextRegularCheck', () => {
  it('puts every instance at its fixed offset in the next window of the interval', () => {
    const now = new Date(Date.UTC(2024, 0, 1, 12, 1, 7));
    const windowStart = Math.floor(now.getTime() / I) * I;
    for (let id = 1; id <= 200; id++) {
      const next = nextRegularCheck(id, now, I).getTime();
      expect(next).toBe(windowStart + I + slotOffsetMs(id, I));
      expect(next - (windowStart + I)).toBeLessThan(I * SLOT_SPREAD);
    }
  });

  it('keeps the period at exactly one interval however late within the window the check ran', () => {
    const slot = nextRegularCheck(42, new Date(Date.UTC(2024, 0, 1)), I);
    const onTime = nextRegularCheck(42, slot, I);
    const late = nextRegularCheck(42, new Date(slot.getTime() + 0.05 * I), I);
    expect(onTime.getTime() - slot.getTime()).toBe(I);
    expect(late).toEqual(onTime);
  });

  it('spreads instances registered together over the window instead of bunching them', () => {
    const now = new Date(Date.UTC(2024, 0, 1));
    const buckets = new Array<number>(10).fill(0);
    for (let id = 1; id <= 1000; id++) {
      const offset = nextRegularCheck(id, now, I).getTime() - now.getTime() - I;
      buckets[Math.floor((offset / (I * SLOT_SPREAD)) * 10)]++;
    }
    for (const count of buckets) {
      expect(count).toBeGreaterThanOrEqual(90);
      expect(count).toBeLessThanOrEqual(110);
    }
  });
});

describe('back-off', () => {
  it('doubles with every failure from two intervals, with a jitter of ±25 %', () => {
    expect(backoffDelayMs(1, I, 0.5)).toBe(2 * I);
    expect(backoffDelayMs(2, I, 0.5)).toBe(4 * I);
    expect(backoffDelayMs(3, I, 0)).toBe(0.75 * 8 * I);
    expect(backoffDelayMs(3, I, 0.999999)).toBeCloseTo(1.25 * 8 * I, -1);
  });

  it('is capped at about six hours, and never shorter than a regular period', () => {
    expect(backoffDelayMs(50, I, 0.5)).toBe(MAX_BACKOFF_MS);
    expect(backoffDelayMs(1, 24 * 3600_000, 0)).toBeGreaterThan(24 * 3600_000);
    expect(backoffDelayMs(1, 1000, 0)).toBeGreaterThan(1000);
  });

  it('waits for a Retry-After that is later than the back-off', () => {
    const now = new Date(Date.UTC(2024, 0, 1));
    const retryAfter = new Date(now.getTime() + 10 * I);
    expect(nextCheckAfterFailure(1, now, I, 0.5, retryAfter)).toEqual(retryAfter);
    expect(nextCheckAfterFailure(1, now, I, 0.5, new Date(now.getTime() + 1000))).toEqual(
      new Date(now.getTime() + 2 * I),
    );
  });
});

describe('regularPlanLimit', () => {
  it('comes after every regular check planned under the interval, and within two intervals', () => {
    const start = Date.UTC(2024, 0, 1, 12, 1, 7);
    for (let step = 0; step < 50; step++) {
      const planned = new Date(start + step * 0.13 * I);
      const later = new Date(planned.getTime() + 0.4 * I);
      const limit = regularPlanLimit(later, I).getTime();
      for (let id = 1; id <= 100; id++) {
        expect(nextRegularCheck(id, planned, I).getTime()).toBeLessThan(limit);
      }
      expect(limit - later.getTime()).toBeLessThanOrEqual(2 * I);
    }
  });

  it('comes before the regular checks planned under a longer interval', () => {
    const now = new Date(Date.UTC(2024, 0, 1, 12, 1, 7));
    const longer = nextRegularCheck(42, now, 600_000);
    expect(longer.getTime()).toBeGreaterThanOrEqual(regularPlanLimit(now, 2000).getTime());
  });
});
