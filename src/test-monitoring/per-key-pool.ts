/**
 * Runs tasks at most `limit` at a time per key (a CI host), every key side by side, so that
 * one slow or large service neither floods nor holds up the others. Tasks can be added while
 * others run: a refresh feeds the next claimed batch in before the current one is done, so the
 * limit is used to the full across batches. Tasks must not reject (failures are outcomes); a
 * rejection is passed to `onError` and counts as done.
 */
export class KeyedPool {
  private readonly queues = new Map<string, { waiting: (() => Promise<void>)[]; running: number }>();
  private pending = 0;
  private waiters: { below: number; resolve: () => void }[] = [];

  constructor(
    private readonly limit: number,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** Tasks queued or running. */
  get size(): number {
    return this.pending;
  }

  add(key: string, task: () => Promise<void>): void {
    let queue = this.queues.get(key);
    if (!queue) {
      queue = { waiting: [], running: 0 };
      this.queues.set(key, queue);
    }
    queue.waiting.push(task);
    this.pending++;
    this.pump(key);
  }

  /** Resolves once fewer than `count` tasks are queued or running. */
  whenBelow(count: number): Promise<void> {
    if (this.pending < count) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push({ below: count, resolve }));
  }

  /** Resolves once every task added so far is done. */
  idle(): Promise<void> {
    return this.whenBelow(1);
  }

  private pump(key: string): void {
    const queue = this.queues.get(key);
    if (!queue) {
      return;
    }
    while (queue.running < Math.max(1, this.limit) && queue.waiting.length > 0) {
      const task = queue.waiting.shift() as () => Promise<void>;
      queue.running++;
      void task()
        .catch(this.onError)
        .finally(() => {
          queue.running--;
          this.pending--;
          if (queue.running === 0 && queue.waiting.length === 0 && this.queues.get(key) === queue) {
            this.queues.delete(key);
          } else {
            this.pump(key);
          }
          this.notify();
        });
    }
  }

  private notify(): void {
    const ready = this.waiters.filter((waiter) => this.pending < waiter.below);
    if (ready.length > 0) {
      this.waiters = this.waiters.filter((waiter) => this.pending >= waiter.below);
      for (const waiter of ready) {
        waiter.resolve();
      }
    }
  }
}

/** The key of a service URL for per-host limits: its host (with port), lower-cased. */
export function hostKey(url: string): string {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return url.trim().toLowerCase();
  }
}
