import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateZip, TEST_TERMS } from '../support/registry.js';

const TOKEN = 'gh-fake-token-from-the-settings';

describe(`CI credentials from the settings (${testDatabase()})`, () => {
  let github: GithubFake;
  let links: LinkServer;
  let dir: string;

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
    github.requiredAuthorization = `Bearer ${TOKEN}`;
    links = await LinkServer.start();
    dir = mkdtempSync(join(tmpdir(), 'ci-credentials-'));
  });

  afterAll(async () => {
    await links.close();
    await github.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Registers a crate with one GitHub instance on the fake, runs one tick, returns the status. */
  async function statusAfterOneCheck(t: TestApp): Promise<{ aggregate_test_status: string; stale: boolean }> {
    const key = `repo-${randomUUID().slice(0, 8)}`;
    github.setRuns('octo', key, 'ci.yml', [{ id: 77, startedAt: new Date() }]);
    const link = links.route(`/${key}.zip`, {
      kind: 'bytes',
      body: crateZip({
        marker: key,
        instances: [
          {
            id: '#gh',
            name: 'gh',
            runsOn: `${TEST_TERMS}GithubService`,
            url: github.url,
            resource: GithubFake.resource('octo', key, 'ci.yml'),
          },
        ],
      }),
    });
    const auth = { Authorization: `Bearer ${await t.login()}` };
    const created = await t.http
      .post('/users/current/workflows')
      .set(auth)
      .send({ roc_link: link, version: '1' });
    expect(created.status).toBe(201);
    await t.app.get(RefreshScheduler).tick(new Date(Date.now() + 1000));
    const status = await t.http.get(`/workflows/${(created.body as { uuid: string }).uuid}/status`).set(auth);
    return status.body as { aggregate_test_status: string; stale: boolean };
  }

  it('sends the token of TESTING_SERVICES_FILE (with ${VAR} from the environment) to its service', async () => {
    const file = join(dir, 'services.yaml');
    writeFileSync(file, `services:\n  - {type: github, url: "${github.url}", token: "\${GH_FAKE_TOKEN}"}\n`);
    const t = await createTestApp({ TESTING_SERVICES_FILE: file, GH_FAKE_TOKEN: TOKEN });
    try {
      await expect(statusAfterOneCheck(t)).resolves.toEqual(
        expect.objectContaining({ aggregate_test_status: 'all_passing', stale: false }),
      );
      expect(github.requests.at(-1)?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    } finally {
      await t.close();
    }
  });

  it('sends no credentials to a service the settings do not name, and the check fails', async () => {
    const t = await createTestApp();
    try {
      await expect(statusAfterOneCheck(t)).resolves.toEqual(
        expect.objectContaining({ aggregate_test_status: 'not_available', stale: true }),
      );
      expect(github.requests.at(-1)?.headers.authorization).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
