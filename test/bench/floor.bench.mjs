// The request floor (issue 10, point 5), in one run on one machine: a plain Express 5 app answering
// /health/live with the same bytes and helmet's headers, the service's /health/live, and an
// authenticated GET /workflows/{uuid}/status (one suite, one instance, three builds); then the
// service again with each layer of the request path left out in turn, to price each layer, and
// with the server Nest's own Express adapter makes (Node's requests and responses made as Node
// makes them, which Express then re-prototypes), beside the plain app with its messages made as
// the service makes them. The
// service runs as in production: NODE_ENV=production, LOG_LEVEL=info (the access log is written,
// to /dev/null), SQLite. Every server runs at once; they are measured in turns, BENCH_ROUNDS times
// (default 5) for BENCH_SECONDS each (default 2), and the medians printed. Prints figures; asserts
// nothing. BENCH_CONNECTIONS (default 50).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { crateZip, serveCrates } from './crates.mjs';
import { startService } from './service.mjs';
// The better-sqlite3 the service itself runs on this Node (`npm run bench` builds dist/ first).
import { sqliteDriver } from '../../dist/src/database/sqlite-driver.js';

const Database = sqliteDriver();

const seconds = Number(process.env.BENCH_SECONDS ?? 2);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SERVER = 'test/bench/floor-server.mjs';

/** Each layer a variant leaves out; `guards` keeps the authenticated user, without checking again. */
const LAYERS = [
  ['helmet', 'helmet (security headers)'],
  ['request-id', 'request id (X-Request-Id, log binding)'],
  ['metrics', 'metrics (Prometheus counter + histogram)'],
  ['access-log', 'access log (one line per request)'],
  ['cookie-parser', 'cookie parser'],
  ['guards', 'guards (JWT check + user re-check, roles)'],
  ['validation', 'validation pipe'],
  ['error-filter', 'exception filter (global)'],
  ['conditional-reads', 'ETag and 304 (status read)'],
  ['area-c-middleware', 'area C middleware (.json, segments, auth_token)'],
];

function load(url, headers = {}, duration = seconds) {
  return autocannon({ url, connections, duration, headers });
}

/** CPU time (user + system) a process has used so far, in µs (Linux; clock ticks of 10 ms). */
function cpuUs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

/**
 * Throughput and latency as the clients saw them, and the server's CPU time per request, which
 * the other work on a shared machine disturbs far less than throughput.
 */
async function measured(pid, url, headers) {
  const before = cpuUs(pid);
  const result = await load(url, headers);
  const used = cpuUs(pid) - before;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUs: used / result.requests.total,
    errors: result.errors + result.non2xx,
  };
}

const dir = mkdtempSync(join(tmpdir(), 'bench-floor-'));
const dataDir = join(dir, 'data');
const crates = await serveCrates(new Map([['/floor.zip', crateZip('floor', 8 * 1024)]]));
const env = { LOG_LEVEL: 'info', ALLOW_PRIVATE_NETWORK_LINKS: 'true' };

