import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { GithubFake } from '../fakes/github-fake.js';
import { testDatabase } from '../support/create-test-app.js';
import { crateMetadata } from '../support/registry.js';
import { COPIES_WAIT, ServiceCopies } from '../support/service-copies.js';
import type { ServiceProcess } from '../support/service-process.js';
import { until } from '../support/until.js';

const SECRET = 'copies-webhook-secret';
const INTERVAL_SECONDS = 2;

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
  let copies: ServiceCopies;
  let github: GithubFake;

  beforeAll(async () => {
    copies = await ServiceCopies.prepare('follow-copies');
    github = new GithubFake();
    github.recordLimit = 100_000;
    await github.start();
  });

  afterAll(async () => {
    await copies?.close();
    await github.stop();
  });

  it('registers each new tag and push once, whether both copies get its webhook or both poll for it', async () => {
    const [a, b] = await copies.start({
      REFRESH_INTERVAL_SECONDS: String(INTERVAL_SECONDS),
      GITHUB_API_URL: github.url,
      GITHUB_WEBHOOK_SECRET: SECRET,
    });
    const token = await copies.adminToken();
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
    await until('the first poll', async () => (await follow()).last_poll !== null, COPIES_WAIT);
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
      [a, b].map((copy) =>
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
    await until('v1.0 registered', async () => (await versions()).includes('v1.0'), COPIES_WAIT);

    // Missed webhooks: both copies poll, one of them finds the tag and the push.
    const polledTag = github.push('nf-core', 'shared', { tag: 'v1.1', files: crateFiles('shared 1.1') });
    const pushed = github.push('nf-core', 'shared', { branch: 'main', files: crateFiles('shared main') });
    await until(
      'v1.1 and main registered by polling',
      async () => {
        const names = await versions();
        return names.includes('v1.1') && names.includes('main');
      },
      COPIES_WAIT,
    );
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
