const DAY_MS = 86_400_000;

export const DEFAULT_STATS_DAYS = 90;
export const DEFAULT_HISTORY_DAYS = 30;
export const MAX_HISTORY_DAYS = 365;

export interface DayCount {
  /** `YYYY-MM-DD`, UTC. */
  date: string;
  passed: number;
  failed: number;
}

/** Midnight UTC of the first of `days` days that end with the day of `now`. */
export function firstDayOf(now: Date, days: number): Date {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  return new Date(today - (days - 1) * DAY_MS);
}

/** One entry per day from `first`, `days` of them, oldest first; days without builds count zero. */
export function dailySeries(counts: readonly DayCount[], first: Date, days: number): DayCount[] {
  const byDate = new Map(counts.map((count) => [count.date, count]));
  return Array.from({ length: days }, (_, index) => {
    const date = new Date(first.getTime() + index * DAY_MS).toISOString().slice(0, 10);
    const found = byDate.get(date);
    return { date, passed: found?.passed ?? 0, failed: found?.failed ?? 0 };
  });
}

/** The start of a rolling window of `days` days that ends at `now`. */
export function windowStart(now: Date, days: number): Date {
  return new Date(now.getTime() - days * DAY_MS);
}
