// Area B's reads at 1,000 and at 100,000 workflows, on SQLite and on a throwaway MariaDB: the
// built service over HTTP, `BENCH_CONNECTIONS` (50) connections, each request on a workflow picked
// at random among those seeded. Two copies of the service run side by side, one per size, each on
// its own database seeded in bulk (test/support/registry-seed.mjs: one suite, one GitHub instance,
// three builds per workflow) while it runs, so it has nothing cached. The sizes take turns,
// `BENCH_SECONDS` (3) per read and turn, `BENCH_ROUNDS` (5) rounds, and each figure is the median
// over the rounds: a machine busy with other work slows both sizes alike.
// Registries (API.md 10.1): at both sizes one registry (`bench`) sent REGISTRY_WORKFLOWS of the
// workflows, half as its own and half for its user 7, and another registry sent a tenth of the
// rest, so that the registry reads' answers stay the same while what they do not ask for grows.
// Prints p50/p99 and req/s per read and size, the p50 ratio (target ≤ 1.2), the whole list
// without limit at 100,000 (time, RSS growth), and the service's idle RSS and RSS after load; then
// GA4GH TRS's `/tools?limit=1000` at 10,000 public workflows (`BENCH_TRS_WORKFLOWS`), timed alone.
// Asserts nothing. `BENCH_SCALE_LARGE` changes the large size.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { URLSearchParams } from 'node:url';
import autocannon from 'autocannon';
import { createConnection } from 'mysql2/promise';
import { startMariaDb, stopMariaDb } from '../support/mariadb-server.mjs';
import { SEEDED_VERSION, seededUuid, seedWorkflows } from '../support/registry-seed.mjs';
import { memoryOf, startService } from './service.mjs';
// The better-sqlite3 the service itself runs on this Node (`npm run bench` builds dist/ first).
import { sqliteDriver } from '../../dist/src/database/sqlite-driver.js';

const Database = sqliteDriver();

// Turns of 1 s gave p50s that swung by a third between runs with the same throughput (a few
// pauses decide a median of 50 connections' latencies); 3 s settle them. The run takes ~11 minutes.
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SIZES = [1_000, Number(process.env.BENCH_SCALE_LARGE ?? 100_000)];
const CRATE = 'test/fixtures/crates/lifemonitor-example-wf-crate.zip';
const MIB = 1024 * 1024;

/** The workflows the measured registry sent, at every size: half its own, half its user's. */
const REGISTRY_WORKFLOWS = 100;
/** The registry's id of the user it sent the other half for (`/users/{user_id}/workflows`). */
const REGISTRY_USER = '7';
/** The share of the other workflows that another registry sent: data the registry reads do not ask for. */
const OTHER_REGISTRY_SHARE = 0.1;

/** GA4GH TRS at 10,000 public workflows: `/tools?limit=1000`, timed alone (TRS_PAGE_RUNS requests). */
const TRS_PAGE_SIZE = Number(process.env.BENCH_TRS_WORKFLOWS ?? 10_000);
const TRS_PAGE_RUNS = 10;

/**
 * Each read's path for the seeded workflow number `i` (and the copy it is sent to), and who reads
 * it: the admin (the copy's token), nobody (`anonymous`: the TRS reads, since the seeded
 * workflows are public and anonymous callers read them through the public index, and the
 * registry by its uuid), or the measured registry's client (`registry`).
 */
const READS = [
  ['list page (limit=20)', () => '/users/current/workflows?limit=20'],
  ['workflow', (i) => `/workflows/${seededUuid('workflow', i)}`],
  ['versions', (i) => `/workflows/${seededUuid('workflow', i)}/versions`],
  ['suites', (i) => `/workflows/${seededUuid('workflow', i)}/suites`],
  ['status', (i) => `/workflows/${seededUuid('workflow', i)}/status`],
  ['suite status', (i) => `/suites/${seededUuid('suite', i)}/status`],
  ['instance builds', (i) => `/instances/${seededUuid('instance', i)}/latest-builds`],
  ['download', (i) => `/workflows/${seededUuid('workflow', i)}/rocrate/${SEEDED_VERSION}/download`],
  ['badge', (i) => `/workflows/${seededUuid('workflow', i)}/badge.svg`],
  ['history (30 days)', (i) => `/workflows/${seededUuid('workflow', i)}/history`],
  ['instance stats (90 days)', (i) => `/instances/${seededUuid('instance', i)}/stats`],
  ['TRS tools (limit=20)', () => '/ga4gh/trs/v2/tools?limit=20', 'anonymous'],
  ['TRS tools, last page', () => '/ga4gh/trs/v2/tools?limit=20&offset=last', 'anonymous'],
  ['TRS tools by name', (i) => `/ga4gh/trs/v2/tools?name=seeded%20workflow%20${i}`, 'anonymous'],
  ['TRS tool', (i) => `/ga4gh/trs/v2/tools/${seededUuid('workflow', i)}`, 'anonymous'],
  [
    'TRS files',
    (i) => `/ga4gh/trs/v2/tools/${seededUuid('workflow', i)}/versions/${SEEDED_VERSION}/GALAXY/files`,
    'anonymous',
  ],
  ['registry', (_i, copy) => `/registries/${copy.registry.uuid}`, 'anonymous'],
  ["registry's workflows", () => '/registries/current/workflows', 'registry'],
  [
    "registry's workflows, statuses (SEEK's daily read)",
    () => '/registries/current/workflows?status=true&versions=true',
    'registry',
  ],
  ["registry user's workflows", () => `/users/${REGISTRY_USER}/workflows`, 'registry'],
];

