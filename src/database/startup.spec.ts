import type { DataSource } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { AppDataSourceOptions } from './data-source.js';
import { databaseAddress, DatabaseUnreachableError, openWithRetries } from './startup.js';

const OPTIONS = {
  type: 'mariadb',
  url: 'mysql://app:s3cret@db.example.org:3307/app',
} as AppDataSourceOptions;

/** A clock that moves only when the code under test sleeps. */
function fakeTime(): { clock: Clock; sleep(ms: number): Promise<void>; slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return {
    clock: { nowMs: () => now },
    sleep: (ms) => {
      slept.push(ms);
      now += ms;
      return Promise.resolve();
    },
    slept,
  };
}

function refused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:3307'), { code: 'ECONNREFUSED' });
}

describe('openWithRetries', () => {
  it('tries again while the server does not answer, then gives up with one error naming DATABASE_URL, never the password', async () => {
    const time = fakeTime();
    const lines: string[] = [];
    let calls = 0;
    const attempt = openWithRetries(
      OPTIONS,
      () => {
        calls += 1;
        return Promise.reject(refused());
      },
      { timeoutMs: 10_000, clock: time.clock, sleep: time.sleep, warn: (line) => lines.push(line) },
    );
    await expect(attempt).rejects.toThrow(DatabaseUnreachableError);
    await expect(attempt).rejects.toThrow(
      /^DATABASE_URL: the database at db\.example\.org:3307 did not answer within 10 s \(\d+ attempts, last: ECONNREFUSED\)/,
    );
    expect(calls).toBe(lines.length);
    expect(calls).toBeGreaterThan(3);
    expect(time.slept.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10_000);
    expect(lines[0]).toBe('database db.example.org:3307: attempt 1 failed (ECONNREFUSED); next in 0.5 s');
    expect(lines[lines.length - 1]).toMatch(/attempt \d+ failed \(ECONNREFUSED\); giving up$/);
    expect(lines.join('\n')).not.toContain('s3cret');
  });

  it('returns the database as soon as it answers', async () => {
    const time = fakeTime();
    const database = {} as DataSource;
    let calls = 0;
    const opened = await openWithRetries(
      OPTIONS,
      () => (++calls < 3 ? Promise.reject(refused()) : Promise.resolve(database)),
      { timeoutMs: 30_000, clock: time.clock, sleep: time.sleep, warn: () => undefined },
    );
    expect(opened).toBe(database);
    expect(calls).toBe(3);
  });

  it('does not retry what another attempt cannot fix (a wrong password), nor SQLite', async () => {
    const time = fakeTime();
    const denied = Object.assign(new Error('Access denied'), { code: 'ER_ACCESS_DENIED_ERROR' });
    let calls = 0;
    await expect(
      openWithRetries(OPTIONS, () => (calls++, Promise.reject(denied)), {
        timeoutMs: 30_000,
        clock: time.clock,
        sleep: time.sleep,
        warn: () => undefined,
      }),
    ).rejects.toBe(denied);
    expect(calls).toBe(1);
    const sqlite = { type: 'better-sqlite3', database: ':memory:' } as AppDataSourceOptions;
    await expect(
      openWithRetries(sqlite, () => (calls++, Promise.reject(refused())), {
        timeoutMs: 30_000,
        clock: time.clock,
        sleep: time.sleep,
        warn: () => undefined,
      }),
    ).rejects.toThrow('ECONNREFUSED');
    expect(calls).toBe(2);
  });

  it('shows host and port of a URL, with the default port', () => {
    expect(databaseAddress('mysql://u:p@h.example:3310/db')).toBe('h.example:3310');
    expect(databaseAddress('mariadb://u:p@h.example/db')).toBe('h.example:3306');
  });
});