/** Starts one server of the benchmark and, for the service, checks the status read and logs in. */
async function start(name, serverEnv, uuid) {
  const server = await startService(
    dataDir,
    { ...env, ...serverEnv },
    {
      script: SERVER,
      quiet: true,
      readyPath: '/health/live',
    },
  );
  const targets = [['live', `${server.url}/health/live`, {}]];
  if (uuid) {
    const headers = { authorization: `Bearer ${await server.login()}` };
    const url = `${server.url}/workflows/${uuid}/status`;
    const reference = await fetch(url, { headers });
    if (reference.status !== 200) {
      throw new Error(`${name}: the status read answered ${reference.status}: ${await reference.text()}`);
    }
    targets.push(['status', url, headers]);
  }
  return { name, server, targets, rounds: { live: [], status: [] } };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** The medians over the rounds: what the machine's other work disturbed least. */
function summary(rounds) {
  if (rounds.length === 0) {
    return undefined;
  }
  return {
    rps: median(rounds.map((r) => r.rps)),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    cpuUs: median(rounds.map((r) => r.cpuUs)),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
  };
}

try {
  // The workflow to read: registered through the service, then given three builds directly.
  const setup = await startService(dataDir, env, { quiet: true });
  let uuid;
  try {
    const token = await setup.login();
    const created = await fetch(`${setup.url}/users/current/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ roc_link: crates.link('/floor.zip'), version: '1.0' }),
    });
    if (created.status !== 201) {
      throw new Error(`the registration answered ${created.status}: ${await created.text()}`);
    }
    ({ uuid } = await created.json());
  } finally {
    await setup.stop();
  }
  const db = new Database(join(dataDir, 'app.sqlite'));
  const { id } = db.prepare('SELECT id FROM test_instances').get();
  const insert = db.prepare(
    `INSERT INTO builds (instance_id, build_id, status, started_at, duration_seconds, url) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  for (const [n, result] of [
    [1, 'passed'],
    [2, 'failed'],
    [3, 'passed'],
  ]) {
    insert.run(
      id,
      String(n),
      result,
      `2026-11-0${n} 10:00:00.000`,
      60,
      `https://github.com/bench/floor/actions/runs/${n}`,
    );
  }
  db.close();

  process.stdout.write(
    `request floor: ${connections} connections, medians of ${rounds} rounds of ${seconds} s, SQLite, NODE_ENV=production, LOG_LEVEL=info\n`,
  );
  // Every server is started first, then measured in turns, round after round: a burst of load
  // from the machine's other work then falls on all of them alike, and the medians hide it.
  const servers = [await start('plain Express 5 + helmet', { FLOOR_SERVER: 'express' })];
  servers.push(await start('service (every layer)', {}, uuid));
  for (const [layer, label] of LAYERS) {
    servers.push({ label, ...(await start(`service without ${layer}`, { FLOOR_WITHOUT: layer }, uuid)) });
  }
  servers.push(
    await start('service without all of them', { FLOOR_WITHOUT: LAYERS.map(([l]) => l).join(',') }, uuid),
  );
  servers.push(await start("service with Nest's own server", { FLOOR_WITHOUT: 'express-messages' }, uuid));
  servers.push(await start('plain Express 5 + helmet, prototyped', { FLOOR_SERVER: 'express-prototyped' }));
  try {
    for (const { targets } of servers) {
      for (const [, url, headers] of targets) {
        await load(url, headers, 1);
      }
    }
    for (let round = 0; round < rounds; round++) {
      for (const { server, targets, rounds: results } of servers) {
        for (const [kind, url, headers] of targets) {
          results[kind].push(await measured(server.child.pid, url, headers));
        }
      }
    }
  } finally {
    for (const { server } of servers) {
      await server.stop();
    }
  }
  const all = servers.map((m) => ({
    ...m,
    health: summary(m.rounds.live),
    status: summary(m.rounds.status),
  }));
  const [express, service] = all;
  const variants = all.slice(2, 2 + LAYERS.length);
  const [bare, stockAdapter, prototypedExpress] = all.slice(2 + LAYERS.length);

  const row = (m) => ({
    server: m.name,
    'live req/s': Math.round(m.health.rps),
    'live p50 ms': m.health.p50,
    'live p99 ms': m.health.p99,
    'live CPU µs/req': Math.round(m.health.cpuUs),
    'status req/s': m.status ? Math.round(m.status.rps) : '',
    'status p50 ms': m.status ? m.status.p50 : '',
    'status p99 ms': m.status ? m.status.p99 : '',
    'status CPU µs/req': m.status ? Math.round(m.status.cpuUs) : '',
    errors: m.health.errors + (m.status?.errors ?? 0),
  });
  console.table([express, service, ...variants, bare, stockAdapter, prototypedExpress].map(row));

  // A layer costs the server CPU time per request that leaving it out saves (noise can make a
  // small one negative).
  const cost = (full, without) => ({
    us: Math.round(full.cpuUs - without.cpuUs),
    share: +((100 * (full.cpuUs - without.cpuUs)) / full.cpuUs).toFixed(1),
  });
  process.stdout.write('what each layer costs (server CPU per request, with it minus without it):\n');
  console.table(
    [...variants, { label: 'all of the above', ...bare }].map((v) => ({
      layer: v.label,
      'live CPU µs': cost(service.health, v.health).us,
      'live share %': cost(service.health, v.health).share,
      'status CPU µs': cost(service.status, v.status).us,
      'status share %': cost(service.status, v.status).share,
    })),
  );
  process.stdout.write(
    `/health/live: service ${Math.round(service.health.rps)} req/s vs plain Express ${Math.round(express.health.rps)} req/s = ` +
      `${(service.health.rps / express.health.rps).toFixed(2)}x (goal >= 0.7x); ` +
      `by CPU per request ${(express.health.cpuUs / service.health.cpuUs).toFixed(2)}x\n` +
      `status read: ${Math.round(service.status.rps)} req/s vs the service's /health/live ${Math.round(service.health.rps)} req/s = ` +
      `${(service.status.rps / service.health.rps).toFixed(2)}x (goal >= 0.5x); ` +
      `by CPU per request ${(service.health.cpuUs / service.status.cpuUs).toFixed(2)}x\n` +
      `messages made with Express's prototypes: the service's /health/live ${Math.round(service.health.cpuUs)} CPU µs/req, ` +
      `with Nest's own server ${Math.round(stockAdapter.health.cpuUs)}; plain Express ${Math.round(express.health.cpuUs)}, ` +
      `prototyped ${Math.round(prototypedExpress.health.cpuUs)}; ` +
      `the service vs the prototyped plain app ${(prototypedExpress.health.cpuUs / service.health.cpuUs).toFixed(2)}x by CPU\n`,
  );
} finally {
  await crates.close();
  rmSync(dir, { recursive: true, force: true });
}
