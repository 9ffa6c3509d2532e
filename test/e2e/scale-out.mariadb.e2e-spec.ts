import { randomUUID } from 'node:crypto';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { testDatabase } from '../support/create-test-app.js';
import { crateZip, TEST_TERMS } from '../support/registry.js';
import { ServiceCopies } from '../support/service-copies.js';
import type { ServiceProcess } from '../support/service-process.js';
import { until } from '../support/until.js';

/**
 * The deployment of docker/compose.yaml as plain processes: one MariaDB, two copies of the
 * built service on different ports sharing one DATA_DIR. What one copy registers the other
 * serves (download included), and the two share the monitoring work: each instance is
 * fetched exactly once per refresh cycle, counted at the fake. (MariaDB only: several
 * copies on one SQLite file is not a supported deployment.)
 */
const INSTANCES = 200;
const INTERVAL_SECONDS = 5;
const I = INTERVAL_SECONDS * 1000;
const CYCLES = 3;

async function json(
  service: ServiceProcess,
  path: string,
  token: string,
  init: RequestInit = {},
): Promise<Response> {
  return fetch(`${service.url}${path}`, {
    ...init,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...init.headers },
  });
}

function checksOf(metrics: string): number {
  return metrics
    .split('\n')
    .filter((line) => line.startsWith('testing_service_checks_total{'))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

describe(`two copies of the service on one ${testDatabase()} and one DATA_DIR`, () => {
  let copies: ServiceCopies;
  let links: LinkServer;
  let github: GithubFake;

  beforeAll(async () => {
    copies = await ServiceCopies.prepare('scale-out');
    links = await LinkServer.start();
    github = new GithubFake();
    github.recordLimit = 100_000;
    await github.start();
    // On the tag of the registered version (API.md 7.2): a check is one request, the runs of that ref.
    github.defaultRuns = (_owner, repo) => [{ id: 20_000 + Number(repo.replace(/\D/g, '')), branch: '1.0' }];
  });

  afterAll(async () => {
    await copies?.close();
    await github.stop();
    await links.close();
  });

  it(
    'serves through one copy what the other registered, and splits the monitoring between them',
    async () => {
      const [a, b] = await copies.start({ REFRESH_INTERVAL_SECONDS: String(INTERVAL_SECONDS) });
      const token = await copies.adminToken();

      const bytes = crateZip({
        name: 'shared',
        marker: randomUUID(),
        instances: Array.from({ length: INSTANCES }, (_, i) => ({
          id: `#i${i}`,
          name: `i${i}`,
          runsOn: `${TEST_TERMS}GithubService`,
          url: github.url,
          resource: GithubFake.resource('octo', `r${i}`, 'ci.yml'),
        })),
      });
      const link = links.route('/shared.crate.zip', { kind: 'bytes', body: bytes });
      const registeredAt = Date.now();
      const created = await json(a, '/users/current/workflows', token, {
        method: 'POST',
        body: JSON.stringify({ roc_link: link, version: '1.0' }),
      });
      expect(created.status).toBe(201);
      const { uuid } = (await created.json()) as { uuid: string };

      const read = await json(b, `/workflows/${uuid}`, token);
      expect(read.status).toBe(200);
      expect(((await read.json()) as { name: string }).name).toBe('shared');
      const download = await json(b, `/workflows/${uuid}/rocrate/1.0/download`, token);
      expect(download.status).toBe(200);
      expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
      const suites = await json(b, `/workflows/${uuid}/suites`, token);
      expect(
        ((await suites.json()) as { items: { instances: unknown[] }[] }).items[0].instances,
      ).toHaveLength(INSTANCES);

      // Cycles are windows of the interval aligned on the epoch; the first check is at once.
      const firstCounted = Math.floor(registeredAt / I) + 2;
      await new Promise((resolve) => setTimeout(resolve, (firstCounted + CYCLES) * I - Date.now() + 300));

      const fetches = github.arrivals(/\/runs$/);
      expect(fetches.size).toBe(INSTANCES);
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const from = (firstCounted + cycle) * I;
        const counts = [...fetches.values()].map(
          (times) => times.filter((t) => t >= from && t < from + I).length,
        );
        expect(counts.filter((count) => count !== 1)).toEqual([]);
      }
      // Both copies checked, and every runs read at the fake was one of their checks (the workflow
      // state reads of API.md 6.2 come on top: a changed listing's, and a few on 304s). The copies
      // go on checking meanwhile: a check is counted once done, after its read arrived, so the two
      // agree between cycles, when no check is in flight.
      const checksOfCopies = () =>
        Promise.all(
          copies.all.map(async (copy) => checksOf(await (await fetch(`${copy.url}/metrics`)).text())),
        );
      const runReads = () =>
        [...github.arrivals(/\/runs$/).values()].reduce((sum, times) => sum + times.length, 0);
      let checks: number[] = [];
      let reads = 0;
      await until(
        'as many checks counted as runs read, between two cycles',
        async () => {
          reads = runReads();
          checks = await checksOfCopies();
          return checks[0] + checks[1] === reads && runReads() === reads;
        },
        { timeoutMs: 3 * I },
      );
      expect(checks.every((count) => count > 0)).toBe(true);

      const status = await json(b, `/workflows/${uuid}/status`, token);
      expect(((await status.json()) as { aggregate_test_status: string }).aggregate_test_status).toBe(
        'all_passing',
      );
      process.stdout.write(
        `scale-out: ${github.totalRequests} fetches, copies checked ${checks.join(' + ')}\n`,
      );
    },
    (CYCLES + 4) * I + 60_000,
  );
});
