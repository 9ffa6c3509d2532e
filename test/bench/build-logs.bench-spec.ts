import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { JenkinsFake } from '../fakes/jenkins-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { ADMIN, baseTestEnv, createTestDatabase } from '../support/create-test-app.js';
import { crateZip, TEST_TERMS } from '../support/registry.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';

/**
 * Benchmark of build logs (API.md 11): the built service serves the tail (MAX_LOG_BYTES, 1 MiB)
 * of a 200 MiB Jenkins console log, read from the fake as it comes. Prints the service process's
 * resident memory before, its highest while serving, and the growth (goal: under 20 MiB), with
 * the bytes read upstream and served. Asserts only that the tail is the log's end.
 *
 * Run: npm run build && npm run bench -- build-logs
 */

const LOG_MIB = Number(process.env.BENCH_LOG_MIB ?? 200);
const MIB = 1024 * 1024;
const LINE = `${'x'.repeat(99)}\n`;

/** Resident memory of a process, in bytes (Linux). */
function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN) * 1024;
}

/** LOG_MIB of 100-byte lines, numbered at their start, made as they are read. */
function hugeLog(): Readable {
  const lines = Math.floor((LOG_MIB * MIB) / LINE.length);
  const chunk = 64 * 1024;
  let line = 0;
  return new Readable({
    read() {
      const parts: string[] = [];
      for (let size = 0; size < chunk && line < lines; line++, size += LINE.length) {
        const number = String(line).padStart(12, '0');
        parts.push(number + LINE.slice(number.length));
      }
      this.push(parts.length === 0 ? null : parts.join(''));
    },
  });
}

describe('build logs: the tail of a 200 MiB log', () => {
  let dataDir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let jenkins: JenkinsFake;
  let links: LinkServer;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'bench-logs-'));
    database = await createTestDatabase(dataDir);
    jenkins = new JenkinsFake();
    await jenkins.start();
    links = await LinkServer.start();
  });

  afterAll(async () => {
    await service?.stop();
    await jenkins.stop();
    await links.close();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints the RSS growth of the service while it serves the tail', async () => {
    jenkins.setJob(['bench'], [{ number: 1 }, { number: 2 }]);
    jenkins.setConsoleText(['bench'], 1, hugeLog);
    jenkins.setConsoleText(['bench'], 2, 'a short log\n');
    const crate = links.route('/logs.crate.zip', {
      kind: 'bytes',
      body: crateZip({
        name: 'a long log',
        marker: 'logs',
        instances: [
          {
            id: '#jenkins',
            name: 'on jenkins',
            runsOn: `${TEST_TERMS}JenkinsService`,
            url: jenkins.url,
            resource: JenkinsFake.resource(['bench']),
          },
        ],
      }),
    });
    service = await startServiceProcess({
      ...baseTestEnv(dataDir, database.url),
      REFRESH_INTERVAL_SECONDS: '2',
      LOG_LEVEL: 'warn',
    });
    const login = await fetch(`${service.url}/api/v1/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    const { token } = (await login.json()) as { token: string };
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const created = await fetch(`${service.url}/users/current/workflows`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ roc_link: crate, version: '1.0' }),
    });
    expect(created.status).toBe(201);
    const { uuid } = (await created.json()) as { uuid: string };
    const suites = (await (await fetch(`${service.url}/workflows/${uuid}/suites`, { headers })).json()) as {
      items: { instances: { uuid: string }[] }[];
    };
    const instance = suites.items[0].instances[0].uuid;
    for (;;) {
      const builds = (await (
        await fetch(`${service.url}/instances/${instance}/latest-builds`, { headers })
      ).json()) as { items: unknown[] };
      if (builds.items.length === 2) {
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    const pid = service.child.pid ?? 0;
    // A short log first warms up the route, so that loading its code is not counted as growth.
    await (await fetch(`${service.url}/instances/${instance}/builds/2/logs`, { headers })).text();
    const before = rssOf(pid);
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssOf(pid));
    }, 20);
    const started = process.hrtime.bigint();
    const response = await fetch(`${service.url}/instances/${instance}/builds/1/logs`, { headers });
    const body = Buffer.from(await response.arrayBuffer());
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    clearInterval(sampler);
    peak = Math.max(peak, rssOf(pid));
    expect(response.status).toBe(200);
    const lines = Math.floor((LOG_MIB * MIB) / LINE.length);
    expect(body.toString('utf8').endsWith(`${String(lines - 1).padStart(12, '0')}${LINE.slice(12)}`)).toBe(
      true,
    );
    process.stdout.write(
      `build-logs: a ${LOG_MIB} MiB console log, ${(body.length / MIB).toFixed(2)} MiB tail served in ` +
        `${seconds.toFixed(1)} s; service RSS before ${(before / MIB).toFixed(1)} MiB, highest ` +
        `${(peak / MIB).toFixed(1)} MiB, growth ${((peak - before) / MIB).toFixed(1)} MiB (goal < 20 MiB)\n`,
    );
  }, 600_000);
});
