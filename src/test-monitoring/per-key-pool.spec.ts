import { hostKey, KeyedPool } from './per-key-pool.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('KeyedPool', () => {
  it('runs at most `limit` tasks of one key at a time, and keys side by side', async () => {
    const pool = new KeyedPool(4);
    const running = new Map<string, number>();
    const peak = new Map<string, number>();
    const done: string[] = [];
    const task = (key: string, id: string) => async (): Promise<void> => {
      running.set(key, (running.get(key) ?? 0) + 1);
      peak.set(key, Math.max(peak.get(key) ?? 0, running.get(key) ?? 0));
      await sleep(20);
      running.set(key, (running.get(key) ?? 0) - 1);
      done.push(id);
    };
    for (let i = 0; i < 12; i++) {
      pool.add('a', task('a', `a${i}`));
    }
    for (let i = 0; i < 3; i++) {
      pool.add('b', task('b', `b${i}`));
    }
    expect(pool.size).toBe(15);
    await pool.idle();
    expect(pool.size).toBe(0);
    expect(done).toHaveLength(15);
    expect(peak.get('a')).toBe(4);
    expect(peak.get('b')).toBe(3);
    // `b` finished in the first round, beside `a`, not after it.
    expect(done.indexOf('b2')).toBeLessThan(done.indexOf('a4'));
  });

  it('keeps the limit for tasks added while others run, and tells when the backlog is low', async () => {
    const pool = new KeyedPool(2);
    let running = 0;
    let peak = 0;
    const task = async (): Promise<void> => {
      running++;
      peak = Math.max(peak, running);
      await sleep(10);
      running--;
    };
    for (let i = 0; i < 6; i++) {
      pool.add('a', task);
    }
    await pool.whenBelow(3);
    expect(pool.size).toBeLessThan(3);
    for (let i = 0; i < 4; i++) {
      pool.add('a', task);
    }
    await pool.idle();
    expect(peak).toBe(2);
  });

  it('counts a task that rejects as done and reports the error', async () => {
    const errors: unknown[] = [];
    const pool = new KeyedPool(1, (error) => errors.push(error));
    pool.add('a', () => Promise.reject(new Error('boom')));
    pool.add('a', () => Promise.resolve());
    await pool.idle();
    expect(errors).toEqual([new Error('boom')]);
  });

  it('is idle at once when empty', async () => {
    await expect(new KeyedPool(3).idle()).resolves.toBeUndefined();
  });
});

describe('hostKey', () => {
  it('keys service URLs by host and port', () => {
    expect(hostKey('https://API.github.com/')).toBe('api.github.com');
    expect(hostKey('https://ghe.example.org/api/v3')).toBe('ghe.example.org');
    expect(hostKey('http://127.0.0.1:8080/jenkins')).toBe('127.0.0.1:8080');
    expect(hostKey('not a url')).toBe('not a url');
  });
});
