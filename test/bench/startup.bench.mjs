// Start-up time to ready (spawn of `node dist/src/main.js` to the first 200 of /health/ready,
// migrations included) and the resident memory of an idle process, on SQLite and on a
// throwaway MariaDB. Each database: a first start on an empty database (all migrations), then
// BENCH_STARTS (default 3) starts on the migrated one; the idle RSS is read after 5 s of rest.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { startMariaDb, stopMariaDb } from '../support/mariadb-server.mjs';
import { memoryOf, sleep, startService } from './service.mjs';

const starts = Number(process.env.BENCH_STARTS ?? 3);
const MiB = 1024 * 1024;

async function measure(label, dataDir, env) {
  const first = await startService(dataDir, env);
  await first.stop();
  const times = [];
  let idleRss = 0;
  for (let i = 0; i < starts; i++) {
    const service = await startService(dataDir, env);
    times.push(service.readyMs);
    if (i === starts - 1) {
      await sleep(5000);
      idleRss = memoryOf(service.child.pid).rss;
    }
    await service.stop();
  }
  times.sort((a, b) => a - b);
  return {
    database: label,
    'first start ms (migrations)': Math.round(first.readyMs),
    'start ms (median)': Math.round(times[Math.floor(times.length / 2)]),
    'start ms (best)': Math.round(times[0]),
    'idle RSS MiB': +(idleRss / MiB).toFixed(1),
  };
}

const rows = [];
const sqliteDir = mkdtempSync(join(tmpdir(), 'bench-startup-'));
try {
  rows.push(await measure('sqlite', sqliteDir, {}));
} finally {
  rmSync(sqliteDir, { recursive: true, force: true });
}

const mariadb = await startMariaDb();
const mariadbDir = mkdtempSync(join(tmpdir(), 'bench-startup-'));
try {
  const admin = await createConnection(mariadb.rootUrl);
  await admin.query('CREATE DATABASE bench CHARACTER SET utf8mb4');
  await admin.end();
  rows.push(await measure('mariadb', mariadbDir, { DATABASE_URL: `${mariadb.rootUrl}/bench` }));
} finally {
  rmSync(mariadbDir, { recursive: true, force: true });
  await stopMariaDb(mariadb.pid, mariadb.dir);
}
console.table(rows);
