import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { ADMIN, baseTestEnv, createTestDatabase, testDatabase } from '../support/create-test-app.js';
import { crateZip, TEST_TERMS } from '../support/registry.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';

const INTERVAL_SECONDS = 2;
const INSTANCES = 12;
const DAY = 24 * 3600_000;

async function until(what: string, done: () => Promise<boolean> | boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) {
      throw new Error(`not within ${ms / 1000} s: ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Periodic re-runs (API.md 11) with two copies of the built service on one MariaDB: both look
 * for due re-runs at every refresh cycle, and each due instance is started once, counted at the
 * GitHub fake. MariaDB only: several copies on one SQLite file is not a supported deployment.
 */
describe(`periodic re-runs with two copies on one ${testDatabase()}`, () => {
  let dataDir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let github: GithubFake;
  let links: LinkServer;
  const copies: ServiceProcess[] = [];

  beforeAll(async () => {
    if (testDatabase() !== 'mariadb') {
      throw new Error('this suite runs on the MariaDB project only (see jest.config.js)');
    }
    dataDir = mkdtempSync(join(tmpdir(), 'reruns-copies-'));
    database = await createTestDatabase(dataDir);
    github = new GithubFake();
    github.recordLimit = 100_000;
    await github.start();
    links = await LinkServer.start();
  });

  afterAll(async () => {
    for (const copy of copies) {
      await copy.stop();
    }
    await github.stop();
    await links.close();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
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
    const env = {
      ...baseTestEnv(dataDir, database.url),
      REFRESH_INTERVAL_SECONDS: String(INTERVAL_SECONDS),
      GITHUB_API_URL: github.url,
      GITHUB_TOKEN: 'ghp_two-copies-token',
    };
    copies.push(await startServiceProcess(env), await startServiceProcess(env));
    const [a, b] = copies;
    const login = await fetch(`${a.url}/api/v1/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    const { token } = (await login.json()) as { token: string };
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
    await until('every instance checked', async () => {
      const status = (await (await call(b, `/workflows/${uuid}/status`)).json()) as {
        latest_builds: unknown[];
      };
      return status.latest_builds.length === INSTANCES;
    });
    await new Promise((resolve) => setTimeout(resolve, 2 * INTERVAL_SECONDS * 1000));
    expect(github.dispatches).toEqual([]);

    const set = await call(b, `/workflows/${uuid}`, {
      method: 'PUT',
      body: JSON.stringify({ rerun_interval_days: 30 }),
    });
    expect(set.status).toBe(200);
    await until(`${INSTANCES} re-runs started`, () => github.dispatches.length >= INSTANCES);
    // Several cycles of both copies more: none is started again.
    await new Promise((resolve) => setTimeout(resolve, 4 * INTERVAL_SECONDS * 1000));
    const started = github.dispatches.map((dispatch) => `${dispatch.repo} ${String(dispatch.ref)}`).sort();
    expect(started).toEqual(Array.from({ length: INSTANCES }, (_, i) => `copies${i} main`).sort());
    process.stdout.write(
      `reruns-copies: ${github.dispatches.length} dispatches for ${INSTANCES} due instances\n`,
    );
  }, 180_000);
});
