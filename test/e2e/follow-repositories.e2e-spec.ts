import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { DeliveryWorker } from '../../src/notifications/delivery.worker.js';
import { FollowScheduler } from '../../src/repositories/follow/follow.scheduler.js';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { NotificationReceiver } from '../fakes/notification-receiver.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateMetadata, crateZip, storedArchives } from '../support/registry.js';
import { until } from '../support/until.js';

const SECRET = 'follow-webhook-secret';
const TOKEN = 'ghp_follow-token-for-tests';
const WEBHOOKS = 'test/fixtures/github/webhooks';
const HOUR = 3600_000;

type Json = Record<string, unknown>;

/** One of GitHub's example payloads (test/fixtures/github/webhooks), about `owner/repo`. */
function payload(file: string, repository: string, changes: Json): string {
  const example = JSON.parse(readFileSync(`${WEBHOOKS}/${file}`, 'utf8')) as Json;
  const [owner, name] = repository.split('/');
  const repo = { ...(example.repository as Json), full_name: repository, name, owner: { login: owner } };
  return JSON.stringify({ ...example, ...changes, repository: repo });
}

/** The files of a repository holding a small Workflow Testing RO-Crate named `name`. */
function crateFiles(name: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'ro-crate-metadata.json': JSON.stringify(crateMetadata({ name }), null, 2),
    'workflow.ga': '{"a_galaxy_workflow": "true"}',
    'test/planemo.yml': '- doc: a test\n',
    ...extra,
  };
}

interface FollowReply {
  repository: string;
  tags: string[];
  branches: string[];
  source: string;
  last_poll: { at: string; error: string | null } | null;
  refs: {
    type: string;
    name: string;
    commit: string | null;
    state: string;
    version: string | null;
    reason: string | null;
  }[];
}

/**
 * Following GitHub repositories (API.md 12): `follow` through the API, webhooks in (`create`,
 * `release`, `push`) and polling of the refs with ETags, on the GitHub fake. The timer is off
 * (REFRESH_INTERVAL_SECONDS=0): webhooks wake the scheduler, and polls are ticks run by hand at
 * a clock moved on past the poll interval.
 */