/** The headers of a read: the copy's admin or registry token, or none for an anonymous one. */
const headersOf = (copy, who) =>
  who === 'anonymous' ? {} : who === 'registry' ? copy.registry.headers : copy.headers;

function load(copy, who, path, duration = seconds) {
  return autocannon({
    url: copy.service.url,
    connections,
    duration,
    requests: [
      {
        method: 'GET',
        headers: headersOf(copy, who),
        setupRequest: (request) => ({ ...request, path: path(Math.floor(Math.random() * copy.size), copy) }),
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
        'ANALYZE TABLE users, workflows, workflow_versions, test_suites, test_instances, test_check_states, builds, ' +
          'registries, registry_identities',
      );
    },
    async close() {
      await connection.end();
    },
  };
}

/**
 * fetch(), once more when the socket it reused was closed under it: after a pause longer than the
 * server's keep-alive (5 s, seeding takes longer) a busy machine lets the two cross. Reads only.
 */
async function get(url, init) {
  try {
    return await fetch(url, init);
  } catch (error) {
    if (error?.cause?.code !== 'UND_ERR_SOCKET') {
      throw error;
    }
    return fetch(url, init);
  }
}

/** The V8 heap (used, total) and memory outside it, from the service's own /metrics: what its RSS is made of. */
async function heapOf(url) {
  const text = await (await get(`${url}/metrics`)).text();
  const value = (name) =>
    Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / MIB;
  return `V8 heap ${value('nodejs_heap_size_used_bytes').toFixed(0)} of ${value('nodejs_heap_size_total_bytes').toFixed(0)} MiB, external ${value('nodejs_external_memory_bytes').toFixed(0)} MiB`;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** One copy of the service on its own database, seeded with `size` workflows. */
async function seededService(name, size, database) {
  const service = await startService(database.dataDir, database.env);
  try {
    return await seed(name, size, database, service);
  } catch (error) {
    await service.stop();
    throw error;
  }
}

/** Makes a registry through the API (as an admin does); its uuid and client credentials. */
async function createRegistry(url, token, name) {
  const response = await get(`${url}/registries`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, type: 'seek', uri: 'http://127.0.0.1:9/seek' }),
  });
  if (response.status !== 201) {
    throw new Error(`POST /registries answered ${response.status}: ${await response.text()}`);
  }
  return response.json();
}

