// Sharing the status (API.md 5.2, 5.4) on the built service with SQLite and 1,000 public
// workflows seeded in bulk (test/support/registry-seed.mjs): badge.svg requests/s with and
// without If-None-Match (BENCH_CONNECTIONS connections, BENCH_SECONDS each, anonymous, a
// workflow picked at random per request), and the time to first byte of the HTML status page
// /status (anonymous: the public workflows, 50 to a page), sequential requests after a warm-up.
// Prints figures; asserts nothing.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { seededUuid, seedWorkflows } from '../support/registry-seed.mjs';
import { startService } from './service.mjs';
// The better-sqlite3 the service itself runs on this Node (`npm run bench` builds dist/ first).
import { sqliteDriver } from '../../dist/src/database/sqlite-driver.js';

const Database = sqliteDriver();

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WORKFLOWS = 1_000;
const TTFB_REQUESTS = 40;
const CRATE = 'test/fixtures/crates/lifemonitor-example-wf-crate.zip';

function badges(url, headers) {
  return autocannon({
    url,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'GET',
        headers,
        setupRequest: (request) => ({
          ...request,
          path: `/workflows/${seededUuid('workflow', Math.floor(Math.random() * WORKFLOWS))}/badge.svg`,
        }),
      },
    ],
  });
}

/** Milliseconds to the response's head and to its first body byte, and the whole reply. */
function timeToFirstByte(url) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    get(url, (response) => {
      const head = performance.now() - started;
      let first;
      let bytes = 0;
      response.on('data', (chunk) => {
        first ??= performance.now() - started;
        bytes += chunk.length;
      });
      response.on('end', () =>
        resolve({ status: response.statusCode, head, first, total: performance.now() - started, bytes }),
      );
    }).on('error', reject);
  });
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const dataDir = mkdtempSync(join(tmpdir(), 'bench-sharing-'));
const service = await startService(dataDir);
try {
  const bytes = readFileSync(CRATE);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const stored = join(dataDir, 'crates', sha256.slice(0, 2), `${sha256}.zip`);
  mkdirSync(dirname(stored), { recursive: true });
  copyFileSync(CRATE, stored);
  const db = new Database(join(dataDir, 'app.sqlite'));
  db.pragma('busy_timeout = 10000');
  const exec = async (sql, params) => {
    const statement = db.prepare(sql);
    return statement.reader ? statement.all(params) : (statement.run(params), []);
  };
  const [admin] = await exec('SELECT id FROM users WHERE username = ?', ['admin']);
  db.exec('BEGIN IMMEDIATE');
  await seedWorkflows(exec, {
    ownerId: Number(admin.id),
    count: WORKFLOWS,
    archive: { sha256, size: bytes.length },
    serviceUrl: 'http://127.0.0.1:9',
  });
  await exec('UPDATE workflows SET is_public = 1', []);
  db.exec('COMMIT');
  db.close();

  const sample = await fetch(`${service.url}/workflows/${seededUuid('workflow', 0)}/badge.svg`);
  const etag = sample.headers.get('etag');
  await sample.arrayBuffer();
  if (sample.status !== 200 || !etag) {
    throw new Error(`badge.svg answered ${sample.status}`);
  }
  // Warm-up (JIT, the database's page cache), then each measured run.
  await autocannon({
    url: `${service.url}/workflows/${seededUuid('workflow', 1)}/badge.svg`,
    duration: 2,
    connections,
  });
  const plain = await badges(service.url, {});
  const conditional = await badges(service.url, { 'if-none-match': etag });
  const row = (name, result, expected) => ({
    name,
    'req/s': Math.round(result.requests.average),
    'p50 ms': result.latency.p50,
    'p99 ms': result.latency.p99,
    [`${expected}s`]: result.statusCodeStats?.[expected]?.count ?? 0,
    errors: result.errors + result.timeouts,
  });
  process.stdout.write(
    `badge.svg of ${WORKFLOWS.toLocaleString('en')} public workflows (SQLite), anonymous, ${connections} connections, ${seconds} s each\n`,
  );
  console.table([
    row('without If-None-Match (200 + SVG)', plain, 200),
    row('with a matching If-None-Match (304)', conditional, 304),
  ]);

  for (let n = 0; n < 5; n++) {
    await timeToFirstByte(`${service.url}/status`);
  }
  const samples = [];
  for (let n = 0; n < TTFB_REQUESTS; n++) {
    samples.push(await timeToFirstByte(`${service.url}/status`));
  }
  if (samples.some((s) => s.status !== 200)) {
    throw new Error('/status did not answer 200');
  }
  const ms = (values, p) => percentile(values, p).toFixed(1);
  const heads = samples.map((s) => s.head);
  const firsts = samples.map((s) => s.first);
  const totals = samples.map((s) => s.total);
  process.stdout.write(
    `\n/status with ${WORKFLOWS.toLocaleString('en')} public workflows (anonymous, first page of 50), ${TTFB_REQUESTS} sequential requests:\n` +
      `  time to first byte p50 ${ms(firsts, 50)} ms, p90 ${ms(firsts, 90)} ms, max ${ms(firsts, 100)} ms ` +
      `(head p50 ${ms(heads, 50)} ms); whole page p50 ${ms(totals, 50)} ms, ${(samples[0].bytes / 1024).toFixed(1)} KiB\n`,
  );
  const far = await timeToFirstByte(`${service.url}/status?page=20`);
  process.stdout.write(
    `  last page (?page=20): time to first byte ${far.first.toFixed(1)} ms, status ${far.status}\n`,
  );
} finally {
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
