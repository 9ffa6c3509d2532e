// Issue 36's speed goals, each figure printed beside its goal, on SQLite and on a throwaway MariaDB:
// - at BENCH_SPEED_WORKFLOWS (10,000) workflows of the admin's own: the whole list with statuses
//   (`GET /users/current/workflows?status=true`, no limit) and without, read one at a time (p50 of
//   BENCH_RUNS per round); `?limit=20` under BENCH_CONNECTIONS (50) connections (req/s); the
//   workflow status read against a bare node:http server answering the same bytes; the RSS after
//   that load, with the heap snapshot's largest groups;
// - at BENCH_SPEED_LARGE (100,000): the whole list with statuses, its first byte, its time and the
//   RSS growth while it streams.
// With BENCH_COMPARE=<directory of another checkout, built>, that build runs beside this one on
// data seeded alike (each build's schema seeded by its own test/support/registry-seed.mjs), the
// two measured in turns, round after round, so that the machine's other work falls on both alike;
// every 10,000-workflow figure is printed for both. BENCH_DATABASES (sqlite,mariadb),
// BENCH_NODE_ARGS (node options for this build's service),
// BENCH_SECONDS (3), BENCH_ROUNDS (3). The load average is printed beside the figures: the machine
// is shared. Asserts nothing.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setInterval, clearInterval } from 'node:timers';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { createConnection } from 'mysql2/promise';
import { freePort, startMariaDb, stopMariaDb } from '../support/mariadb-server.mjs';
import { formatHeapSummary, heapSnapshot, heapSnapshotArgs } from './heap-summary.mjs';
import { memoryOf, sleep, startService } from './service.mjs';
// The better-sqlite3 the service itself runs on this Node (`npm run bench` builds dist/ first).
import { sqliteDriver } from '../../dist/src/database/sqlite-driver.js';

const Database = sqliteDriver();

const SIZE = Number(process.env.BENCH_SPEED_WORKFLOWS ?? 10_000);
const LARGE = Number(process.env.BENCH_SPEED_LARGE ?? 100_000);
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const DATABASES = (process.env.BENCH_DATABASES ?? 'sqlite,mariadb').split(',');
const CRATE = 'test/fixtures/crates/lifemonitor-example-wf-crate.zip';
const MIB = 1024 * 1024;

/** Issue 36's goals: the second wave's figures where the goal is to beat them. */
const GOALS = {
  rssAfterLoadMib: 200,
  wholeListMs: 626,
  largeListMs: 5000,
  largeFirstByteMs: 500,
  largeGrowthMib: 64,
  statusVsBare: 0.15,
};

// BENCH_NODE_ARGS: node options for this build's service, after those `npm start` gives (a V8 flag
// tried before it goes into src/v8-flags.ts or the start command).
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const builds = [{ name: 'this build', dir: resolve('.'), nodeArgs }];
if (process.env.BENCH_COMPARE) {
  // --preserve-symlinks: a checkout whose node_modules is a folder of links into another's (with
  // another version of a package beside them: better-sqlite3 12 for an older build on Node 20)
  // resolves its packages through those links, not where they lead.
  builds.push({
    name: `compared (${basename(resolve(process.env.BENCH_COMPARE))})`,
    dir: resolve(process.env.BENCH_COMPARE),
    nodeArgs: ['--preserve-symlinks'],
    // Started as it was then: its `npm start` gave node no options.
    startArgs: [],
  });
}