describe(`following GitHub repositories (${testDatabase()})`, () => {
  let t: TestApp;
  let github: GithubFake;
  let links: LinkServer;
  let receiver: NotificationReceiver;
  let scheduler: FollowScheduler;
  let dataSource: DataSource;
  let alice: string;
  let clock = Date.now();

  /** A poll of every repository due, as the timer's next tick past the interval would make it. */
  async function poll(): Promise<void> {
    clock = Math.max(clock, Date.now()) + HOUR;
    await scheduler.settled();
    await scheduler.tick(new Date(clock));
  }

  const as = (token: string) => ({ Authorization: `Bearer ${token}` });
  const get = (path: string) => t.http.get(path).set(as(alice));
  const sign = (body: string) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
  const hook = (event: string, body: string) =>
    t.http
      .post('/integrations/github/webhooks')
      .set({ 'content-type': 'application/json', 'x-github-event': event, 'x-hub-signature-256': sign(body) })
      .send(body);
  const follow = (uuid: string, body: unknown, token = alice) =>
    t.http.put(`/workflows/${uuid}`).set(as(token)).send({ follow: body });
  const followOf = async (uuid: string): Promise<FollowReply> =>
    (await get(`/workflows/${uuid}`)).body.follow as FollowReply;
  const versionsOf = async (uuid: string): Promise<Json[]> =>
    (await get(`/workflows/${uuid}/versions`)).body.versions as Json[];
  const versionNames = async (uuid: string) => (await versionsOf(uuid)).map((version) => version.version);

  /** A workflow registered from `owner/repo` at its default branch, by Alice. */
  async function registerRepository(
    owner: string,
    repo: string,
    extra: Record<string, string> = {},
  ): Promise<string> {
    github.addRepository(owner, repo);
    github.push(owner, repo, { branch: 'main', files: crateFiles(`${repo} on main`, extra) });
    const registered = await t.http
      .post('/users/current/workflows')
      .set(as(alice))
      .send({ roc_link: `https://github.com/${owner}/${repo}`, version: 'first' });
    expect(registered.status).toBe(201);
    return (registered.body as { uuid: string }).uuid;
  }

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
    links = await LinkServer.start();
    receiver = await new NotificationReceiver().start();
    t = await createTestApp({
      GITHUB_API_URL: github.url,
      GITHUB_TOKEN: TOKEN,
      GITHUB_WEBHOOK_SECRET: SECRET,
      MAX_CRATE_BYTES: String(1024 * 1024),
    });
    scheduler = t.app.get(FollowScheduler);
    dataSource = t.app.get(DataSource);
    alice = await t.userToken();
    const channel = await t.http
      .post('/users/current/channels')
      .set(as(alice))
      .send({ type: 'webhook', target: `${receiver.url}/alice`, events: ['FOLLOW_FAILED'] });
    expect(channel.status).toBe(201);
  });

  afterAll(async () => {
    await t?.close();
    await Promise.all([github?.stop(), receiver?.stop()]);
    await links?.close();
  });

  describe('follow through the API', () => {
    it('is null for a workflow registered from another link, and refused there with 400', async () => {
      const path = '/zip.crate.zip';
      links.route(path, { kind: 'bytes', body: crateZip({ name: 'zipped' }) });
      const registered = await t.http
        .post('/users/current/workflows')
        .set(as(alice))
        .send({ roc_link: links.url(path), version: '1.0' });
      const uuid = (registered.body as { uuid: string }).uuid;
      expect((await get(`/workflows/${uuid}`)).body.follow).toBeNull();
      const refused = await follow(uuid, { tags: ['v*'] });
      expect(refused.status).toBe(400);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(refused.body.detail).toMatch(/not registered from a repository link/);
    });

    it('shows what a repository-linked workflow follows, none at first; refuses bad globs with 400', async () => {
      const uuid = await registerRepository('octo', 'plain');
      expect(await followOf(uuid)).toEqual({
        repository: 'octo/plain',
        tags: [],
        branches: [],
        source: 'none',
        last_poll: null,
        refs: [],
      });
      for (const bad of [
        'v*',
        { tags: 'v*' },
        { tags: [7] },
        { branches: [''] },
        { tags: Array.from({ length: 51 }, (_, i) => `v${i}`) },
      ]) {
        const response = await follow(uuid, bad);
        expect({ bad, status: response.status }).toEqual({ bad, status: 400 });
      }
      const other = await t.userToken();
      expect((await follow(uuid, { tags: ['v*'] }, other)).status).toBe(404);
      expect((await followOf(uuid)).source).toBe('none');
    });
  });

  describe('a followed repository', () => {
    let uuid: string;
    let before: string;

    beforeAll(async () => {
      uuid = await registerRepository('nf-core', 'demo');
      before = github.push('nf-core', 'demo', { tag: 'v0.9', files: crateFiles('demo 0.9') });
      const set = await follow(uuid, { tags: ['v*', 'release/**'], branches: ['main'] });
      expect(set.status).toBe(200);
      expect(set.body.follow).toMatchObject({
        tags: ['v*', 'release/**'],
        branches: ['main'],
        source: 'api',
      });
      // Following began: its first poll (woken at once) only notes the refs there are.
      await until('the first poll', async () => (await followOf(uuid)).last_poll !== null);
      await scheduler.settled();
    });

    it('registers a tag created after following began, on its webhook, at the tag’s commit', async () => {
      const tagged = github.push('nf-core', 'demo', { tag: 'v1.0', files: crateFiles('demo 1.0') });
      const answered = await hook('create', payload('create.json', 'nf-core/demo', { ref: 'v1.0' }));
      expect(answered.status).toBe(204);
      await until('v1.0 registered', async () => (await versionNames(uuid)).includes('v1.0'));
      const read = await get(`/workflows/${uuid}/versions/v1.0`);
      expect(read.body.name).toBe('demo 1.0');
      expect(read.body.version.ro_crate).toMatchObject({
        links: { external: 'https://github.com/nf-core/demo/tree/v1.0' },
        source: { ref: 'v1.0', commit: tagged },
      });
      expect((await followOf(uuid)).refs[0]).toMatchObject({
        type: 'tag',
        name: 'v1.0',
        commit: tagged,
        state: 'registered',
        version: 'v1.0',
      });
      // The tag there before following began is not a version.
      expect(await versionNames(uuid)).not.toContain('v0.9');
      expect(before).toMatch(/^[0-9a-f]{40}$/);
    });

    it('changes nothing on a later event about the same tag (a release, a replay)', async () => {
      await scheduler.settled();
      const archives = github.archiveRequests.length;
      const body = payload('release-published.json', 'nf-core/demo', {
        release: { tag_name: 'v1.0', target_commitish: 'main' },
      });
      expect((await hook('release', body)).status).toBe(204);
      expect((await hook('release', body)).status).toBe(204);
      expect((await hook('create', payload('create.json', 'nf-core/demo', { ref: 'v1.0' }))).status).toBe(
        204,
      );
      await scheduler.settled();
      expect(github.archiveRequests.length).toBe(archives);
      expect((await versionNames(uuid)).filter((name) => name === 'v1.0')).toHaveLength(1);
    });

    it('registers, then replaces, the version of a followed branch on each push', async () => {
      const first = github.push('nf-core', 'demo', { branch: 'main', files: crateFiles('demo main 1') });
      const push = (after: string) =>
        hook('push', payload('push-with-new-branch.json', 'nf-core/demo', { ref: 'refs/heads/main', after }));
      expect((await push(first)).status).toBe(204);
      await until('main registered', async () => (await versionNames(uuid)).includes('main'));
      const firstRead = await get(`/workflows/${uuid}/versions/main`);
      expect(firstRead.body.version.ro_crate.source).toEqual({ ref: 'main', commit: first });
      const archivesBefore = storedArchives(t).length;

      const second = github.push('nf-core', 'demo', { branch: 'main', files: crateFiles('demo main 2') });
      expect((await push(second)).status).toBe(204);
      await until(
        'main replaced by the second push',
        async () =>
          (await get(`/workflows/${uuid}/versions/main`)).body.version?.ro_crate.source.commit === second,
      );
      const secondRead = await get(`/workflows/${uuid}/versions/main`);
      expect(secondRead.body.name).toBe('demo main 2');
      expect((await versionNames(uuid)).filter((name) => name === 'main')).toHaveLength(1);
      // The replaced version's archive went with it.
      await scheduler.settled();
      expect(storedArchives(t)).toHaveLength(archivesBefore);
      expect(secondRead.body.version.uuid).not.toBe(firstRead.body.version.uuid);
    });

    it('finds what a missed webhook told, at the next poll, and asks GitHub with ETags', async () => {
      const tagged = github.push('nf-core', 'demo', { tag: 'v1.1', files: crateFiles('demo 1.1') });
      const pushed = github.push('nf-core', 'demo', { branch: 'main', files: crateFiles('demo main 3') });
      await poll();
      expect(await versionNames(uuid)).toContain('v1.1');
      const read = await get(`/workflows/${uuid}/versions/v1.1`);
      expect(read.body.version.ro_crate.source).toEqual({ ref: 'v1.1', commit: tagged });
      expect((await get(`/workflows/${uuid}/versions/main`)).body.version.ro_crate.source.commit).toBe(
        pushed,
      );

      const notModified = github.notModifiedCount;
      const registrations = github.archiveRequests.length;
      await poll();
      // Both listings (tags, branches) answered 304: nothing new, nothing registered.
      expect(github.notModifiedCount).toBe(notModified + 2);
      expect(github.archiveRequests.length).toBe(registrations);
      expect((await followOf(uuid)).last_poll).toEqual({ at: expect.any(String), error: null });
    });

    it('ignores a matching tag whose name cannot be a version, saying why', async () => {
      github.push('nf-core', 'demo', { tag: 'release/2.0', files: crateFiles('demo release') });
      expect(
        (await hook('create', payload('create.json', 'nf-core/demo', { ref: 'release/2.0' }))).status,
      ).toBe(204);
      await poll();
      expect((await followOf(uuid)).refs).toContainEqual(
        expect.objectContaining({
          type: 'tag',
          name: 'release/2.0',
          state: 'ignored',
          reason:
            "the tag name 'release/2.0' cannot be a version name: it must not contain '/' or control characters",
        }),
      );
      expect(await versionNames(uuid)).not.toContain('release/2.0');
    });

    it('records a tag whose crate cannot be registered, half-registers nothing, and tells the owner', async () => {
      await scheduler.settled();
      const rowsBefore = await dataSource.query<{ n: number | string }[]>(
        'SELECT COUNT(*) AS n FROM workflow_versions',
      );
      const archives = storedArchives(t).length;
      const broken = github.push('nf-core', 'demo', {
        tag: 'v2.0',
        files: { 'README.md': '# no crate here' },
      });
      expect((await hook('create', payload('create.json', 'nf-core/demo', { ref: 'v2.0' }))).status).toBe(
        204,
      );
      await until('v2.0 recorded as failed', async () =>
        (await followOf(uuid)).refs.some((ref) => ref.name === 'v2.0' && ref.state === 'failed'),
      );
      const failed = (await followOf(uuid)).refs.find((ref) => ref.name === 'v2.0');
      expect(failed).toMatchObject({
        commit: broken,
        version: null,
        reason: expect.stringMatching(/has no ro-crate-metadata.json at its root/),
      });
      expect(await versionNames(uuid)).not.toContain('v2.0');
      expect(
        await dataSource.query<{ n: number | string }[]>('SELECT COUNT(*) AS n FROM workflow_versions'),
      ).toEqual(rowsBefore);
      expect(storedArchives(t)).toHaveLength(archives);

      const notifications = (await get('/users/current/notifications')).body.items as Json[];
      expect(notifications[0]).toMatchObject({
        event: 'FOLLOW_FAILED',
        data: {
          workflow: { uuid },
          instance: null,
          build: null,
          repository: { full_name: 'nf-core/demo', url: 'https://github.com/nf-core/demo' },
          ref: { type: 'tag', name: 'v2.0', commit: broken },
          error: expect.stringMatching(/has no ro-crate-metadata.json/),
        },
      });
      await t.app.get(DeliveryWorker).tick(new Date());
      expect(receiver.accepted).toHaveLength(1);
      const delivered = JSON.parse(receiver.accepted[0].body) as Json;
      expect(delivered).toMatchObject({
        event: 'FOLLOW_FAILED',
        notification: { data: { ref: { name: 'v2.0' } } },
      });
      // Told once: a later poll or event about the tag changes nothing.
      await poll();
      expect((await hook('create', payload('create.json', 'nf-core/demo', { ref: 'v2.0' }))).status).toBe(
        204,
      );
      await scheduler.settled();
      expect(
        ((await get('/users/current/notifications')).body.items as Json[]).filter(
          (n) => n.event === 'FOLLOW_FAILED',
        ),
      ).toHaveLength(1);
    });

    it('shows the failure on the status page', async () => {
      const page = await get(`/status/${uuid}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain('Following <a href="https://github.com/nf-core/demo">nf-core/demo</a>');
      expect(page.text).toMatch(/tag v2\.0<\/th>\s*<td><span class="problem">not registered:<\/span>/);
      expect(page.text).toContain('version v1.0 registered');
    });

    it('refuses an archive past the size limit as any registration does, and records it', async () => {
      github.push('nf-core', 'demo', { tag: 'v3.0', archiveBytes: 2 * 1024 * 1024 });
      expect((await hook('create', payload('create.json', 'nf-core/demo', { ref: 'v3.0' }))).status).toBe(
        204,
      );
      await until('v3.0 recorded as failed', async () =>
        (await followOf(uuid)).refs.some((ref) => ref.name === 'v3.0' && ref.state === 'failed'),
      );
      expect((await followOf(uuid)).refs.find((ref) => ref.name === 'v3.0')?.reason).toMatch(
        /larger than 1 MiB/,
      );
    });

    it('tries again at the next poll when GitHub is down, and waits out a rate limit', async () => {
      await scheduler.settled();
      github.fail({ kind: 'status', status: 502 }, '/repos/nf-core/demo/tags');
      github.push('nf-core', 'demo', { tag: 'v4.0', files: crateFiles('demo 4.0') });
      await poll();
      expect((await followOf(uuid)).last_poll?.error).toMatch(/GitHub answered 502/);
      expect(await versionNames(uuid)).not.toContain('v4.0');
      github.heal();

      // Rate-limited: no request to GitHub before the limit's end, then the poll finds the tag.
      const resetAt = new Date(clock + 3 * HOUR);
      github.limitRate({ resetAt });
      await poll();
      github.clearRateLimit();
      const requests = github.totalRequests;
      await poll(); // an hour later, still paused
      expect(github.totalRequests).toBe(requests);
      await poll();
      await poll();
      expect(await versionNames(uuid)).toContain('v4.0');
      expect((await followOf(uuid)).last_poll?.error).toBeNull();
    });

    it('stops registering when follow is set to nothing', async () => {
      expect((await follow(uuid, { tags: [], branches: [] })).body.follow).toMatchObject({
        tags: [],
        branches: [],
        source: 'api',
      });
      github.push('nf-core', 'demo', { tag: 'v5.0', files: crateFiles('demo 5.0') });
      expect((await hook('create', payload('create.json', 'nf-core/demo', { ref: 'v5.0' }))).status).toBe(
        204,
      );
      await poll();
      expect(await versionNames(uuid)).not.toContain('v5.0');
    });
  });

  describe('a followed repository that goes away', () => {
    it('records that it is gone at the next poll and tells the owner once, until it comes back', async () => {
      const uuid = await registerRepository('octo', 'vanishing');
      expect((await follow(uuid, { tags: ['v*'] })).status).toBe(200);
      await poll();
      const told = async () =>
        ((await get('/users/current/notifications')).body.items as Json[]).filter(
          (n) => n.event === 'FOLLOW_FAILED' && (n.data as Json).ref === null,
        );
      const before = (await told()).length;
      github.removeRepository('octo', 'vanishing');
      await poll();
      expect((await followOf(uuid)).last_poll?.error).toMatch(
        /the GitHub repository octo\/vanishing does not exist, or is private/,
      );
      await poll();
      const notifications = await told();
      expect(notifications).toHaveLength(before + 1);
      expect(notifications[0]).toMatchObject({
        data: { workflow: { uuid }, repository: { full_name: 'octo/vanishing' }, ref: null },
      });
      // Back again: polls work, and its new tags are registered.
      github.addRepository('octo', 'vanishing');
      github.push('octo', 'vanishing', { branch: 'main', files: crateFiles('vanishing again') });
      await poll();
      expect((await followOf(uuid)).last_poll?.error).toBeNull();
    });
  });

  describe('webhooks', () => {
    it('answers a repository nobody follows with 204, doing nothing and asking GitHub nothing', async () => {
      const requests = github.totalRequests;
      for (const [event, body] of [
        ['create', payload('create.json', 'someone/else', { ref: 'v1.0' })],
        ['push', payload('push-with-new-branch.json', 'someone/else', {})],
        ['release', payload('release-published.json', 'someone/else', {})],
        ['push', payload('push-tag-deleted.json', 'nf-core/demo', {})],
      ] as const) {
        expect({ event, status: (await hook(event, body)).status }).toEqual({ event, status: 204 });
      }
      await scheduler.settled();
      expect(github.totalRequests).toBe(requests);
    });

    it('refuses a forged signature with 401, and ignores a payload without its repository', async () => {
      const body = payload('create.json', 'nf-core/demo', { ref: 'v9.9' });
      const forged = await t.http
        .post('/integrations/github/webhooks')
        .set({
          'content-type': 'application/json',
          'x-github-event': 'create',
          'x-hub-signature-256': sign(`${body} `),
        })
        .send(body);
      expect(forged.status).toBe(401);
      expect((await hook('create', JSON.stringify({ ref: 'v1', ref_type: 'tag' }))).status).toBe(204);
    });
  });

  describe('.lifemonitor.yaml', () => {
    it('follows what the file says where the API said nothing, and names and shows the workflow as it says', async () => {
      const config = [
        'name: from the file',
        'public: true',
        'push:',
        '  tags:',
        '    - name: "v*.*.*"',
        '',
      ].join('\n');
      const uuid = await registerRepository('iwc', 'configured', { '.lifemonitor.yaml': config });
      const read = await get(`/workflows/${uuid}`);
      expect(read.body).toMatchObject({ name: 'from the file', public: true });
      expect(read.body.follow).toMatchObject({ tags: ['v*.*.*'], branches: [], source: 'file' });
      // Its first poll (GitHub's pause of the rate-limit test is still on in real time) notes the refs there are.
      await poll();
      expect((await followOf(uuid)).last_poll).toEqual({ at: expect.any(String), error: null });
      github.push('iwc', 'configured', {
        tag: 'v1.2.3',
        files: crateFiles('configured 1.2.3', { '.lifemonitor.yaml': config }),
      });
      github.push('iwc', 'configured', { tag: 'nightly', files: crateFiles('configured nightly') });
      await poll();
      expect(await versionNames(uuid)).toEqual(['first', 'v1.2.3']);
      // The API wins over the file.
      expect((await follow(uuid, { tags: ['nightly*'] })).body.follow).toMatchObject({
        tags: ['nightly*'],
        source: 'api',
      });
      // Null gives the choice back to the file.
      expect((await follow(uuid, null)).body.follow).toMatchObject({ tags: ['v*.*.*'], source: 'file' });
    });

    it('is left out, as if absent, when it is invalid', async () => {
      const uuid = await registerRepository('iwc', 'misconfigured', {
        '.lifemonitor.yaml': 'public: "yes"\n',
      });
      const read = await get(`/workflows/${uuid}`);
      expect(read.body).toMatchObject({ name: 'misconfigured on main', public: false });
      expect(read.body.follow).toMatchObject({ tags: [], branches: [], source: 'none' });
      // The repository check of an invalid file (API.md 12) says which and where.
      expect(read.body.version.issues).toContainEqual({
        id: 'lm.InvalidConfigFile',
        name: 'Invalid LifeMonitor configuration file',
        description: ".lifemonitor.yaml is not valid: 'public' must be boolean.",
        severity: 'error',
      });
    });

    it('records a followed branch that is not in the repository, at every registration', async () => {
      const config = [
        'push:',
        '  branches:',
        '    - name: main',
        '    - name: develop',
        '    - name: "feature/*"',
        '',
      ];
      const uuid = await registerRepository('iwc', 'branchy', { 'lifemonitor.yaml': config.join('\n') });
      const issues = (await get(`/workflows/${uuid}`)).body.version.issues as Json[];
      expect(issues.find((issue) => issue.id === 'lm.MissingFollowedBranch')).toEqual({
        id: 'lm.MissingFollowedBranch',
        name: 'Followed branch missing',
        description:
          "The branch 'develop' is not in iwc/branchy; no branch of iwc/branchy matches 'feature/*'.",
        severity: 'warning',
      });
      expect(issues.map((issue) => issue.id)).not.toContain('lm.InvalidConfigFile');
      // The API's branches, when it set them, are the ones checked.
      expect((await follow(uuid, { branches: ['main'] })).status).toBe(200);
      github.push('iwc', 'branchy', {
        tag: 'again',
        files: crateFiles('branchy again', { 'lifemonitor.yaml': config.join('\n') }),
      });
      const again = await t.http
        .post('/users/current/workflows')
        .set(as(alice))
        .send({ roc_link: 'https://github.com/iwc/branchy/tree/again', version: 'again', uuid });
      expect(again.status).toBe(201);
      const againIssues = (await get(`/workflows/${uuid}/versions/again`)).body.version.issues as Json[];
      expect(againIssues.map((issue) => issue.id)).not.toContain('lm.MissingFollowedBranch');
    });
  });
});