/** A client-credentials token of a registry's client (every scope). */
async function registryToken(url, registry) {
  const response = await get(`${url}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: registry.client_id,
      client_secret: registry.client_secret,
    }).toString(),
  });
  if (response.status !== 200) {
    throw new Error(`POST /oauth2/token answered ${response.status}: ${await response.text()}`);
  }
  return (await response.json()).access_token;
}

/**
 * The local identity of the registry's user REGISTRY_USER, as its first registration for them
 * would make it; the user's id.
 */
async function seedRegistryUser(exec, registry) {
  const [{ n }] = await exec('SELECT MAX(id) AS n FROM users', []);
  const id = Number(n) + 1;
  await exec('INSERT INTO users (id, username, password_hash, roles) VALUES (?, ?, ?, ?)', [
    id,
    `registry:${registry.name}:${REGISTRY_USER}`,
    '!',
    'user',
  ]);
  await exec('INSERT INTO registry_identities (registry_id, user_id, external_id) VALUES (?, ?, ?)', [
    registry.id,
    id,
    REGISTRY_USER,
  ]);
  return id;
}

async function seed(name, size, database, service) {
  const idle = memoryOf(service.child.pid).rss;
  const token = await service.login();
  const registry = await createRegistry(service.url, token, 'bench');
  const other = await createRegistry(service.url, token, 'other');
  const bytes = readFileSync(CRATE);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const stored = join(database.dataDir, 'crates', sha256.slice(0, 2), `${sha256}.zip`);
  mkdirSync(dirname(stored), { recursive: true });
  copyFileSync(CRATE, stored);
  const seeder = await database.seeder();
  try {
    const [admin] = await seeder.exec('SELECT id FROM users WHERE username = ?', ['admin']);
    const registryOf = async ({ uuid }) => {
      const [row] = await seeder.exec('SELECT id, name, user_id, uri FROM registries WHERE uuid = ?', [uuid]);
      return { id: Number(row.id), name: row.name, userId: Number(row.user_id), uri: row.uri };
    };
    const [measured, another] = [await registryOf(registry), await registryOf(other)];
    const half = REGISTRY_WORKFLOWS / 2;
    const others = Math.floor((size - REGISTRY_WORKFLOWS) * OTHER_REGISTRY_SHARE);
    const common = {
      archive: { sha256, size: bytes.length },
      serviceUrl: 'http://127.0.0.1:9',
      isPublic: true,
    };
    const started = performance.now();
    await seeder.transaction(async () => {
      const userId = await seedRegistryUser(seeder.exec, measured);
      // Workflows 0 to REGISTRY_WORKFLOWS - 1 the measured registry sent, the next `others` the other one.
      const parts = [
        { ownerId: measured.userId, count: half, registry: measured },
        { ownerId: userId, count: half, registry: measured },
        { ownerId: another.userId, count: others, registry: another },
        { ownerId: Number(admin.id), count: size - REGISTRY_WORKFLOWS - others },
      ];
      let from = 0;
      for (const part of parts) {
        await seedWorkflows(seeder.exec, { ...common, ...part, from });
        from += part.count;
      }
    });
    await seeder.analyze();
    process.stdout.write(
      `${name}: seeded ${size} workflows in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    );
  } finally {
    await seeder.close();
  }
  return {
    service,
    size,
    idle,
    idleHeap: await heapOf(service.url),
    headers: { authorization: `Bearer ${token}` },
    registry: {
      uuid: registry.uuid,
      headers: { authorization: `Bearer ${await registryToken(service.url, registry)}` },
    },
  };
}

async function measureDatabase(name, databaseOf) {
  const copies = [];
  const lines = [];
  try {
    for (const size of SIZES) {
      copies.push(await seededService(name, size, await databaseOf(size)));
    }
    for (const copy of copies) {
      for (const [read, path, who] of READS) {
        const check = await get(`${copy.service.url}${path(copy.size - 1, copy)}`, {
          headers: headersOf(copy, who),
        });
        if (check.status !== 200) {
          throw new Error(`${read} answered ${check.status} at ${copy.size}`);
        }
        const body = await check.text();
        // The registry's lists hold what it sent (its user's: half of it), whatever the size.
        const listed = who === 'registry' ? JSON.parse(body).items.length : undefined;
        const expected = path(0, copy).startsWith('/users/') ? REGISTRY_WORKFLOWS / 2 : REGISTRY_WORKFLOWS;
        if (listed !== undefined && listed !== expected) {
          throw new Error(`${read} listed ${listed} workflows at ${copy.size}, not ${expected}`);
        }
        // Warm-up: JIT, connection pool and the database's page cache.
        await load(copy, who, path, 1);
      }
    }
    const runs = new Map();
    for (let round = 0; round < rounds; round++) {
      for (const [read, path, who] of READS) {
        for (const copy of copies) {
          const result = await load(copy, who, path);
          const key = `${read} ${copy.size}`;
          runs.set(key, [...(runs.get(key) ?? []), result]);
        }
      }
    }
    const figures = (key) => {
      // A turn in which nothing completed (the machine was busy elsewhere) says nothing about either size.
      const results = runs.get(key).filter((result) => result.requests.total > 0);
      return {
        p50: median(results.map((result) => result.latency.p50)),
        p99: median(results.map((result) => result.latency.p99)),
        rps: Math.round(median(results.map((result) => result.requests.average))),
        errors: results.reduce((sum, result) => sum + result.errors + result.non2xx + result.timeouts, 0),
      };
    };

    const large = copies.at(-1);
    const before = memoryOf(large.service.child.pid).rss;
    const started = performance.now();
    const whole = await get(`${large.service.url}/users/current/workflows`, { headers: large.headers });
    let received = 0;
    let peak = before;
    for await (const chunk of whole.body) {
      received += chunk.length;
      peak = Math.max(peak, memoryOf(large.service.child.pid).rss);
    }
    const wholeMs = performance.now() - started;

    const [smallSize, largeSize] = SIZES;
    lines.push(
      '',
      `${name}, ${connections} connections, ${seconds} s per read and size in each of ${rounds} rounds (medians)`,
      `| read | N = ${smallSize.toLocaleString('en')} p50 / p99 ms | req/s | N = ${largeSize.toLocaleString('en')} p50 / p99 ms | req/s | p50 ratio | errors |`,
      '|---|---|---|---|---|---|---|',
    );
    for (const [read] of READS) {
      const a = figures(`${read} ${smallSize}`);
      const b = figures(`${read} ${largeSize}`);
      lines.push(
        `| ${read} | ${a.p50} / ${a.p99} | ${a.rps} | ${b.p50} / ${b.p99} | ${b.rps} | ${(b.p50 / Math.max(a.p50, 1)).toFixed(2)} | ${a.errors + b.errors} |`,
      );
    }
    lines.push(
      `whole list without limit at ${largeSize.toLocaleString('en')}: status ${whole.status}, ${(received / MIB).toFixed(1)} MiB in ${(wholeMs / 1000).toFixed(2)} s, ` +
        `RSS growth while streaming ${((peak - before) / MIB).toFixed(1)} MiB`,
    );
    for (const copy of copies) {
      const after = memoryOf(copy.service.child.pid);
      lines.push(
        `RSS of the copy with ${copy.size.toLocaleString('en')}: idle ${(copy.idle / MIB).toFixed(0)} MiB, ` +
          `after load ${(after.rss / MIB).toFixed(0)} MiB (peak ${(after.peak / MIB).toFixed(0)} MiB); ` +
          `idle: ${copy.idleHeap}; after load: ${await heapOf(copy.service.url)}`,
      );
    }
  } finally {
    for (const copy of copies) {
      await copy.service.stop();
    }
  }
  return lines;
}

