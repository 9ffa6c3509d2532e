// Area B's reads at 1,000 and at 100,000 workflows, on SQLite and on a throwaway MariaDB: the
// built service over HTTP, `BENCH_CONNECTIONS` (50) connections for `BENCH_SECONDS` (3) per read
// and size, each request on a workflow picked at random among those seeded. The registry is
// seeded in bulk (test/support/registry-seed.mjs: one suite, one GitHub instance, three builds per
// workflow), straight into the database of the running service, which has nothing cached.
// Prints p50/p99 and req/s per read and size, the p50 ratio (target ≤ 1.2), the whole list
// without limit at 100,000 (time, RSS growth), and the service's idle RSS and RSS after load.
// Asserts nothing. `BENCH_SCALE_LARGE` changes the large size.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { createConnection } from 'mysql2/promise';
import { startMariaDb, stopMariaDb } from '../support/mariadb-server.mjs';
import { SEEDED_VERSION, seededUuid, seedWorkflows } from '../support/registry-seed.mjs';
import { memoryOf, startService } from './service.mjs';

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SIZES = [1_000, Number(process.env.BENCH_SCALE_LARGE ?? 100_000)];
const CRATE = 'test/fixtures/crates/lifemonitor-example-wf-crate.zip';
const MIB = 1024 * 1024;

/** Each read's path for the seeded workflow number `i`. */
const READS = [
  ['list page (limit=20)', () => '/users/current/workflows?limit=20'],
  ['workflow', (i) => `/workflows/${seededUuid('workflow', i)}`],
  ['versions', (i) => `/workflows/${seededUuid('workflow', i)}/versions`],
  ['suites', (i) => `/workflows/${seededUuid('workflow', i)}/suites`],
  ['status', (i) => `/workflows/${seededUuid('workflow', i)}/status`],
  ['suite status', (i) => `/suites/${seededUuid('suite', i)}/status`],
  ['instance builds', (i) => `/instances/${seededUuid('instance', i)}/latest-builds`],
  ['download', (i) => `/workflows/${seededUuid('workflow', i)}/rocrate/${SEEDED_VERSION}/download`],
];

function load(url, headers, path, size, duration = seconds) {
  return autocannon({
    url,
    connections,
    duration,
    requests: [
      {
        method: 'GET',
        headers,
        setupRequest: (request) => ({ ...request, path: path(Math.floor(Math.random() * size)) }),
      },
    ],
  });
}

