import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { dataSourceOptions, openDataSource, SQLITE_CACHE_KIB } from '../../src/database/data-source.js';
import { loadConfig } from '../../src/config/app-config.js';
import { baseTestEnv, createTestApp, createTestDatabase, testDatabase } from '../support/create-test-app.js';

describe(`database schema (${testDatabase()})`, () => {
  it('has no drift between the migrations and the entities of every module', async () => {
    const t = await createTestApp();
    try {
      const dataSource = t.app.get(DataSource);
      const pending = await dataSource.driver.createSchemaBuilder().log();
      expect(pending.upQueries.map((query) => query.query)).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('runs every migration down and up again', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'migrations-'));
    const database = await createTestDatabase(dataDir);
    const config = loadConfig(baseTestEnv(dataDir, database.url));
    let dataSource: DataSource | undefined;
    try {
      dataSource = await openDataSource(dataSourceOptions(config));
      for (let i = 0; i < dataSource.migrations.length; i++) {
        await dataSource.undoLastMigration({ transaction: 'each' });
      }
      expect(await dataSource.showMigrations()).toBe(true);
      await dataSource.runMigrations({ transaction: 'each' });
      expect(await dataSource.showMigrations()).toBe(false);
    } finally {
      await dataSource?.destroy();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe(`a second start (${testDatabase()})`, () => {
  it('finds every migration applied and runs none', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'second-start-'));
    const database = await createTestDatabase(dataDir);
    const options = dataSourceOptions(loadConfig(baseTestEnv(dataDir, database.url)));
    try {
      const first = await openDataSource(options);
      const applied = await first.query<unknown[]>('SELECT * FROM migrations');
      if (options.type === 'better-sqlite3') {
        expect(await first.query('PRAGMA cache_size')).toEqual([{ cache_size: -SQLITE_CACHE_KIB }]);
      }
      await first.destroy();

      const second = await openDataSource(options);
      try {
        expect(await second.showMigrations()).toBe(false);
        await expect(second.runMigrations()).resolves.toEqual([]);
        expect(await second.query<unknown[]>('SELECT * FROM migrations')).toHaveLength(applied.length);
      } finally {
        await second.destroy();
      }
    } finally {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe(`exact comparison of keys (${testDatabase()})`, () => {
  it.each([
    ['only in case', 'Casey', 'casey', 'CASEY'],
    ['only by a trailing space', 'trail', 'trail ', 'trail  '],
  ])(
    'treats usernames that differ %s as different users, on every database',
    async (_how, first, second, neither) => {
      const t = await createTestApp();
      try {
        const auth = { Authorization: `Bearer ${await t.login()}` };
        await t.http
          .post('/api/v1/users')
          .set(auth)
          .send({ username: first, password: 'first-password' })
          .expect(201);
        await t.http
          .post('/api/v1/users')
          .set(auth)
          .send({ username: second, password: 'second-password' })
          .expect(201);
        await t.login(first, 'first-password');
        await t.login(second, 'second-password');
        const other = await t.http
          .post('/api/v1/auth')
          .send({ username: neither, password: 'first-password' });
        expect(other.status).toBe(403);
      } finally {
        await t.close();
      }
    },
  );
});
