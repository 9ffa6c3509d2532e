// Throughput and latency of an authenticated GET /users/current (JWT check, user and
// revocation re-check, JSON reply, helmet, request id, logging) against a bare node:http
// server returning the same bytes, in the same run on the same machine. Prints figures;
// asserts nothing. Settings: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 50).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freePort } from '../support/mariadb-server.mjs';
import { startService } from './service.mjs';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);

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
const service = await startService(dataDir);
const bare = createServer();
try {
  const base = service.url;
  const token = await service.login();
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
  const measured = summary('service /users/current', await run(`${base}/users/current`, headers));
  const baseline = summary('bare node:http, same bytes', await run(`http://127.0.0.1:${barePort}/`, {}));
  console.table([measured, baseline]);
  process.stdout.write(
    `ratio service/bare throughput: ${(measured['req/s'] / baseline['req/s']).toFixed(3)} ` +
      `(the service serves ${Math.round((100 * measured['req/s']) / baseline['req/s'])} % of the bare server's rate)\n`,
  );
} finally {
  bare.close();
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
