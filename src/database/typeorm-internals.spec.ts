import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, type QueryRunner } from 'typeorm';
import { sqliteDriver } from './sqlite-driver.js';

/**
 * sqlite-serializer.ts reaches into TypeORM's better-sqlite3 driver: it replaces
 * `driver.createQueryRunner`, builds runners with `new (runner.constructor)(driver)`, shares
 * the `stmtCache` map between them and reads `transactionDepth` to find the outermost
 * transaction. None of that is public API. These tests pin each assumption on an unpatched
 * DataSource, so that a TypeORM upgrade that changes one fails here, by name, instead of
 * silently breaking transaction isolation on SQLite.
 */
interface SqliteRunnerInternals extends QueryRunner {
  transactionDepth: unknown;
  stmtCache: unknown;
}

describe('the TypeORM internals sqlite-serializer.ts relies on', () => {
  let dir: string;
  let dataSource: DataSource;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'typeorm-internals-'));
    dataSource = new DataSource({
      type: 'better-sqlite3',
      driver: sqliteDriver(),
      database: join(dir, 'db.sqlite'),
    });
    await dataSource.initialize();
  });

  afterEach(async () => {
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const runnerOf = (): SqliteRunnerInternals =>
    dataSource.driver.createQueryRunner('master') as SqliteRunnerInternals;

  it('the driver hands every caller one shared runner (why the serializer exists at all)', () => {
    expect(runnerOf()).toBe(runnerOf());
  });

  it('DataSource.createQueryRunner and transactions get their runner from driver.createQueryRunner', async () => {
    const original = dataSource.driver.createQueryRunner.bind(dataSource.driver);
    const made = jest.fn(original);
    dataSource.driver.createQueryRunner = made;
    dataSource.createQueryRunner();
    expect(made).toHaveBeenCalledTimes(1);
    await dataSource.transaction(() => Promise.resolve());
    expect(made).toHaveBeenCalledTimes(2);
  });

  it('a runner is built by its constructor from the driver alone and works on the one connection', async () => {
    const shared = runnerOf();
    const Runner = shared.constructor as new (driver: unknown) => SqliteRunnerInternals;
    const own = new Runner(dataSource.driver);
    expect(own).not.toBe(shared);
    await own.query('CREATE TABLE notes (id INTEGER PRIMARY KEY)');
    await own.query('INSERT INTO notes (id) VALUES (1)');
    await expect(shared.query('SELECT id FROM notes')).resolves.toEqual([{ id: 1 }]);
  });

  it('a runner keeps its prepared statements in a Map named stmtCache, which a second runner can share', async () => {
    const shared = runnerOf();
    expect(shared.stmtCache).toBeInstanceOf(Map);
    const Runner = shared.constructor as new (driver: unknown) => SqliteRunnerInternals;
    const own = new Runner(dataSource.driver);
    own.stmtCache = shared.stmtCache;
    await own.query('SELECT 1 AS one');
    expect([...(shared.stmtCache as Map<string, unknown>).keys()]).toContain('SELECT 1 AS one');
  });

  it('the driver writes a numeric parameter into the SQL text and binds the rest (why sqlite-parameters.ts exists)', () => {
    const escape = (parameters: Record<string, unknown>) =>
      dataSource.driver.escapeQueryWithParameters('SELECT :value AS value', parameters);
    expect(escape({ value: 1000 })).toEqual(['SELECT 1000 AS value', []]);
    // A boxed Number is an object to TypeORM: bound, and the box reaches the caller to unwrap.
    const boxed = new Number(1000);
    expect(escape({ value: boxed })).toEqual(['SELECT ? AS value', [boxed]]);
  });

  it('transactionDepth counts open transactions and savepoints, 0 outside any', async () => {
    const runner = runnerOf();
    expect(runner.transactionDepth).toBe(0);
    await runner.startTransaction();
    expect(runner.transactionDepth).toBe(1);
    await runner.startTransaction();
    expect(runner.transactionDepth).toBe(2);
    await runner.commitTransaction();
    expect(runner.transactionDepth).toBe(1);
    await runner.rollbackTransaction();
    expect(runner.transactionDepth).toBe(0);
  });

  it('start, commit and rollback are own methods the serializer can wrap per runner', () => {
    const runner = runnerOf();
    for (const name of ['query', 'startTransaction', 'commitTransaction', 'rollbackTransaction'] as const) {
      expect(typeof runner[name]).toBe('function');
    }
    // Wrapping assigns on the instance; the class's method must stay reachable for other runners.
    runner.query = () => Promise.reject(new Error('wrapped'));
    expect(typeof Object.getPrototypeOf(runner).query).toBe('function');
  });
});

/**
 * database-deadlines.ts reaches into TypeORM's MySQL/MariaDB driver: it wraps
 * `driver.obtainMasterConnection` (the pool acquisition, which mysql2 does not bound) and
 * `driver.createQueryRunner`, and expects a runner's `connect()` to hand back the pooled
 * connection (with `release` and `destroy`) that `obtainMasterConnection` gave. No server is
 * needed to pin that: the driver is built when the DataSource is, and the pool is stubbed.
 */
describe('the TypeORM internals database-deadlines.ts relies on', () => {
  const mariadb = (): DataSource =>
    new DataSource({ type: 'mariadb', host: '127.0.0.1', port: 1, username: 'u', database: 'd' });

  it('the MySQL driver has obtainMasterConnection and createQueryRunner of its own', () => {
    const driver = mariadb().driver;
    expect(Reflect.get(driver, 'obtainMasterConnection')).toEqual(expect.any(Function));
    expect(Reflect.get(driver, 'createQueryRunner')).toEqual(expect.any(Function));
  });

  it("a master runner's connect() resolves with what obtainMasterConnection gave, once", async () => {
    const dataSource = mariadb();
    const pooled = { release: () => undefined, destroy: () => undefined };
    const obtain = jest.fn(() => Promise.resolve(pooled));
    Object.assign(dataSource.driver, { obtainMasterConnection: obtain });
    const runner = dataSource.driver.createQueryRunner('master');
    await expect(runner.connect()).resolves.toBe(pooled);
    await expect(runner.connect()).resolves.toBe(pooled);
    expect(obtain).toHaveBeenCalledTimes(1);
  });
});
