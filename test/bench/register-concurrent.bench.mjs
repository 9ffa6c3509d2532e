// Registration under concurrency (issue 10, point 8), on SQLite: 20 clients registering distinct
// crates at once while 10 readers list their workflows, against the same number of crates (other
// bytes, same sizes) registered one after another by one client with nobody reading. For crates of
// about 100 KB and about 700 KB. Prints total time, registrations/s and the latency of a
// registration (p50, p99), and the readers' latency; asserts only that every registration answered
// 201. The crates are served by a process of their own, so that the clients' work here does not
// slow the downloads. Settings: BENCH_CLIENTS (default 20), BENCH_PER_CLIENT (default 3), BENCH_READERS (default 10).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { crateZip, serveCratesApart } from './crates.mjs';
import { startService } from './service.mjs';

const clients = Number(process.env.BENCH_CLIENTS ?? 20);
const perClient = Number(process.env.BENCH_PER_CLIENT ?? 3);
const readers = Number(process.env.BENCH_READERS ?? 10);
const SIZES = [
  ['~100 KB', 100 * 1024],
  ['~700 KB', 700 * 1024],
];
const total = clients * perClient;

const percentile = (values, p) => {
  if (values.length === 0) {
    return NaN;
  }
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

const crates = new Map();
for (const [label, bytes] of SIZES) {
  for (const mode of ['sequential', 'concurrent']) {
    for (let i = 0; i < total; i++) {
      crates.set(`${mode}-${bytes}-${i}.zip`, crateZip(`${mode} ${label} ${i}`, bytes));
    }
  }
}
crates.set('warm.zip', crateZip('warm', 10_000));
const dir = mkdtempSync(join(tmpdir(), 'bench-register-'));
mkdirSync(join(dir, 'crates'));
const links = await serveCratesApart(join(dir, 'crates'), crates);
const service = await startService(join(dir, 'data'), { ALLOW_PRIVATE_NETWORK_LINKS: 'true' });
let failed = false;
try {
  const token = await service.login();
  const headers = { authorization: `Bearer ${token}` };

  /** Registers one crate and returns how long it took, in ms. */
  const register = async (path) => {
    const started = performance.now();
    const response = await fetch(`${service.url}/users/current/workflows`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ roc_link: links.link(path), version: '1.0' }),
    });
    const took = performance.now() - started;
    if (response.status !== 201) {
      throw new Error(`registering ${path} answered ${response.status}: ${await response.text()}`);
    }
    await response.arrayBuffer();
    return took;
  };

  /** Readers list the caller's newest workflows until `done` is set; returns their latencies. */
  const read = async (state) => {
    const latencies = [];
    while (!state.done) {
      const started = performance.now();
      const response = await fetch(`${service.url}/users/current/workflows?limit=20`, { headers });
      await response.arrayBuffer();
      latencies.push(performance.now() - started);
      if (response.status !== 200) {
        throw new Error(`the list answered ${response.status}`);
      }
    }
    return latencies;
  };

  // Loads the code paths before anything is timed.
  await register('warm.zip');

  const rows = [];
  for (const [label, bytes] of SIZES) {
    // Sequential: one client, nobody reading.
    const sequential = [];
    let started = performance.now();
    for (let i = 0; i < total; i++) {
      sequential.push(await register(`sequential-${bytes}-${i}.zip`));
    }
    const sequentialMs = performance.now() - started;

    // Concurrent: `clients` clients, each registering its share one after another, readers alongside.
    const state = { done: false };
    const reading = Array.from({ length: readers }, () => read(state));
    started = performance.now();
    const perClientLatencies = await Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        const latencies = [];
        for (let i = 0; i < perClient; i++) {
          latencies.push(await register(`concurrent-${bytes}-${client * perClient + i}.zip`));
        }
        return latencies;
      }),
    );
    const concurrentMs = performance.now() - started;
    state.done = true;
    const reads = (await Promise.all(reading)).flat();
    const concurrent = perClientLatencies.flat();

    const row = (mode, count, ms, latencies, readLatencies) => ({
      crate: label,
      mode,
      registrations: count,
      'total s': +(ms / 1000).toFixed(2),
      'registrations/s': +((1000 * count) / ms).toFixed(1),
      'p50 ms': Math.round(percentile(latencies, 50)),
      'p99 ms': Math.round(percentile(latencies, 99)),
      reads: readLatencies.length,
      'read p50 ms': readLatencies.length ? Math.round(percentile(readLatencies, 50)) : '',
      'read p99 ms': readLatencies.length ? Math.round(percentile(readLatencies, 99)) : '',
    });
    rows.push(row('sequential, 1 client', sequential.length, sequentialMs, sequential, []));
    rows.push(
      row(`${clients} clients + ${readers} readers`, concurrent.length, concurrentMs, concurrent, reads),
    );
  }
  process.stdout.write(
    `registration under concurrency: SQLite, ${total} distinct crates per row, ${clients} clients x ${perClient}\n`,
  );
  console.table(rows);
  process.stdout.write(
    'goals: concurrent total <= sequential total; p99 <= 1 s for ~100 KB crates with 20 clients\n',
  );
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  await links.close();
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