/** A database to seed: `exec` for registry-seed, inside `transaction`. */
async function sqliteSeeder(file) {
  const db = new Database(file);
  db.pragma('busy_timeout = 10000');
  const exec = async (sql, params) => {
    const statement = db.prepare(sql);
    return statement.reader ? statement.all(params) : (statement.run(params), []);
  };
  return {
    exec,
    async transaction(work) {
      db.exec('BEGIN IMMEDIATE');
      try {
        await work();
        db.exec('COMMIT');
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
    },
    async analyze() {},
    async close() {
      db.close();
    },
  };
}

async function mariadbSeeder(url) {
  const connection = await createConnection(url);
  const exec = async (sql, params) => (await connection.query(sql, params))[0];
  return {
    exec,
    async transaction(work) {
      await connection.query('BEGIN');
      try {
        await work();
        await connection.query('COMMIT');
      } catch (error) {
        await connection.query('ROLLBACK');
        throw error;
      }
    },
    async analyze() {
      // A server that saw the rows arrive one registration at a time would have these statistics.
      await connection.query(
        'ANALYZE TABLE users, workflows, workflow_versions, test_suites, test_instances, test_check_states, builds',
      );
    },
    async close() {
      await connection.end();
    },
  };
}

async function measureDatabase(name, dataDir, env, seederOf) {
  const service = await startService(dataDir, env);
  const lines = [];
  try {
    const idle = memoryOf(service.child.pid).rss;
    const token = await service.login();
    const headers = { authorization: `Bearer ${token}` };
    const bytes = readFileSync(CRATE);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const stored = join(dataDir, 'crates', sha256.slice(0, 2), `${sha256}.zip`);
    mkdirSync(dirname(stored), { recursive: true });
    copyFileSync(CRATE, stored);
    const seeder = await seederOf();
    const [admin] = await seeder.exec('SELECT id FROM users WHERE username = ?', ['admin']);
    const results = new Map();
    let seeded = 0;
    for (const size of SIZES) {
      const started = performance.now();
      await seeder.transaction(() =>
        seedWorkflows(seeder.exec, {
          ownerId: Number(admin.id),
          from: seeded,
          count: size - seeded,
          archive: { sha256, size: bytes.length },
          serviceUrl: 'http://127.0.0.1:9',
        }),
      );
      await seeder.analyze();
      lines.push(
        `${name}: seeded ${size - seeded} workflows in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
      seeded = size;
      // Warm-up: JIT, connection pool and the database's page cache, so that both sizes start alike.
      for (const [, path] of READS) {
        await load(service.url, headers, path, size, 1);
      }
      for (const [read, path] of READS) {
        const check = await fetch(`${service.url}${path(size - 1)}`, { headers });
        if (check.status !== 200) {
          throw new Error(`${read} answered ${check.status} at ${size}`);
        }
        await check.arrayBuffer();
        const result = await load(service.url, headers, path, size);
        results.set(`${read} ${size}`, {
          p50: result.latency.p50,
          p99: result.latency.p99,
          rps: Math.round(result.requests.average),
          errors: result.errors + result.non2xx + result.timeouts,
        });
      }
    }
    const before = memoryOf(service.child.pid).rss;
    const started = performance.now();
    const whole = await fetch(`${service.url}/users/current/workflows`, { headers });
    let received = 0;
    let peak = before;
    for await (const chunk of whole.body) {
      received += chunk.length;
      peak = Math.max(peak, memoryOf(service.child.pid).rss);
    }
    const wholeMs = performance.now() - started;
    const afterLoad = memoryOf(service.child.pid);
    await seeder.close();

    const [small, large] = SIZES;
    const header = `| read | N = ${small.toLocaleString('en')} p50 / p99 ms | req/s | N = ${large.toLocaleString('en')} p50 / p99 ms | req/s | p50 ratio | errors |`;
    lines.push(
      '',
      `${name}, ${connections} connections, ${seconds} s per read and size`,
      header,
      '|---|---|---|---|---|---|---|',
    );
    for (const [read] of READS) {
      const a = results.get(`${read} ${small}`);
      const b = results.get(`${read} ${large}`);
      lines.push(
        `| ${read} | ${a.p50} / ${a.p99} | ${a.rps} | ${b.p50} / ${b.p99} | ${b.rps} | ${(b.p50 / Math.max(a.p50, 1)).toFixed(2)} | ${a.errors + b.errors} |`,
      );
    }
    lines.push(
      `whole list without limit at ${large.toLocaleString('en')}: status ${whole.status}, ${(received / MIB).toFixed(1)} MiB in ${(wholeMs / 1000).toFixed(2)} s, ` +
        `RSS growth while streaming ${((peak - before) / MIB).toFixed(1)} MiB`,
      `RSS: idle ${(idle / MIB).toFixed(0)} MiB, after load ${(afterLoad.rss / MIB).toFixed(0)} MiB (peak ${(afterLoad.peak / MIB).toFixed(0)} MiB)`,
    );
  } finally {
    await service.stop();
  }
  return lines;
}

const output = [];
const sqliteDir = mkdtempSync(join(tmpdir(), 'bench-scale-sqlite-'));
try {
  output.push(
    ...(await measureDatabase('SQLite', sqliteDir, {}, () => sqliteSeeder(join(sqliteDir, 'app.sqlite')))),
  );
} finally {
  rmSync(sqliteDir, { recursive: true, force: true });
}
process.stdout.write(`${output.join('\n')}\n`);

const mariadb = await startMariaDb();
const mariadbDir = mkdtempSync(join(tmpdir(), 'bench-scale-mariadb-'));
try {
  const admin = await createConnection(mariadb.rootUrl);
  await admin.query('CREATE DATABASE bench CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci');
  await admin.end();
  const url = `${mariadb.rootUrl}/bench`;
  const lines = await measureDatabase('MariaDB', mariadbDir, { DATABASE_URL: url }, () => mariadbSeeder(url));
  process.stdout.write(`\n${lines.join('\n')}\n`);
} finally {
  rmSync(mariadbDir, { recursive: true, force: true });
  await stopMariaDb(mariadb.pid, mariadb.dir);
}
