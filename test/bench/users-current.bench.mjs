// Throughput and latency of an authenticated GET /users/current (JWT check, user and
// revocation re-check, JSON reply, helmet, request id, logging) against a bare node:http
// server returning the same bytes, in the same run on the same machine. Prints figures;
// asserts nothing. Settings: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 50).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freePort } from '../support/mariadb-server.mjs';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);

async function waitReady(url) {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${url}/health/ready`)).status === 200) {
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the service did not become ready');
}

function run(url, headers) {
  return autocannon({ url, connections, duration: seconds, headers });
}

function summary(name, result) {
  return {
    name,
    'req/s': Math.round(result.requests.average),
    'p50 ms': result.latency.p50,
    'p90 ms': result.latency.p90,
    'p99 ms': result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

const dataDir = mkdtempSync(join(tmpdir(), 'bench-'));
const port = await freePort();
const service = spawn(process.execPath, ['dist/src/main.js'], {
  env: {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    PORT: String(port),
    DATA_DIR: dataDir,
    DATABASE_URL: `sqlite:${join(dataDir, 'app.sqlite')}`,
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
    ADMIN_USERNAME: 'admin',
    ADMIN_PASSWORD: 'bench-password',
    LOG_LEVEL: 'warn',
    REFRESH_INTERVAL_SECONDS: '0',
  },
  stdio: 'inherit',
});
const bare = createServer();
try {
  const base = `http://127.0.0.1:${port}`;
  await waitReady(base);
  const login = await fetch(`${base}/api/v1/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'bench-password' }),
  });
  const { token } = await login.json();
  const headers = { authorization: `Bearer ${token}` };
  const reference = await fetch(`${base}/users/current`, { headers });
  const body = Buffer.from(await reference.arrayBuffer());
  if (reference.status !== 200) {
    throw new Error(`GET /users/current answered ${reference.status}`);
  }

  bare.on('request', (_request, response) => {
    response.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': body.length,
    });
    response.end(body);
  });
  const barePort = await freePort();
  await new Promise((resolve) => bare.listen(barePort, '127.0.0.1', resolve));

  process.stdout.write(
    `GET /users/current, ${connections} connections, ${seconds} s each, body ${body.length} bytes\n`,
  );
  const service = summary('service /users/current', await run(`${base}/users/current`, headers));
  const baseline = summary('bare node:http, same bytes', await run(`http://127.0.0.1:${barePort}/`, {}));
  console.table([service, baseline]);
  process.stdout.write(
    `ratio service/bare throughput: ${(service['req/s'] / baseline['req/s']).toFixed(3)} ` +
      `(the service serves ${Math.round((100 * service['req/s']) / baseline['req/s'])} % of the bare server's rate)\n`,
  );
} finally {
  bare.close();
  service.kill('SIGTERM');
  await new Promise((resolve) => service.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
