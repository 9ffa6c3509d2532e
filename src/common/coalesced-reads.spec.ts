import { setImmediate as nextRound } from 'node:timers/promises';
import { CoalescedReads } from './coalesced-reads.js';

/** A read whose runs are counted and finish only when the test lets them. */
function gatedRead() {
  const runs: { key: string; finish: (value: string) => void; fail: (error: Error) => void }[] = [];
  const read = (key: string) =>
    new Promise<string>((finish, fail) => {
      runs.push({ key, finish, fail });
    });
  return { runs, read };
}

describe('CoalescedReads', () => {
  it('answers the reads of one round with one run per key', async () => {
    const { runs, read } = gatedRead();
    const reads = new CoalescedReads<string, string>((key) => key, read);

    const answers = Promise.all([reads.read('a'), reads.read('a'), reads.read('b'), reads.read('a')]);
    await nextRound();
    expect(runs.map((run) => run.key)).toEqual(['a', 'b']);
    runs[0].finish('A');
    runs[1].finish('B');

    expect(await answers).toEqual(['A', 'A', 'B', 'A']);
  });

  it('runs again for a read asked for after the round started, so it sees what changed since', async () => {
    const { runs, read } = gatedRead();
    const reads = new CoalescedReads<string, string>((key) => key, read);

    const first = reads.read('a');
    await nextRound();
    // The first run has started; a write commits; then the same read is asked for again.
    const second = reads.read('a');
    await nextRound();
    expect(runs).toHaveLength(2);
    runs[0].finish('before the write');
    runs[1].finish('after the write');

    expect(await first).toBe('before the write');
    expect(await second).toBe('after the write');
  });

  it("gives every sharer the run's error, and keeps nothing for the next round", async () => {
    const { runs, read } = gatedRead();
    const reads = new CoalescedReads<string, string>((key) => key, read);
    const failure = new Error('not found');

    const shared = [reads.read('a'), reads.read('a')];
    await nextRound();
    runs[0].fail(failure);
    await expect(shared[0]).rejects.toBe(failure);
    await expect(shared[1]).rejects.toBe(failure);

    const later = reads.read('a');
    await nextRound();
    expect(runs).toHaveLength(2);
    runs[1].finish('found');
    expect(await later).toBe('found');
  });

  it('keeps keys apart by their key function, not by identity', async () => {
    const { runs, read } = gatedRead();
    const reads = new CoalescedReads<{ uuid: string; viewer: number }, string>(
      (key) => `${key.uuid}/${key.viewer}`,
      (key) => read(`${key.uuid}/${key.viewer}`),
    );

    const answers = Promise.all([
      reads.read({ uuid: 'w', viewer: 1 }),
      reads.read({ uuid: 'w', viewer: 1 }),
      reads.read({ uuid: 'w', viewer: 2 }),
    ]);
    await nextRound();
    expect(runs.map((run) => run.key)).toEqual(['w/1', 'w/2']);
    runs[0].finish('owner');
    runs[1].finish('stranger');
    expect(await answers).toEqual(['owner', 'owner', 'stranger']);
  });
});
