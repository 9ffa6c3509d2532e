// What clients see during infrastructure faults, and how long the service takes to recover,
// on the built service: a MariaDB paused (SIGSTOP) then resumed, the same killed (SIGKILL)
// then restarted on its data, the SQLite file's disk filled then freed (a tmpfs; needs root),
// and twelve simultaneous right logins. Prints figures; asserts nothing about time.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createConnection } from 'mysql2/promise';
import { killMariaDb, launchMariaDb, startMariaDb, stopMariaDb } from '../support/mariadb-server.mjs';
import { ADMIN, sleep, startService } from './service.mjs';

const OUTAGE_MS = Number(process.env.OUTAGE_SECONDS ?? 15) * 1000;
const CLIENTS = 10;

/** CLIENTS loops of GET /users/current/workflows until `stop()`; each result with its time. */
function load(url, token) {
  const results = [];
  let running = true;
  const loops = Array.from({ length: CLIENTS }, async () => {
    while (running) {
      const started = performance.now();
      let status;
      try {
        const response = await fetch(`${url}/users/current/workflows`, {
          headers: { authorization: `Bearer ${token}` },
          signal: globalThis.AbortSignal.timeout(120_000),
        });
        await response.arrayBuffer();
        status = response.status;
      } catch {
        status = 'cut';
      }
      results.push({ started, ended: performance.now(), status });
      await sleep(50);
    }
  });
  return {
    results,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

function summary(results, from, to) {
  const inside = results.filter((r) => r.started >= from && r.started < to);
  const counts = {};
  for (const r of inside) {
    counts[r.status] = (counts[r.status] ?? 0) + 1;
  }
  const latencies = inside.map((r) => r.ended - r.started).sort((a, b) => a - b);
  const max = latencies.at(-1) ?? 0;
  const p50 = latencies[Math.floor(latencies.length / 2)] ?? 0;
  return `${inside.length} requests ${JSON.stringify(counts)}, latency p50 ${p50.toFixed(0)} ms, max ${max.toFixed(0)} ms`;
}

/** From `since`, how long until a request started after it answered 200. */
function recovery(results, since) {
  const first = results
    .filter((r) => r.started >= since && r.status === 200)
    .sort((a, b) => a.ended - b.ended)[0];
  return first ? `${((first.ended - since) / 1000).toFixed(2)} s` : 'not within the run';
}

async function readyLatency(url) {
  const started = performance.now();
  const response = await fetch(`${url}/health/ready`);
  const body = await response.text();
  return `${response.status} in ${(performance.now() - started).toFixed(0)} ms, body ${body}`;
}

async function mariadb() {
  const server = await startMariaDb();
  let pid = server.pid;
  const admin = await createConnection(server.rootUrl);
  await admin.query('CREATE DATABASE app');
  await admin.end();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-faults-'));
  const service = await startService(dataDir, { DATABASE_URL: `${server.rootUrl}/app`, LOG_LEVEL: 'error' });
  try {
    const token = await service.login();
    console.log(`MariaDB faults, DATABASE_TIMEOUT_SECONDS=10 (default), ${CLIENTS} clients in a loop:`);

    const paused = load(service.url, token);
    await sleep(2000);
    const stopAt = performance.now();
    process.kill(pid, 'SIGSTOP');
    await sleep(OUTAGE_MS / 2);
    console.log(`  /health/ready while paused: ${await readyLatency(service.url)}`);
    await sleep(OUTAGE_MS / 2);
    const resumeAt = performance.now();
    process.kill(pid, 'SIGCONT');
    await sleep(5000);
    await paused.stop();
    console.log(`  SIGSTOP ${OUTAGE_MS / 1000} s: during: ${summary(paused.results, stopAt, resumeAt)}`);
    console.log(
      `  after SIGCONT: first 200 after ${recovery(paused.results, resumeAt)}; then ${summary(paused.results, resumeAt + 1000, Infinity)}`,
    );

    const killed = load(service.url, token);
    await sleep(2000);
    const killAt = performance.now();
    await killMariaDb(pid);
    await sleep(OUTAGE_MS / 2);
    console.log(`  /health/ready while killed: ${await readyLatency(service.url)}`);
    await sleep(OUTAGE_MS / 2);
    const restartAt = performance.now();
    pid = await launchMariaDb(server.dir, server.port);
    const upAt = performance.now();
    await sleep(5000);
    await killed.stop();
    console.log(`  SIGKILL ${OUTAGE_MS / 1000} s: during: ${summary(killed.results, killAt, restartAt)}`);
    console.log(
      `  restart took ${((upAt - restartAt) / 1000).toFixed(2)} s; first 200 ${recovery(killed.results, upAt)} after the server answered; then ${summary(killed.results, upAt + 1000, Infinity)}`,
    );
  } finally {
    await service.stop();
    process.kill(pid, 'SIGCONT');
    await stopMariaDb(pid, server.dir);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function fill(path) {
  const fd = openSync(path, 'a');
  try {
    for (const size of [1024 * 1024, 4096]) {
      const piece = Buffer.alloc(size, 1);
      try {
        for (;;) writeSync(fd, piece);
      } catch (error) {
        if (error.code !== 'ENOSPC') throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
}

async function sqliteFullDisk() {
  const disk = mkdtempSync(join(tmpdir(), 'bench-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', disk]);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-faults-'));
  const crate = readFileSync('test/fixtures/crates/lifemonitor-example-wf-crate.zip');
  const links = createServer((_request, response) => response.end(crate));
  await new Promise((resolve) => links.listen(0, '127.0.0.1', resolve));
  const link = `http://127.0.0.1:${links.address().port}/crate.zip`;
  const service = await startService(dataDir, {
    DATABASE_URL: `sqlite:${disk}/app.sqlite`,
    ALLOW_PRIVATE_NETWORK_LINKS: 'true',
    LOG_LEVEL: 'error',
  });
  let version = 0;
  const register = async (token) => {
    const started = performance.now();
    const response = await fetch(`${service.url}/users/current/workflows`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        roc_link: link,
        version: String(++version),
        uuid: '7c0a8d34-3e6f-4a0e-9d0a-111111111111',
      }),
    });
    await response.arrayBuffer();
    return { status: response.status, ms: performance.now() - started };
  };
  try {
    const token = await service.login();
    await register(token);
    console.log('SQLite file on a full disk (16 MiB tmpfs):');
    // The write-ahead log grows with each COMMIT until a checkpoint: the next one needs new space.
    fill(join(disk, 'filler'));
    const refused = await register(token);
    const read = performance.now();
    const list = await fetch(`${service.url}/users/current/workflows`, {
      headers: { authorization: `Bearer ${token}` },
    });
    console.log(
      `  registration while full: ${refused.status} in ${refused.ms.toFixed(0)} ms; a read right after: ${list.status} in ${(performance.now() - read).toFixed(0)} ms`,
    );
    const freedAt = performance.now();
    rmSync(join(disk, 'filler'));
    const again = await register(token);
    console.log(
      `  after freeing: registration ${again.status}, ${((performance.now() - freedAt) / 1000).toFixed(2)} s after the space came back`,
    );
  } finally {
    await service.stop();
    links.close();
    execFileSync('umount', ['-l', disk]);
    rmSync(disk, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function simultaneousLogins() {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-faults-'));
  const service = await startService(dataDir);
  try {
    const started = performance.now();
    const statuses = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const response = await fetch(`${service.url}/api/v1/auth`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(ADMIN),
        });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    console.log(
      `12 simultaneous right logins (AUTH_RATE_LIMIT=10): ${JSON.stringify(statuses)} in ${(performance.now() - started).toFixed(0)} ms`,
    );
  } finally {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await simultaneousLogins();
await sqliteFullDisk();
await mariadb();
