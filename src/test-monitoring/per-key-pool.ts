/**
 * Runs `work` for every item, at most `limit` at a time for items of one key (a CI host) and
 * every key in parallel, so that one slow or large service neither floods nor holds up the
 * others. Resolves when all are done; `work` must not reject (failures are outcomes).
 */
export async function runPerKey<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const queues = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const queue = queues.get(key);
    if (queue) {
      queue.push(item);
    } else {
      queues.set(key, [item]);
    }
  }
  const workers: Promise<void>[] = [];
  for (const queue of queues.values()) {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < queue.length) {
        const item = queue[next++];
        await work(item);
      }
    };
    for (let i = 0; i < Math.min(Math.max(1, limit), queue.length); i++) {
      workers.push(worker());
    }
  }
  await Promise.all(workers);
}

/** The key of a service URL for per-host limits: its host (with port), lower-cased. */
export function hostKey(url: string): string {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return url.trim().toLowerCase();
  }
}
