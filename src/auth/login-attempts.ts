/** A key (an address or a username) over one window: its failures, and the checks in flight. */
interface Window {
  failures: number;
  resetAt: number;
  inFlight: number;
}

export type Admission =
  { admitted: true; leave: (failed: boolean) => void } | { admitted: false; retryAfterMs: number };

/**
 * Counts failed logins per key over a fixed window, and admits a password check only while
 * the failures plus the checks in flight stay within the limit. A check that is not
 * admitted because of checks still in flight waits for one of them to end instead of being
 * refused: right credentials are never refused unless the failures alone are over the
 * limit, and parallel wrong guesses still cannot be checked more often than the limit
 * allows (each in-flight check may become a failure). Everything is synchronous, so no two
 * callers read the same count.
 */
export class LoginAttempts {
  private readonly windows = new Map<string, Window>();
  private waiters: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly nowMs: () => number,
  ) {}

  /** Resolves when every key admits one more check, or with the wait when one is over its failures. */
  async enter(keys: string[]): Promise<Admission> {
    for (;;) {
      const now = this.nowMs();
      const windows = keys.map((key) => this.window(key, now));
      const spent = windows.filter((w) => w.failures >= this.limit);
      if (spent.length > 0) {
        return { admitted: false, retryAfterMs: Math.max(...spent.map((w) => w.resetAt - now)) };
      }
      if (windows.every((w) => w.failures + w.inFlight < this.limit)) {
        for (const w of windows) {
          w.inFlight += 1;
        }
        let left = false;
        return {
          admitted: true,
          leave: (failed) => {
            if (left) {
              return;
            }
            left = true;
            this.leave(keys, failed);
          },
        };
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private leave(keys: string[], failed: boolean): void {
    const now = this.nowMs();
    for (const key of keys) {
      const w = this.window(key, now);
      w.inFlight = Math.max(0, w.inFlight - 1);
      if (failed) {
        w.failures += 1;
      }
    }
    for (const wake of this.waiters.splice(0)) {
      wake();
    }
  }

  private window(key: string, now: number): Window {
    let w = this.windows.get(key);
    if (w && w.resetAt <= now) {
      // A new window keeps the checks still in flight: they may yet fail inside it.
      w = { failures: 0, resetAt: now + this.windowMs, inFlight: w.inFlight };
      this.windows.set(key, w);
    }
    if (!w) {
      this.prune(now);
      w = { failures: 0, resetAt: now + this.windowMs, inFlight: 0 };
      this.windows.set(key, w);
    }
    return w;
  }

  /** Drops expired, idle keys once the map grows, so that one-off addresses do not accumulate. */
  private prune(now: number): void {
    if (this.windows.size < 10_000) {
      return;
    }
    for (const [key, w] of this.windows) {
      if (w.resetAt <= now && w.inFlight === 0) {
        this.windows.delete(key);
      }
    }
  }
}
