import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { testDatabase } from '../support/create-test-app.js';
import { crateZip, TEST_TERMS } from '../support/registry.js';
import { COPIES_WAIT, ServiceCopies } from '../support/service-copies.js';
import type { ServiceProcess } from '../support/service-process.js';
import { until } from '../support/until.js';

const INTERVAL_SECONDS = 2;
const INSTANCES = 12;
const DAY = 24 * 3600_000;

/**
 * Periodic re-runs (API.md 11) with two copies of the built service on one MariaDB: both look
 * for due re-runs at every refresh cycle, and each due instance is started once, counted at the
 * GitHub fake. MariaDB only: several copies on one SQLite file is not a supported deployment.
 */
describe(`periodic re-runs with two copies on one ${testDatabase()}`, () => {
  let copies: ServiceCopies;
  let github: GithubFake;
  let links: LinkServer;

  beforeAll(async () => {
    copies = await ServiceCopies.prepare('reruns-copies');
    github = new GithubFake();
    github.recordLimit = 100_000;
    await github.start();
    links = await LinkServer.start();
  });

  afterAll(async () => {
    await copies?.close();
    await github.stop();
    await links.close();
  });

  it('starts each due instance once, whichever copy finds it first, on the version ref', async () => {
    // Every instance's one run passed 40 days ago: all due under a 30-day interval.
    for (let i = 0; i < INSTANCES; i++) {
      github.addRepository('octo', `copies${i}`);
      github.push('octo', `copies${i}`, { branch: 'main', files: { 'README.md': `${i}` } });
      github.setRuns('octo', `copies${i}`, 'ci.yml', [
        { id: 100 + i, conclusion: 'success', startedAt: new Date(Date.now() - 40 * DAY) },
      ]);
    }
    const crate = links.route('/copies.crate.zip', {
      kind: 'bytes',
      body: crateZip({
        name: 'collapsing in two copies',
        marker: 'copies',
        instances: Array.from({ length: INSTANCES }, (_, i) => ({
          id: `#copies${i}`,
          name: `copies${i}`,
          runsOn: `${TEST_TERMS}GithubService`,
          url: github.url,
          resource: GithubFake.resource('octo', `copies${i}`, 'ci.yml'),
        })),
      }),
    });
    const [a, b] = await copies.start({
      REFRESH_INTERVAL_SECONDS: String(INTERVAL_SECONDS),
      GITHUB_API_URL: github.url,
      GITHUB_TOKEN: 'ghp_two-copies-token',
    });
    const token = await copies.adminToken();
    const call = (copy: ServiceProcess, path: string, init: RequestInit = {}) =>
      fetch(`${copy.url}${path}`, {
        ...init,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...init.headers },
      });
    const created = await call(a, '/users/current/workflows', {
      method: 'POST',
      body: JSON.stringify({ roc_link: crate, version: '1.0' }),
    });
    expect(created.status).toBe(201);
    const { uuid } = (await created.json()) as { uuid: string };
    // Both copies check every instance first, and find nothing due: no interval is set.
    await until(
      'every instance checked',
      async () => {
        const status = (await (await call(b, `/workflows/${uuid}/status`)).json()) as {
          latest_builds: unknown[];
        };
        return status.latest_builds.length === INSTANCES;
      },
      COPIES_WAIT,
    );
    await new Promise((resolve) => setTimeout(resolve, 2 * INTERVAL_SECONDS * 1000));
    expect(github.dispatches).toEqual([]);

    const set = await call(b, `/workflows/${uuid}`, {
      method: 'PUT',
      body: JSON.stringify({ rerun_interval_days: 30 }),
    });
    expect(set.status).toBe(200);
    await until(`${INSTANCES} re-runs started`, () => github.dispatches.length >= INSTANCES, COPIES_WAIT);
    // Several cycles of both copies more: none is started again.
    await new Promise((resolve) => setTimeout(resolve, 4 * INTERVAL_SECONDS * 1000));
    const started = github.dispatches.map((dispatch) => `${dispatch.repo} ${String(dispatch.ref)}`).sort();
    expect(started).toEqual(Array.from({ length: INSTANCES }, (_, i) => `copies${i} main`).sort());
    process.stdout.write(
      `reruns-copies: ${github.dispatches.length} dispatches for ${INSTANCES} due instances\n`,
    );
  }, 180_000);
});
