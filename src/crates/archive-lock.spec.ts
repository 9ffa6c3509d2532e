import { DataSource } from 'typeorm';
import { ARCHIVE_WRITERS, ArchiveLock } from './archive-lock.js';
import { sqliteDriver } from '../database/sqlite-driver.js';

/** A piece of work that starts when the lock lets it and ends when the test says so. */
function gate(): { started: boolean; work: () => Promise<string>; finish: (error?: Error) => void } {
  let end!: (error?: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    end = (error) => (error ? reject(error) : resolve());
  });
  const state = {
    started: false,
    work: async () => {
      state.started = true;
      await done;
      return 'done';
    },
    finish: (error?: Error) => end(error),
  };
  return state;
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
};

const sha = (n: number): string => n.toString(16).padStart(64, '0');

describe('ArchiveLock', () => {
  // On SQLite the named lock is nothing; the rules below are this process's own.
  const lock = (): ArchiveLock =>
    new ArchiveLock(new DataSource({ type: 'better-sqlite3', driver: sqliteDriver(), database: ':memory:' }));

  it('runs writes of one archive one after another, also after one of them failed', async () => {
    const archives = lock();
    const [first, second, third] = [gate(), gate(), gate()];
    const one = archives.exclusive(sha(1), first.work);
    const two = archives.exclusive(sha(1), second.work);
    const three = archives.exclusive(sha(1), third.work);
    await settle();
    expect([first.started, second.started, third.started]).toEqual([true, false, false]);
    first.finish(new Error('disk full'));
    await expect(one).rejects.toThrow('disk full');
    await settle();
    expect([second.started, third.started]).toEqual([true, false]);
    second.finish();
    await expect(two).resolves.toBe('done');
    await settle();
    expect(third.started).toBe(true);
    third.finish();
    await expect(three).resolves.toBe('done');
  });

  it('runs writes of different archives side by side, at most ARCHIVE_WRITERS at once', async () => {
    const archives = lock();
    const gates = Array.from({ length: ARCHIVE_WRITERS + 2 }, () => gate());
    const runs = gates.map((g, i) => archives.exclusive(sha(i + 10), g.work));
    await settle();
    expect(gates.filter((g) => g.started)).toHaveLength(ARCHIVE_WRITERS);
    expect(gates.slice(0, ARCHIVE_WRITERS).every((g) => g.started)).toBe(true);
    gates[3].finish();
    await settle();
    expect(gates.filter((g) => g.started)).toHaveLength(ARCHIVE_WRITERS + 1);
    expect(gates[ARCHIVE_WRITERS].started).toBe(true);
    for (const g of gates) {
      g.finish();
    }
    await expect(Promise.all(runs)).resolves.toHaveLength(ARCHIVE_WRITERS + 2);
  });

  it('lets a write of an archive wait for its own archive only', async () => {
    const archives = lock();
    const [busy, same, other] = [gate(), gate(), gate()];
    const runs = [
      archives.exclusive(sha(1), busy.work),
      archives.exclusive(sha(1), same.work),
      archives.exclusive(sha(2), other.work),
    ];
    await settle();
    expect([busy.started, same.started, other.started]).toEqual([true, false, true]);
    other.finish();
    busy.finish();
    await settle();
    expect(same.started).toBe(true);
    same.finish();
    await Promise.all(runs);
  });
});