const load = () =>
  `load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const mib = (bytes) => (bytes / MIB).toFixed(0);

async function sqliteSeeder(file) {
  const db = new Database(file);
  db.pragma('busy_timeout = 10000');
  return {
    exec: async (sql, params) => {
      const statement = db.prepare(sql);
      return statement.reader ? statement.all(params) : (statement.run(params), []);
    },
    begin: async () => db.exec('BEGIN IMMEDIATE'),
    commit: async () => db.exec('COMMIT'),
    analyze: async () => {},
    close: async () => db.close(),
  };
}

async function mariadbSeeder(url) {
  const connection = await createConnection(url);
  return {
    exec: async (sql, params) => (await connection.query(sql, params))[0],
    begin: () => connection.query('BEGIN'),
    commit: () => connection.query('COMMIT'),
    analyze: () =>
      connection.query(
        'ANALYZE TABLE users, workflows, workflow_versions, test_suites, test_instances, test_check_states, builds',
      ),
    close: () => connection.end(),
  };
}

/** A fresh database of `kind` for `size` workflows of one build: its data folder, env and seeder. */
async function databaseFor(kind, label, mariadb, scratch) {
  const dataDir = mkdtempSync(join(scratch, `${kind}-`));
  if (kind === 'sqlite') {
    return { dataDir, env: {}, seeder: () => sqliteSeeder(join(dataDir, 'app.sqlite')) };
  }
  const name = `speed_${label}`;
  const admin = await createConnection(mariadb.rootUrl);
  await admin.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await admin.end();
  const url = `${mariadb.rootUrl}/${name}`;
  return { dataDir, env: { DATABASE_URL: url }, seeder: () => mariadbSeeder(url) };
}

/**
 * One build's service on its own database, its admin owning `size` public workflows seeded by
 * the build's own seeder (its schema's columns), the crate they point at in its store.
 */
async function seededCopy(build, database, size, scratch) {
  const { seedWorkflows, seededUuid } = await import(
    pathToFileURL(join(build.dir, 'test/support/registry-seed.mjs')).href
  );
  const snapshots = mkdtempSync(join(scratch, 'heap-'));
  const service = await startService(database.dataDir, database.env, {
    script: join(build.dir, 'dist/src/main.js'),
    startArgs: build.startArgs,
    nodeArgs: [...(build.nodeArgs ?? []), ...heapSnapshotArgs(snapshots)],
  });
  try {
    const idle = memoryOf(service.child.pid).rss;
    const token = await service.login();
    const bytes = readFileSync(CRATE);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const stored = join(database.dataDir, 'crates', sha256.slice(0, 2), `${sha256}.zip`);
    mkdirSync(dirname(stored), { recursive: true });
    copyFileSync(CRATE, stored);
    const seeder = await database.seeder();
    const started = performance.now();
    try {
      const [admin] = await seeder.exec('SELECT id FROM users WHERE username = ?', ['admin']);
      await seeder.begin();
      await seedWorkflows(seeder.exec, {
        ownerId: Number(admin.id),
        count: size,
        archive: { sha256, size: bytes.length },
        serviceUrl: 'http://127.0.0.1:9',
        isPublic: true,
      });
      await seeder.commit();
      await seeder.analyze();
    } finally {
      await seeder.close();
    }
    process.stdout.write(
      `${build.name}: seeded ${size.toLocaleString('en')} workflows in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    );
    return {
      build,
      service,
      size,
      idle,
      snapshots,
      seededUuid,
      headers: { authorization: `Bearer ${token}` },
    };
  } catch (error) {
    await service.stop();
    throw error;
  }
}

/** One whole read: time to the first byte and to the end, bytes, and the RSS at its highest while it streamed. */
async function timedRead(copy, path) {
  const pid = copy.service.child.pid;
  const before = memoryOf(pid).rss;
  let peak = before;
  // Sampled on a timer as well as per chunk: a long pause between chunks may hold the highest.
  const sampler = setInterval(() => (peak = Math.max(peak, memoryOf(pid).rss)), 10);
  try {
    const cpuBefore = cpuUs(pid);
    const started = performance.now();
    const response = await fetch(`${copy.service.url}${path}`, { headers: copy.headers });
    let firstByte;
    let bytes = 0;
    for await (const chunk of response.body) {
      firstByte ??= performance.now() - started;
      bytes += chunk.length;
      peak = Math.max(peak, memoryOf(pid).rss);
    }
    if (response.status !== 200) {
      throw new Error(`${path} answered ${response.status}`);
    }
    return {
      ms: performance.now() - started,
      cpuMs: (cpuUs(pid) - cpuBefore) / 1000,
      firstByte,
      bytes,
      growth: peak - before,
    };
  } finally {
    clearInterval(sampler);
  }
}

/** CPU time (user + system) a process has used so far, in µs (Linux; clock ticks of 10 ms). */
function cpuUs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

/**
 * Requests/s under load, and the server's CPU time per request (`pid`: the server's process), which
 * the machine's other work disturbs far less than the rate.
 */
async function throughput(url, headers, path = () => '/', pid = process.pid) {
  const before = cpuUs(pid);
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [{ method: 'GET', headers, setupRequest: (request) => ({ ...request, path: path() }) }],
  });
  return {
    rps: result.requests.average,
    cpuUs: (cpuUs(pid) - before) / Math.max(result.requests.total, 1),
    errors: result.errors + result.non2xx + result.timeouts,
  };
}

/** A bare node:http server answering every request with `body` and the status read's type. */
async function bareServer(body) {
  const server = createServer((_request, response) => {
    response.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': body.length,
    });
    response.end(body);
  });
  const port = await freePort();
  await new Promise((done) => server.listen(port, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((done) => server.close(done)) };
}

