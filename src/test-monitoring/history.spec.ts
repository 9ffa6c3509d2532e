import { dailySeries, firstDayOf, windowStart } from './history.js';

describe('history days (API.md 5.3)', () => {
  const now = new Date('2026-11-24T15:30:00Z');

  it('starts the days at midnight UTC, the last one being today', () => {
    expect(firstDayOf(now, 1).toISOString()).toBe('2026-11-24T00:00:00.000Z');
    expect(firstDayOf(now, 30).toISOString()).toBe('2026-10-26T00:00:00.000Z');
  });

  it('gives every day once, oldest first, with zeros where there were no builds', () => {
    const series = dailySeries(
      [
        { date: '2026-11-22', passed: 2, failed: 1 },
        { date: '2026-11-24', passed: 0, failed: 3 },
      ],
      firstDayOf(now, 4),
      4,
    );
    expect(series).toEqual([
      { date: '2026-11-21', passed: 0, failed: 0 },
      { date: '2026-11-22', passed: 2, failed: 1 },
      { date: '2026-11-23', passed: 0, failed: 0 },
      { date: '2026-11-24', passed: 0, failed: 3 },
    ]);
  });

  it('crosses month and year ends', () => {
    const series = dailySeries([], firstDayOf(new Date('2027-01-01T00:00:00Z'), 3), 3);
    expect(series.map((day) => day.date)).toEqual(['2026-12-30', '2026-12-31', '2027-01-01']);
  });

  it('rolls the stats window back whole days from now', () => {
    expect(windowStart(now, 90).toISOString()).toBe('2026-08-26T15:30:00.000Z');
  });
});
