import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Column, DataSource, Entity, PrimaryColumn } from 'typeorm';
import { incrementAndRead, insertMissing, lockRows, underNamedLock } from './dialect.js';
import { serializeSqliteTransactions } from './sqlite-serializer.js';
import { sqliteDriver } from './sqlite-driver.js';

@Entity('counters')
class CounterEntity {
  @PrimaryColumn({ type: 'varchar', length: 16 })
  name!: string;

  @Column({ name: 'next_id', type: 'integer' })
  nextId!: number;
}

// The MariaDB side of each operation runs in the e2e suites on a real server (scale-out,
// orchestration-dummy-store, registry); here the SQLite side, and what both promise.
describe('dialect on SQLite', () => {
  let dir: string;
  let dataSource: DataSource;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dialect-'));
    dataSource = new DataSource({
      type: 'better-sqlite3',
      driver: sqliteDriver(),
      database: join(dir, 'db.sqlite'),
      entities: [CounterEntity],
      synchronize: true,
    });
    await dataSource.initialize();
    serializeSqliteTransactions(dataSource);
  });

  afterEach(async () => {
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('inserts the missing rows and leaves those whose key is taken as they are', async () => {
    await insertMissing(dataSource.manager, CounterEntity, [{ name: 'a', nextId: 1 }]);
    await insertMissing(dataSource.manager, CounterEntity, [
      { name: 'a', nextId: 99 },
      { name: 'b', nextId: 5 },
    ]);
    await insertMissing(dataSource.manager, CounterEntity, []);
    const rows = await dataSource.getRepository(CounterEntity).find({ order: { name: 'ASC' } });
    expect(rows.map((row) => [row.name, row.nextId])).toEqual([
      ['a', 1],
      ['b', 5],
    ]);
  });

  it('hands out each counter value once, also to concurrent callers, and nothing for a missing row', async () => {
    await insertMissing(dataSource.manager, CounterEntity, [{ name: 'c', nextId: 1 }]);
    const values = await Promise.all(
      Array.from({ length: 10 }, () => incrementAndRead(dataSource, 'counters', 'next_id', 'name', 'c')),
    );
    expect([...values].sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    await expect(
      incrementAndRead(dataSource, 'counters', 'next_id', 'name', 'none'),
    ).resolves.toBeUndefined();
  });

  it('reads without a row lock (one writer holds the whole database) and runs named-lock work directly', async () => {
    const query = dataSource.getRepository(CounterEntity).createQueryBuilder('c');
    expect(lockRows(query, 'write').getQuery()).not.toMatch(/FOR UPDATE/i);
    await expect(underNamedLock(dataSource, 'x', 1, () => Promise.resolve(7))).resolves.toBe(7);
  });
});