const LIST = '/users/current/workflows';

/**
 * The rest of the throughput load whose RSS the goal bounds: area B's and TRS's reads of one
 * workflow picked at random (as the scale benchmark reads them), one turn each per round. A read
 * the compared build does not have (404) is left out of its load, and said so.
 */
const MIXED_READS = [
  ['workflow', (uuid) => `/workflows/${uuid('workflow')}`],
  ['versions', (uuid) => `/workflows/${uuid('workflow')}/versions`],
  ['suites', (uuid) => `/workflows/${uuid('workflow')}/suites`],
  ['suite status', (uuid) => `/suites/${uuid('suite')}/status`],
  ['instance builds', (uuid) => `/instances/${uuid('instance')}/latest-builds`],
  ['badge', (uuid) => `/workflows/${uuid('workflow')}/badge.svg`],
  ['history', (uuid) => `/workflows/${uuid('workflow')}/history`],
  ['TRS tool', (uuid) => `/ga4gh/trs/v2/tools/${uuid('workflow')}`],
  ['TRS tools page', () => '/ga4gh/trs/v2/tools?limit=20'],
];

/** The V8 heap (used, total) and memory outside it, from the service's own /metrics: what its RSS is made of. */
async function heapOf(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return (
    `V8 heap ${mib(value('nodejs_heap_size_used_bytes'))} of ${mib(value('nodejs_heap_size_total_bytes'))} MiB, ` +
    `external ${mib(value('nodejs_external_memory_bytes'))} MiB`
  );
}

async function measureAtSize(kind, mariadb, scratch) {
  const copies = [];
  const bares = [];
  const lines = [];
  try {
    for (const [n, build] of builds.entries()) {
      copies.push(
        await seededCopy(build, await databaseFor(kind, `${SIZE}_${n}`, mariadb, scratch), SIZE, scratch),
      );
    }
    for (const copy of copies) {
      // The status of one workflow, the same for the service and its bare twin: the same bytes.
      copy.statusPath = `/workflows/${copy.seededUuid('workflow', Math.floor(SIZE / 2))}/status`;
      const reference = await fetch(`${copy.service.url}${copy.statusPath}`, { headers: copy.headers });
      if (reference.status !== 200) {
        throw new Error(`${copy.build.name}: the status read answered ${reference.status}`);
      }
      copy.bare = await bareServer(Buffer.from(await reference.arrayBuffer()));
      bares.push(copy.bare);
      copy.figures = { withStatus: [], withStatusCpu: [], without: [], page: [], status: [], bare: [] };
      copy.randomUuid = (kind) => copy.seededUuid(kind, Math.floor(Math.random() * SIZE));
      copy.mixed = [];
      copy.skipped = [];
      for (const [name, path] of MIXED_READS) {
        const answer = await fetch(`${copy.service.url}${path(copy.randomUuid)}`, { headers: copy.headers });
        await answer.arrayBuffer();
        if (answer.status === 200) {
          copy.mixed.push(path);
        } else {
          copy.skipped.push(`${name} (${answer.status})`);
        }
      }
      // Warm-up: JIT, pools, the database's page cache.
      await timedRead(copy, `${LIST}?status=true`);
      await timedRead(copy, `${LIST}?status=false`);
      await throughput(copy.service.url, copy.headers, () => `${LIST}?limit=20`);
      await throughput(copy.service.url, copy.headers, () => copy.statusPath);
    }
    for (let round = 0; round < rounds; round++) {
      for (const copy of copies) {
        for (let run = 0; run < runs; run++) {
          const whole = await timedRead(copy, `${LIST}?status=true`);
          copy.figures.withStatus.push(whole.ms);
          copy.figures.withStatusCpu.push(whole.cpuMs);
          copy.figures.without.push((await timedRead(copy, `${LIST}?status=false`)).ms);
        }
        const pid = copy.service.child.pid;
        copy.figures.page.push(
          await throughput(copy.service.url, copy.headers, () => `${LIST}?limit=20`, pid),
        );
        copy.figures.status.push(
          await throughput(copy.service.url, copy.headers, () => copy.statusPath, pid),
        );
        copy.figures.bare.push(await throughput(copy.bare.url, {}));
        for (const path of copy.mixed) {
          await throughput(copy.service.url, copy.headers, () => path(copy.randomUuid));
        }
      }
    }
    lines.push(
      '',
      `${kind} at ${SIZE.toLocaleString('en')} workflows: ${rounds} rounds, ${runs} whole reads per list and round, ` +
        `${connections} connections for ${seconds} s per throughput turn (medians); ${load()}`,
    );
    const [self, other] = copies;
    const rps = (results) => Math.round(median(results.map((result) => result.rps)));
    const cpu = (results) => `${Math.round(median(results.map((result) => result.cpuUs)))} CPU µs/req`;
    const errors = (copy) =>
      ['page', 'status', 'bare'].reduce(
        (sum, key) => sum + copy.figures[key].reduce((s, r) => s + r.errors, 0),
        0,
      );
    for (const copy of copies) {
      const f = copy.figures;
      const ratio = rps(f.status) / rps(f.bare);
      const ownGoal = copy === self;
      lines.push(
        `  ${copy.build.name}: whole list with statuses p50 ${median(f.withStatus).toFixed(0)} ms` +
          ` (${median(f.withStatusCpu).toFixed(0)} CPU ms)` +
          (ownGoal ? ` (goal < ${GOALS.wholeListMs} ms)` : '') +
          `, without ${median(f.without).toFixed(0)} ms; ?limit=20 ${rps(f.page)} req/s (${cpu(f.page)})` +
          (ownGoal && other ? ` (goal >= the compared build's ${rps(other.figures.page)})` : '') +
          `; status read ${rps(f.status)} req/s (${cpu(f.status)}) vs bare node:http, same bytes, ${rps(f.bare)} req/s = ${ratio.toFixed(3)}x` +
          (ownGoal ? ` (goal >= ${GOALS.statusVsBare}x)` : '') +
          `; errors ${errors(copy)}`,
      );
    }
    for (const copy of copies) {
      const after = memoryOf(copy.service.child.pid);
      lines.push(
        `  ${copy.build.name}: RSS idle ${mib(copy.idle)} MiB, after the load ${mib(after.rss)} MiB` +
          (copy === self ? ` (goal <= ${GOALS.rssAfterLoadMib} MiB)` : '') +
          (copy.skipped.length > 0 ? ` (its load without ${copy.skipped.join(', ')})` : '') +
          `, peak ${mib(after.peak)} MiB; ${await heapOf(copy.service.url)}`,
      );
      lines.push(
        ...formatHeapSummary(await heapSnapshot(copy.service, copy.snapshots)).map((line) => `    ${line}`),
      );
    }
  } finally {
    for (const copy of copies) {
      await copy.service.stop();
    }
    for (const bare of bares) {
      await bare.close();
    }
  }
  return lines;
}

