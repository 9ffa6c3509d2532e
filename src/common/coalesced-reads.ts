import DataLoader from 'dataloader';

/**
 * Identical reads that arrive together share one computation: the reads asked for with the same
 * key while the event loop handles one round of incoming requests are answered by a single run
 * of `read`, started once that round is over (setImmediate). A read asked for after that run
 * has started waits for the next round and runs again, so every answer was computed after its
 * request arrived: nothing is served from before a write the caller may have seen commit.
 * Nothing is kept once a round is answered; an error is every sharer's error.
 *
 * For hot reads that many clients poll at once (a status that dashboards and badges ask for):
 * under load, the requests of one round cost one computation instead of one each.
 */
export class CoalescedReads<K, V> {
  private readonly loader: DataLoader<K, V>;

  constructor(keyOf: (key: K) => string, read: (key: K) => Promise<V>) {
    this.loader = new DataLoader<K, V>(
      (keys) => {
        const runs = new Map<string, Promise<V | Error>>();
        return Promise.all(
          keys.map((key) => {
            const id = keyOf(key);
            let run = runs.get(id);
            if (run === undefined) {
              run = read(key).catch((error: unknown) =>
                error instanceof Error ? error : new Error(String(error)),
              );
              runs.set(id, run);
            }
            return run;
          }),
        );
      },
      // No memo across rounds (that would be a cache without invalidation); one round is what
      // the event loop gathers before its check phase.
      { cache: false, batchScheduleFn: (dispatch) => setImmediate(dispatch) },
    );
  }

  read(key: K): Promise<V> {
    return this.loader.load(key);
  }
}