/**
 * `GET /ga4gh/trs/v2/tools?limit=1000` without a token at TRS_PAGE_SIZE public workflows: the
 * first request (nothing cached) and the median and slowest of TRS_PAGE_RUNS after it, one at a
 * time, with the reply's size.
 */
async function measureTrsPage(name, databaseOf) {
  const copy = await seededService(name, TRS_PAGE_SIZE, await databaseOf(TRS_PAGE_SIZE));
  try {
    const url = `${copy.service.url}/ga4gh/trs/v2/tools?limit=1000`;
    const timed = async () => {
      const started = performance.now();
      const response = await get(url);
      const body = await response.arrayBuffer();
      if (response.status !== 200) {
        throw new Error(`/ga4gh/trs/v2/tools?limit=1000 answered ${response.status}`);
      }
      return {
        ms: performance.now() - started,
        bytes: body.byteLength,
        tools: JSON.parse(Buffer.from(body)).length,
      };
    };
    const first = await timed();
    const times = [];
    for (let run = 0; run < TRS_PAGE_RUNS; run++) {
      times.push((await timed()).ms);
    }
    return [
      `${name}: GET /ga4gh/trs/v2/tools?limit=1000 (anonymous) at ${TRS_PAGE_SIZE.toLocaleString('en')} public workflows: ` +
        `${first.tools} tools, ${(first.bytes / MIB).toFixed(2)} MiB; first ${first.ms.toFixed(0)} ms, ` +
        `then median ${median(times).toFixed(0)} ms, slowest ${Math.max(...times).toFixed(0)} ms of ${TRS_PAGE_RUNS}`,
    ];
  } finally {
    await copy.service.stop();
  }
}

const directories = [];
const directory = (prefix) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  directories.push(dir);
  return dir;
};
const mariadb = await startMariaDb();
try {
  const sqliteDatabase = (size) => {
    const dataDir = directory(`bench-scale-sqlite-${size}-`);
    return { dataDir, env: {}, seeder: () => sqliteSeeder(join(dataDir, 'app.sqlite')) };
  };
  const mariadbDatabase = async (size) => {
    const admin = await createConnection(mariadb.rootUrl);
    await admin.query(`CREATE DATABASE bench_${size} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    await admin.end();
    const url = `${mariadb.rootUrl}/bench_${size}`;
    return {
      dataDir: directory(`bench-scale-mariadb-${size}-`),
      env: { DATABASE_URL: url },
      seeder: () => mariadbSeeder(url),
    };
  };
  const sqlite = await measureDatabase('SQLite', sqliteDatabase);
  process.stdout.write(`${sqlite.join('\n')}\n\n`);
  const maria = await measureDatabase('MariaDB', mariadbDatabase);
  process.stdout.write(`${maria.join('\n')}\n\n`);
  const trsPages = [
    ...(await measureTrsPage('SQLite', sqliteDatabase)),
    ...(await measureTrsPage('MariaDB', mariadbDatabase)),
  ];
  process.stdout.write(`${trsPages.join('\n')}\n`);
} finally {
  for (const dir of directories) {
    rmSync(dir, { recursive: true, force: true });
  }
  await stopMariaDb(mariadb.pid, mariadb.dir);
}
