import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DataSource } from 'typeorm';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { HOT_READS } from '../support/hot-reads.js';
import {
  captureQueries,
  fullScansOf,
  sortsPerRowOf,
  stopClaimTickers,
  GROWING_TABLES,
  isPlannable,
  unindexedForeignKeys,
} from '../support/query-plans.js';
import { FIXTURE_CRATES } from '../support/registry.js';
import { seedMachines, seedManagedRuns, seededUuid, seedWorkflows } from '../support/registry-seed.mjs';
import { LIST_BATCH } from '../../src/workflows/workflow-lists.service.js';

/**
 * Enough rows that MariaDB's optimizer prefers an index wherever one serves, and that the
 * whole list takes more than two batches.
 */
const SEEDED = 2 * LIST_BATCH + 123;
/** Starts of nodes recorded (area C), most of them long stopped. */
const SEEDED_STARTS = 3000;
/** Managed runs (API.md 17) of the first instances, nearly all long finished. */
const SEEDED_RUNS = 3000;
/** Of them, queued and due: more than the claims of the hot reads take. */
const QUEUED_RUNS = 60;
/** A workflow in the middle, neither first nor last by any order. */
const READ = 217;

describe(`the registry at scale: indexes, query plans, the whole list (${testDatabase()})`, () => {
  let t: TestApp;
  let dataSource: DataSource;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp();
    dataSource = t.app.get(DataSource);
    // Their ticks (every second or so) would add statements to whichever capture they fall in.
    expect(await stopClaimTickers(t.app)).toBeGreaterThanOrEqual(3);
    token = await t.login();
    const [admin] = await dataSource.query<{ id: number | string }[]>(
      'SELECT id FROM users WHERE username = ?',
      ['admin'],
    );
    const bytes = readFileSync(FIXTURE_CRATES.lifemonitorExample);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const stored = join(t.dataDir, 'crates', sha256.slice(0, 2), `${sha256}.zip`);
    mkdirSync(dirname(stored), { recursive: true });
    copyFileSync(FIXTURE_CRATES.lifemonitorExample, stored);
    await dataSource.transaction((tx) =>
      seedWorkflows((sql, params) => tx.query(sql, params), {
        ownerId: Number(admin.id),
        count: SEEDED,
        archive: { sha256, size: bytes.length },
        serviceUrl: 'http://127.0.0.1:9',
      }),
    );
    await dataSource.transaction((tx) =>
      seedMachines((sql, params) => tx.query(sql, params), { count: SEEDED_STARTS }),
    );
    await dataSource.transaction((tx) =>
      seedManagedRuns((sql, params) => tx.query(sql, params), {
        count: SEEDED_RUNS,
        instances: 50,
        queued: QUEUED_RUNS,
      }),
    );
    if (testDatabase() === 'mariadb') {
      // Statistics as a server that has seen the rows would have them.
      await dataSource.query(`ANALYZE TABLE ${GROWING_TABLES.join(', ')}`);
    }
  });

  afterAll(async () => {
    await t?.close();
  });

  it('has an index led by every foreign key column', async () => {
    expect(await unindexedForeignKeys(dataSource)).toEqual([]);
  });

  it.each(HOT_READS.map((read) => [read.name, read] as const))(
    '%s scans no growing table',
    async (_name, read) => {
      const queries = await captureQueries(dataSource, async () => {
        if (read.path) {
          await t.http.get(read.path(READ)).set('Authorization', `Bearer ${token}`).expect(200);
        }
        await read.run?.(t);
      });
      const plannable = queries.filter((query) => isPlannable(query.sql));
      expect(plannable.length).toBeGreaterThan(0);
      const scans = [];
      for (const query of plannable) {
        for (const scan of await fullScansOf(dataSource, query)) {
          scans.push({ ...scan, sql: query.sql });
        }
      }
      expect(scans).toEqual([]);
    },
  );

  // A sort in a correlated subquery is one per row of the outer query: a list's batch of 250
  // workflows sorted each instance's finished builds on MariaDB (the latest finished build).
  it.each(HOT_READS.map((read) => [read.name, read] as const))(
    '%s sorts nothing per row',
    async (_name, read) => {
      const queries = await captureQueries(dataSource, async () => {
        if (read.path) {
          await t.http.get(read.path(READ)).set('Authorization', `Bearer ${token}`).expect(200);
        }
        await read.run?.(t);
      });
      const sorts = [];
      for (const query of queries.filter((captured) => isPlannable(captured.sql))) {
        for (const plan of await sortsPerRowOf(dataSource, query)) {
          sorts.push({ plan, sql: query.sql });
        }
      }
      expect(sorts).toEqual([]);
    },
  );

  // On SQLite a statement is prepared per SQL text (and kept in a cache of 100): a read that
  // writes a row's id into its text prepares anew for every row, and the discarded statements'
  // native memory waits for V8's collector.
  it.each(HOT_READS.map((read) => [read.name, read] as const))(
    '%s sends the same SQL texts whichever row it reads',
    async (_name, read) => {
      const textsOf = async (index: number): Promise<string[]> => {
        const queries = await captureQueries(dataSource, async () => {
          if (read.path) {
            await t.http.get(read.path(index)).set('Authorization', `Bearer ${token}`).expect(200);
          }
          await read.run?.(t);
        });
        return [...new Set(queries.map((query) => query.sql))].sort();
      };
      const first = await textsOf(READ + 1);
      const second = await textsOf(READ + 2);
      expect(first.length).toBeGreaterThan(0);
      const onlyIn = (texts: string[], other: string[]) => texts.filter((text) => !other.includes(text));
      // A text with a row's id is in one read only, and the other read has one of its own. A
      // cache that expires in between (the caller's account) adds statements to one side only.
      const own = { first: onlyIn(first, second), second: onlyIn(second, first) };
      expect(own.first.length === 0 || own.second.length === 0 ? {} : own).toEqual({});
    },
  );

  // Each statement is a round trip to MariaDB: these reads send a fixed few whatever the rows (none
  // per row, no lookup repeated), once the caller's account is cached by the read just before.
  it.each([
    ['list page', 3, '/users/current/workflows?limit=20'],
    ['status', 4, `/workflows/${seededUuid('workflow', READ)}/status`],
  ])('%s sends %i statements', async (_name, count, path) => {
    const read = () => t.http.get(path).set('Authorization', `Bearer ${token}`).expect(200);
    await read();
    const queries = await captureQueries(dataSource, async () => {
      await read();
    });
    expect(queries.map((query) => query.sql)).toHaveLength(count);
  });

  describe('the whole list (no limit)', () => {
    const list = (query: string) =>
      t.http.get(`/users/current/workflows${query}`).set('Authorization', `Bearer ${token}`);
    const uuids = (body: { items: { uuid: string }[] }): string[] => body.items.map((item) => item.uuid);

    it('is streamed batch by batch as one JSON document, in the order and with the items of its pages', async () => {
      const whole = await list('')
        .expect(200)
        .expect('Content-Type', /^application\/json/);
      const pages = [];
      for (let offset = 0; offset < SEEDED; offset += 1000) {
        pages.push(...(await list(`?limit=1000&offset=${offset}`).expect(200)).body.items);
      }
      expect(whole.body.items).toHaveLength(SEEDED);
      expect(whole.body.items).toEqual(pages);
      // Seeded in one registration time: the order is that of the versions' ids.
      expect(uuids(whole.body)).toEqual(
        Array.from({ length: SEEDED }, (_, i) => seededUuid('workflow', SEEDED - 1 - i)),
      );
      expect(whole.body.items[0].status).toEqual({
        aggregate_test_status: 'all_passing',
        latest_build: expect.objectContaining({ build_id: `${SEEDED - 1}2`, status: 'passed' }),
      });
    });

    it('starts at offset, across batches', async () => {
      const rest = await list(`?offset=${LIST_BATCH - 7}&status=false`).expect(200);
      expect(uuids(rest.body)).toEqual(
        Array.from({ length: SEEDED - LIST_BATCH + 7 }, (_, i) =>
          seededUuid('workflow', SEEDED - LIST_BATCH + 6 - i),
        ),
      );
      expect(rest.body.items[0]).not.toHaveProperty('status');
    });

    it('is an empty list past its end', async () => {
      expect((await list(`?offset=${SEEDED}`).expect(200)).body).toEqual({ items: [] });
    });
  });

  describe('conditional reads (ETag, If-None-Match)', () => {
    const top = SEEDED - 1;
    const read = (path: string, headers: Record<string, string> = {}) =>
      t.http.get(path).set({ Authorization: `Bearer ${token}`, ...headers });
    const finish = (index: number) =>
      dataSource.query('UPDATE builds SET status = ? WHERE build_id = ?', ['failed', `${index}2`]);

    it.each([
      ['status', `/workflows/${seededUuid('workflow', top)}/status`],
      ['suite status', `/suites/${seededUuid('suite', top)}/status`],
      ['instance builds', `/instances/${seededUuid('instance', top)}/latest-builds`],
      ['list page', '/users/current/workflows?limit=5'],
    ])('%s: 304 while unchanged, a new ETag once a build changed', async (_name, path) => {
      await dataSource.query('UPDATE builds SET status = ? WHERE build_id = ?', ['passed', `${top}2`]);
      const first = await read(path).expect(200);
      const etag = String(first.headers.etag);
      expect(etag).toMatch(/^"[\w-]{27}"$/);
      expect(first.headers['cache-control']).toBe('private, no-cache');
      expect(first.headers['content-type']).toMatch(/^application\/json/);

      // fetch() sends Cache-Control: no-cache with its own If-None-Match: still a 304.
      const again = await read(path, { 'If-None-Match': `"other", ${etag}`, 'Cache-Control': 'no-cache' });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.etag).toBe(etag);

      await finish(top);
      const changed = await read(path, { 'If-None-Match': etag }).expect(200);
      expect(changed.headers.etag).not.toBe(etag);
      expect(JSON.stringify(changed.body)).toContain('failed');
    });

    it.each([
      ['workflow', `/workflows/${seededUuid('workflow', READ)}`],
      ['workflow version', `/workflows/${seededUuid('workflow', READ)}/versions/1.0`],
      ['versions', `/workflows/${seededUuid('workflow', READ)}/versions`],
    ])('%s: 304 to its ETag, 200 to another', async (_name, path) => {
      const first = await read(path).expect(200);
      const etag = String(first.headers.etag);
      expect((await read(path, { 'If-None-Match': etag })).status).toBe(304);
      expect((await read(path, { 'If-None-Match': `W/${etag}` })).status).toBe(304);
      const other = await read(path, { 'If-None-Match': '"something-else"' }).expect(200);
      expect(other.body).toEqual(first.body);
      expect(other.headers.etag).toBe(etag);
    });

    it('tags a whole list answered at once, and not one streamed in batches', async () => {
      const short = await read(`/users/current/workflows?offset=${SEEDED - 3}`).expect(200);
      expect(short.body.items).toHaveLength(3);
      expect(
        (
          await read(`/users/current/workflows?offset=${SEEDED - 3}`, {
            'If-None-Match': String(short.headers.etag),
          })
        ).status,
      ).toBe(304);
      const streamed = await read('/users/current/workflows?status=false').expect(200);
      expect(streamed.body.items).toHaveLength(SEEDED);
      expect(streamed.headers).not.toHaveProperty('etag');
    });

    it('answers a whole list of LIST_BATCH at once, and streams one of a workflow more', async () => {
      const full = await read(`/users/current/workflows?offset=${SEEDED - LIST_BATCH}&status=false`).expect(
        200,
      );
      expect(full.body.items).toHaveLength(LIST_BATCH);
      expect(full.headers.etag).toBeDefined();
      const longer = await read(
        `/users/current/workflows?offset=${SEEDED - LIST_BATCH - 1}&status=false`,
      ).expect(200);
      const uuids = (body: { items: { uuid: string }[] }): string[] => body.items.map((item) => item.uuid);
      expect(uuids(longer.body)).toEqual([seededUuid('workflow', LIST_BATCH), ...uuids(full.body)]);
      expect(longer.headers).not.toHaveProperty('etag');
    });

    it('answers 404, not 304, for a workflow that is not visible, whatever the If-None-Match', async () => {
      const other = await t.userToken();
      const response = await t.http
        .get(`/workflows/${seededUuid('workflow', READ)}/status`)
        .set({ Authorization: `Bearer ${other}`, 'If-None-Match': '*' });
      expect(response.status).toBe(404);
      expect(response.headers).not.toHaveProperty('etag');
    });
  });
});
