import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GithubFake } from '../fakes/github-fake.js';
import { ADMIN, baseTestEnv, createTestDatabase, testDatabase } from '../support/create-test-app.js';
import { crateMetadata } from '../support/registry.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';

const SECRET = 'copies-webhook-secret';
const INTERVAL_SECONDS = 2;

async function until(what: string, done: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) {
      throw new Error(`not within ${ms / 1000} s: ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function crateFiles(name: string): Record<string, string> {
  return {
    'ro-crate-metadata.json': JSON.stringify(crateMetadata({ name }), null, 2),
    'workflow.ga': '{"a_galaxy_workflow": "true"}',
    'test/planemo.yml': '- doc: a test\n',
  };
}

/** `crate_registrations_total{result="created"}` of one copy. */
async function registrationsOf(copy: ServiceProcess): Promise<number> {
  const text = await (await fetch(`${copy.url}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith('crate_registrations_total{result="created"}'));
  return line ? Number(line.split(' ').pop()) : 0;
}

/**
 * Following a repository with two copies of the built service on one MariaDB (API.md 12): both
 * receive the same webhook, both poll the same repository, and every new tag or push becomes one
 * version through one registration (one archive download, one registration counted over both
 * copies). MariaDB only: several copies on one SQLite file is not a supported deployment.
 */
describe(`following a repository with two copies on one ${testDatabase()}`, () => {
  let dataDir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let github: GithubFake;
  const copies: ServiceProcess[] = [];

  beforeAll(async () => {
    if (testDatabase() !== 'mariadb') {
      throw new Error('this suite runs on the MariaDB project only (see jest.config.js)');
    }
    dataDir = mkdtempSync(join(tmpdir(), 'follow-copies-'));
    database = await createTestDatabase(dataDir);
    github = new GithubFake();
    github.recordLimit = 100_000;
    await github.start();
  });

  afterAll(async () => {
    for (const copy of copies) {
      await copy.stop();
    }
    await github.stop();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('registers each new tag and push once, whether both copies get its webhook or both poll for it', async () => {
    const env = {
      ...baseTestEnv(dataDir, database.url),
      REFRESH_INTERVAL_SECONDS: String(INTERVAL_SECONDS),
      GITHUB_API_URL: github.url,
      GITHUB_WEBHOOK_SECRET: SECRET,
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

    github.addRepository('nf-core', 'shared');
    github.push('nf-core', 'shared', { branch: 'main', files: crateFiles('shared on main') });
    github.push('nf-core', 'shared', { tag: 'v0.1', files: crateFiles('shared 0.1') });
    const created = await call(a, '/users/current/workflows', {
      method: 'POST',
      body: JSON.stringify({ roc_link: 'https://github.com/nf-core/shared', version: 'first' }),
    });
    expect(created.status).toBe(201);
    const { uuid } = (await created.json()) as { uuid: string };
    const set = await call(b, `/workflows/${uuid}`, {
      method: 'PUT',
      body: JSON.stringify({ follow: { tags: ['v*'], branches: ['main'] } }),
    });
    expect(set.status).toBe(200);
    const follow = async () =>
      (
        (await (await call(a, `/workflows/${uuid}`)).json()) as {
          follow: { last_poll: unknown; refs: { name: string; state: string }[] };
        }
      ).follow;
    await until('the first poll', async () => (await follow()).last_poll !== null);
    const pollingSince = Date.now();
    const versions = async () =>
      (
        (await (await call(b, `/workflows/${uuid}/versions`)).json()) as { versions: { version: string }[] }
      ).versions.map((version) => version.version);
    const downloadsOf = (commit: string) =>
      github.archiveRequests.filter((request) => request.path.endsWith(`/legacy.zip/${commit}`)).length;
    const registrations = async () => (await registrationsOf(a)) + (await registrationsOf(b));
    const before = await registrations();

    // The same signed webhook to both copies at once.
    const tagged = github.push('nf-core', 'shared', { tag: 'v1.0', files: crateFiles('shared 1.0') });
    const example = JSON.parse(readFileSync('test/fixtures/github/webhooks/create.json', 'utf8')) as Record<
      string,
      unknown
    >;
    const body = JSON.stringify({
      ...example,
      ref: 'v1.0',
      repository: { ...(example.repository as object), full_name: 'nf-core/shared' },
    });
    const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
    const answers = await Promise.all(
      copies.map((copy) =>
        fetch(`${copy.url}/integrations/github/webhooks`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-github-event': 'create',
            'x-hub-signature-256': signature,
          },
          body,
        }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([204, 204]);
    await until('v1.0 registered', async () => (await versions()).includes('v1.0'));

    // Missed webhooks: both copies poll, one of them finds the tag and the push.
    const polledTag = github.push('nf-core', 'shared', { tag: 'v1.1', files: crateFiles('shared 1.1') });
    const pushed = github.push('nf-core', 'shared', { branch: 'main', files: crateFiles('shared main') });
    await until('v1.1 and main registered by polling', async () => {
      const names = await versions();
      return names.includes('v1.1') && names.includes('main');
    });
    // Several poll intervals more: nobody registers any of them again.
    await new Promise((resolve) => setTimeout(resolve, 3 * INTERVAL_SECONDS * 1000));

    expect((await versions()).sort()).toEqual(['first', 'main', 'v1.0', 'v1.1']);
    expect([downloadsOf(tagged), downloadsOf(polledTag), downloadsOf(pushed)]).toEqual([1, 1, 1]);
    expect((await registrations()) - before).toBe(3);
    expect((await follow()).refs.filter((ref) => ref.state !== 'registered')).toEqual([]);
    // The two copies' polls read the tags once an interval between them, not once each.
    const polls = github.countMatching(/^\/repos\/nf-core\/shared\/tags$/);
    const intervals = (Date.now() - pollingSince) / (INTERVAL_SECONDS * 1000);
    expect(polls).toBeLessThanOrEqual(Math.ceil(intervals) + 2);
    process.stdout.write(
      `follow-copies: ${polls} tag listings read, ${github.notModifiedCount} answered 304, ` +
        `registrations a ${await registrationsOf(a)} + b ${await registrationsOf(b)}\n`,
    );
  }, 180_000);
});
