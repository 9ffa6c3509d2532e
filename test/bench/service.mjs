// The built service as the benchmarks run it: a process on a free loopback port, on its own
// DATA_DIR, with an admin to log in as. Plain JavaScript, so a benchmark needs no test runner.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort } from '../support/mariadb-server.mjs';

export const ADMIN = { username: 'admin', password: 'bench-password' };

/**
 * The node options the service is started with, as `npm start` and the image start it (src/v8-flags.ts
 * says why; test/deploy/deployment-files.spec.ts keeps the three alike).
 */
export const START_ARGS = ['--max-semi-space-size=8'];

/** Resident and peak resident memory of a process, in bytes (Linux). */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `path` (/health/ready) until it answers 200; returns the milliseconds it took from `since`. */
export async function waitReady(url, since = performance.now(), path = '/health/ready') {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}${path}`)).status === 200) {
        return performance.now() - since;
      }
    } catch {
      // not listening yet
    }
    await sleep(20);
  }
  throw new Error('the service did not become ready');
}

/**
 * Starts `node dist/src/main.js` (or `options.script`, which starts the service its own way) and
 * waits until it is ready. `env` adds to or overrides the defaults (SQLite in `dataDir`,
 * production logging at warn, scheduler off). Node gets `options.startArgs` (START_ARGS) and then
 * `options.nodeArgs`. `options.quiet` sends its standard output (the log) to /dev/null: still
 * written, never shown.
 */
export async function startService(dataDir, env = {}, options = {}) {
  const port = await freePort();
  const started = performance.now();
  const args = [...(options.startArgs ?? START_ARGS), ...(options.nodeArgs ?? [])];
  const child = spawn(process.execPath, [...args, options.script ?? 'dist/src/main.js'], {
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: `sqlite:${join(dataDir, 'app.sqlite')}`,
      JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      LOG_LEVEL: 'warn',
      REFRESH_INTERVAL_SECONDS: '0',
      ...env,
    },
    stdio: options.quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit',
  });
  const url = `http://127.0.0.1:${port}`;
  const readyMs = await waitReady(url, started, options.readyPath);
  return {
    url,
    child,
    readyMs,
    async login() {
      const response = await fetch(`${url}/api/v1/auth`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(ADMIN),
      });
      return (await response.json()).token;
    },
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