async function measureLarge(kind, mariadb, scratch) {
  const copy = await seededCopy(
    builds[0],
    await databaseFor(kind, `${LARGE}`, mariadb, scratch),
    LARGE,
    scratch,
  );
  try {
    const lines = ['', `${kind} at ${LARGE.toLocaleString('en')} workflows, ${builds[0].name}:`];
    // The first read after seeding also fills SQLite's page cache (up to SQLITE_CACHE_KIB, 32 MiB)
    // or MariaDB's buffer pool: the second is the list streaming on a warm database.
    for (const label of ['first read', 'second read']) {
      await sleep(1000);
      const read = await timedRead(copy, `${LIST}?status=true`);
      lines.push(
        `  whole list with statuses, ${label}: ${(read.bytes / MIB).toFixed(1)} MiB, first byte ${read.firstByte.toFixed(0)} ms ` +
          `(goal < ${GOALS.largeFirstByteMs}), all in ${read.ms.toFixed(0)} ms (goal <= ${GOALS.largeListMs}; ` +
          `the service's CPU ${read.cpuMs.toFixed(0)} ms), ` +
          `RSS growth while it streamed ${(read.growth / MIB).toFixed(1)} MiB (goal < ${GOALS.largeGrowthMib}); ${load()}`,
      );
    }
    return lines;
  } finally {
    await copy.service.stop();
  }
}

const scratch = mkdtempSync(join(tmpdir(), 'bench-speed-'));
const mariadb = DATABASES.includes('mariadb') ? await startMariaDb() : undefined;
try {
  for (const kind of DATABASES) {
    process.stdout.write(`${(await measureAtSize(kind, mariadb, scratch)).join('\n')}\n`);
    if (LARGE > 0) {
      process.stdout.write(`${(await measureLarge(kind, mariadb, scratch)).join('\n')}\n`);
    }
  }
} finally {
  if (mariadb) {
    await stopMariaDb(mariadb.pid, mariadb.dir);
  }
  rmSync(scratch, { recursive: true, force: true });
}
