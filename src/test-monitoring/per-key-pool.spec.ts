import { hostKey, runPerKey } from './per-key-pool.js';

const tick = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('runPerKey', () => {
  it('runs at most `limit` items of one key at a time, and keys side by side', async () => {
    const running = new Map<string, number>();
    const peak = new Map<string, number>();
    const done: string[] = [];
    const items = [
      ...Array.from({ length: 12 }, (_, i) => ({ key: 'a', id: `a${i}` })),
      ...Array.from({ length: 3 }, (_, i) => ({ key: 'b', id: `b${i}` })),
    ];
    const started = Date.now();
    await runPerKey(
      items,
      (item) => item.key,
      4,
      async (item) => {
        running.set(item.key, (running.get(item.key) ?? 0) + 1);
        peak.set(item.key, Math.max(peak.get(item.key) ?? 0, running.get(item.key) ?? 0));
        await tick(20);
        running.set(item.key, (running.get(item.key) ?? 0) - 1);
        done.push(item.id);
      },
    );
    expect(done).toHaveLength(15);
    expect(peak.get('a')).toBe(4);
    expect(peak.get('b')).toBe(3);
    // 12 items of `a` at 4 a time take three rounds; `b` does not wait for them.
    expect(Date.now() - started).toBeLessThan(200);
  });

  it('resolves at once for no items', async () => {
    await expect(
      runPerKey(
        [],
        () => 'x',
        3,
        () => Promise.resolve(),
      ),
    ).resolves.toBeUndefined();
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
