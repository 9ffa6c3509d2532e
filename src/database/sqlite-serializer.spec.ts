import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { serializeSqliteTransactions } from './sqlite-serializer.js';
import { sqliteDriver } from './sqlite-driver.js';

describe('serializeSqliteTransactions', () => {
  let dir: string;
  let dataSource: DataSource;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sqlite-serializer-'));
    dataSource = new DataSource({
      type: 'better-sqlite3',
      driver: sqliteDriver(),
      database: join(dir, 'db.sqlite'),
    });
    await dataSource.initialize();
    serializeSqliteTransactions(dataSource);
    await dataSource.query('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)');
  });

  afterEach(async () => {
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const texts = async (): Promise<string[]> =>
    (await dataSource.query<{ text: string }[]>('SELECT text FROM notes ORDER BY text')).map(
      (row) => row.text,
    );
  const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

  it('keeps a write made by another request while a transaction is open, when that transaction rolls back', async () => {
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const failing = dataSource.transaction(async (tx) => {
      await tx.query("INSERT INTO notes (text) VALUES ('inside')");
      opened();
      await tick();
      throw new Error('the registration failed');
    });
    await open;
    const outside = dataSource.query("INSERT INTO notes (text) VALUES ('outside')");
    await expect(failing).rejects.toThrow('the registration failed');
    await outside;
    expect(await texts()).toEqual(['outside']);
  });

  it('runs concurrent transactions one after the other, each committing or rolling back alone', async () => {
    const results = await Promise.allSettled(
      ['a', 'b', 'c', 'd'].map((text) =>
        dataSource.transaction(async (tx) => {
          await tx.query('INSERT INTO notes (text) VALUES (?)', [text]);
          await tick();
          await tx.query('INSERT INTO notes (text) VALUES (?)', [`${text}-2`]);
          if (text === 'b') {
            throw new Error('b fails');
          }
        }),
      ),
    );
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect(await texts()).toEqual(['a', 'a-2', 'c', 'c-2', 'd', 'd-2']);
  });

  it('ends with an error instead of hanging when a transaction waits on a query outside itself', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const deadlock = dataSource.transaction(async (tx) => {
        await tx.query("INSERT INTO notes (text) VALUES ('mine')");
        // A mistake in a repository: the query should have gone through `tx`.
        await dataSource.query('SELECT count(*) FROM notes');
      });
      const settled = deadlock.then(
        () => 'resolved',
        (error: Error) => error.message,
      );
      await jest.advanceTimersByTimeAsync(10_001);
      await expect(settled).resolves.toMatch(/^SQLITE_BUSY/);
    } finally {
      jest.useRealTimers();
    }
    expect(await texts()).toEqual([]);
  });

  describe('releases the lock on every way a transaction ends', () => {
    it('when SQLite ended the transaction itself, so that COMMIT and then ROLLBACK both fail', async () => {
      // What SQLITE_FULL at COMMIT does on a full disk: SQLite rolls back, and TypeORM's ROLLBACK
      // then fails with "no transaction is active". (The real full disk: full-disk.sqlite.e2e-spec.ts.)
      const failing = dataSource.transaction(async (tx) => {
        await tx.query("INSERT INTO notes (text) VALUES ('lost')");
        await tx.query('ROLLBACK');
      });
      await expect(failing).rejects.toThrow(/no transaction is active/);
      await dataSource.query("INSERT INTO notes (text) VALUES ('after')");
      await dataSource.transaction((tx) => tx.query("INSERT INTO notes (text) VALUES ('in a transaction')"));
      expect(await texts()).toEqual(['after', 'in a transaction']);
    });

    it('when COMMIT fails with the transaction still open: the rollback undoes it and frees the lock', async () => {
      await dataSource.query('CREATE TABLE parents (id INTEGER PRIMARY KEY)');
      await dataSource.query(
        'CREATE TABLE children (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)',
      );
      await dataSource.query('PRAGMA foreign_keys = ON');
      const failing = dataSource.transaction(async (tx) => {
        await tx.query("INSERT INTO notes (text) VALUES ('undone')");
        // Checked only at COMMIT, which fails and leaves the transaction open.
        await tx.query('INSERT INTO children (parent) VALUES (42)');
      });
      await expect(failing).rejects.toThrow(/FOREIGN KEY/);
      await dataSource.query("INSERT INTO notes (text) VALUES ('after')");
      expect(await texts()).toEqual(['after']);
    });

    it('when a runner is released with its transaction open: rolled back, and the lock is free', async () => {
      const runner = dataSource.createQueryRunner();
      await runner.startTransaction();
      await runner.query("INSERT INTO notes (text) VALUES ('abandoned')");
      await runner.release();
      await dataSource.query("INSERT INTO notes (text) VALUES ('after')");
      expect(await texts()).toEqual(['after']);
    });

    it('when the rollback itself fails', async () => {
      const runner = dataSource.createQueryRunner();
      await runner.startTransaction();
      await runner.query("INSERT INTO notes (text) VALUES ('gone')");
      await runner.query('ROLLBACK');
      await expect(runner.rollbackTransaction()).rejects.toThrow(/no transaction is active/);
      await dataSource.query("INSERT INTO notes (text) VALUES ('after')");
      await runner.release();
      expect(await texts()).toEqual(['after']);
    });
  });
});
