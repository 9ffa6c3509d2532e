import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { GitlabWebhooksService } from '../../src/notifications/gitlab-webhooks.service.js';
import { FollowScheduler } from '../../src/repositories/follow/follow.scheduler.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { GitlabFake, sampleTrace } from '../fakes/gitlab-fake.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateMetadata, TEST_TERMS } from '../support/registry.js';
import { until } from '../support/until.js';

const SECRET = 'gitlab-webhook-secret';
const TOKEN = 'glpat-e2e-token';
const MAX_LOG_BYTES = 4096;
const WEBHOOKS = 'test/fixtures/gitlab/go-gitlab-webhooks';
const HOUR = 3600_000;

type Json = Record<string, unknown>;

/**
 * GitLab (API.md 18) end to end on the GitLab fake, configured as a `gitlab` service of
 * TESTING_SERVICES_FILE: projects registered as crate sources and followed, pipelines as builds
 * of a crate's GitLab CI instance, traces as logs, and webhooks in with go-gitlab's example
 * payloads pointed at the fake.
 */
describe(`GitLab CI and repositories (${testDatabase()})`, () => {
  let t: TestApp;
  let gitlab: GitlabFake;
  let dir: string;
  let alice: string;
  let clock = Date.now();

  const as = (token: string) => ({ Authorization: `Bearer ${token}` });
  const get = (path: string) => t.http.get(path).set(as(alice));
  const hook = (event: string, body: unknown, token: string | null = SECRET) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-gitlab-event': event };
    if (token !== null) {
      headers['x-gitlab-token'] = token;
    }
    return t.http.post('/integrations/gitlab/webhooks').set(headers).send(JSON.stringify(body));
  };

  /** One of go-gitlab's example payloads, about the fake's project `path`. */
  function payload(file: string, path: string, changes: Json = {}): Json {
    const example = JSON.parse(readFileSync(`${WEBHOOKS}/${file}`, 'utf8')) as Json;
    const project = {
      ...(example.project as Json),
      path_with_namespace: path,
      web_url: `${gitlab.url}/${path}`,
    };
    return { ...example, ...changes, project };
  }

  /** A crate whose one test instance is a GitLab CI project on the fake. */
  function crateFiles(name: string, project: string): Record<string, string> {
    const metadata = crateMetadata({
      name,
      instances: [
        {
          id: '#gitlab',
          name: 'on gitlab',
          runsOn: `${TEST_TERMS}GitLabService`,
          url: gitlab.url,
          resource: project,
        },
      ],
    });
    return { 'ro-crate-metadata.json': JSON.stringify(metadata, null, 2) };
  }

  async function register(path: string): Promise<string> {
    const created = await t.http
      .post('/users/current/workflows')
      .set(as(alice))
      .send({ roc_link: `${gitlab.url}/${path}`, version: 'first' });
    expect(created.status).toBe(201);
    return (created.body as { uuid: string }).uuid;
  }

  async function check(): Promise<void> {
    clock = Math.max(clock, Date.now()) + HOUR;
    await t.app.get(RefreshScheduler).tick(new Date(clock));
  }

  async function poll(): Promise<void> {
    clock = Math.max(clock, Date.now()) + HOUR;
    const scheduler = t.app.get(FollowScheduler);
    await scheduler.settled();
    await scheduler.tick(new Date(clock));
  }

  const versionNames = async (uuid: string) =>
    ((await get(`/workflows/${uuid}/versions`)).body.versions as Json[]).map((version) => version.version);

  beforeAll(async () => {
    gitlab = new GitlabFake();
    await gitlab.start();
    dir = mkdtempSync(join(tmpdir(), 'gitlab-e2e-'));
    const services = join(dir, 'services.yaml');
    writeFileSync(services, `services:\n  - {type: gitlab, url: "${gitlab.url}", token: "${TOKEN}"}\n`);
    t = await createTestApp({
      TESTING_SERVICES_FILE: services,
      GITLAB_WEBHOOK_SECRET: SECRET,
      MAX_LOG_BYTES: String(MAX_LOG_BYTES),
      REFRESH_INTERVAL_SECONDS: '0',
      DOWNLOAD_TIMEOUT_SECONDS: '2',
      UPSTREAM_TIMEOUT_SECONDS: '2',
    });
    alice = await t.userToken();
  });

  afterAll(async () => {
    await t?.close();
    await gitlab?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers a private project of a nested group at its default branch, with its pipelines as builds', async () => {
    const path = 'science/sub/pipeline';
    gitlab.addProject(path, { token: TOKEN });
    const commit = gitlab.push(path, { branch: 'main', files: crateFiles('on gitlab', path) });
    gitlab.setPipelines(path, [
      { id: 11, status: 'failed' },
      { id: 12, status: 'success' },
    ]);
    const uuid = await register(path);
    const read = await get(`/workflows/${uuid}`);
    expect(read.body.version.ro_crate.source).toEqual({ ref: 'main', commit });

    await check();
    const status = await get(`/workflows/${uuid}/status`);
    expect(status.body).toMatchObject({ aggregate_test_status: 'all_passing' });
    const [latest] = (status.body as { latest_builds: Json[] }).latest_builds;
    expect(latest).toMatchObject({
      build_id: '12',
      status: 'passed',
      links: { origin: `${gitlab.url}/${path}/-/pipelines/12` },
      instance: { service: { type: 'gitlab', url: gitlab.url }, resource: path },
    });
  });

  it('serves the tail of a 200 MiB trace within MAX_LOG_BYTES', async () => {
    const path = 'science/huge-log';
    gitlab.addProject(path);
    gitlab.push(path, { branch: 'main', files: crateFiles('huge log', path) });
    const size = 200 * 1024 * 1024;
    gitlab.setPipelines(path, [
      {
        id: 21,
        status: 'failed',
        jobs: [
          { id: 2101, name: 'build', stage: 'build', status: 'success', trace: 'built\n' },
          { id: 2102, name: 'test', stage: 'test', status: 'failed', trace: () => numberedLines(size) },
        ],
      },
    ]);
    const uuid = await register(path);
    await check();
    const suites = await get(`/workflows/${uuid}/suites`);
    const instance = (suites.body as { items: { instances: { uuid: string }[] }[] }).items[0].instances[0]
      .uuid;
    const log = await get(`/instances/${instance}/builds/21/logs`);
    expect(log.status).toBe(200);
    expect(log.text.length).toBeLessThanOrEqual(MAX_LOG_BYTES);
    expect(log.text.length).toBeGreaterThan(MAX_LOG_BYTES - 1024);
    expect(log.text.endsWith(`line ${String(size / LINE_BYTES - 1).padStart(10, '0')}\n`)).toBe(true);
  });

  it("serves the tail of gitlabhq's own runner trace as GitLab keeps it, and classes its failure", async () => {
    const path = 'science/real-trace';
    const trace = sampleTrace();
    gitlab.addProject(path);
    gitlab.push(path, { branch: 'main', files: crateFiles('real trace', path) });
    gitlab.setPipelines(path, [
      {
        id: 41,
        status: 'failed',
        jobs: [
          {
            id: 4101,
            name: 'rspec-mysql 5 20',
            stage: 'test',
            status: 'failed',
            failureReason: 'script_failure',
            trace,
          },
        ],
      },
    ]);
    const uuid = await register(path);
    await check();
    const suites = await get(`/workflows/${uuid}/suites`);
    const instance = (suites.body as { items: { instances: { uuid: string }[] }[] }).items[0].instances[0]
      .uuid;

    // The trace reports 819 examples, 0 failures and "Job succeeded": nothing in the log tells
    // a failure, so GitLab's failure_reason is what the class rests on.
    const builds = await get(`/instances/${instance}/latest-builds`);
    expect((builds.body as { items: Json[] }).items[0]).toMatchObject({
      build_id: '41',
      status: 'failed',
      failure: {
        class: 'test',
        reason: 'the job script failed',
        evidence: ['failure_reason: script_failure'],
      },
    });

    const log = await get(`/instances/${instance}/builds/41/logs`);
    expect(log.status).toBe(200);
    const tail = Buffer.from(log.text, 'utf8');
    const whole = Buffer.from(trace, 'utf8');
    expect(tail.length).toBeLessThanOrEqual(MAX_LOG_BYTES);
    expect(tail.length).toBeGreaterThan(MAX_LOG_BYTES - 1024);
    // The last bytes of the trace, from the start of a line: colours and section markers kept.
    expect(whole.subarray(whole.length - tail.length).equals(tail)).toBe(true);
    expect(whole[whole.length - tail.length - 1]).toBe(0x0a);
    expect(log.text).toContain('\u001b[0Ksection_start:1522927516:upload_artifacts\n');
    expect(
      log.text.endsWith(
        'section_end:1522927520:upload_artifacts\n\u001b[0K\u001b[32;1mJob succeeded\n\u001b[0;m\n',
      ),
    ).toBe(true);
  });

  it("makes a #job= instance's builds of its jobs, classes its failure by failure_reason, and tells what changed", async () => {
    const path = 'science/matrix';
    gitlab.addProject(path);
    gitlab.push(path, { branch: 'main', files: crateFiles('matrix', `${path}#job=wf-a`) });
    const job = (id: number, name: string, status: string, failureReason?: string) => ({
      id,
      name,
      stage: 'test',
      status,
      failureReason,
      runner: 'blue-3.saas-linux-small-amd64',
      tags: ['saas-linux-small-amd64'],
    });
    gitlab.setPipelines(path, [
      { id: 30, status: 'success', jobs: [job(3001, 'wf-a', 'success'), job(3002, 'wf-b', 'success')] },
      // The pipeline passed for wf-b alone; wf-a's runner failed.
      {
        id: 31,
        status: 'failed',
        jobs: [job(3101, 'wf-a', 'failed', 'runner_system_failure'), job(3102, 'wf-b', 'success')],
      },
      { id: 32, status: 'success', jobs: [job(3202, 'wf-b', 'success')] },
    ]);
    const uuid = await register(path);
    await check();
    const suites = await get(`/workflows/${uuid}/suites`);
    const instance = (suites.body as { items: { instances: { uuid: string }[] }[] }).items[0].instances[0]
      .uuid;
    const builds = await get(`/instances/${instance}/latest-builds`);
    expect(builds.status).toBe(200);
    const items = (builds.body as { items: Json[] }).items;
    // Pipeline 32 ran no wf-a: no build of this instance.
    expect(items.map((build) => [build.build_id, build.status])).toEqual([
      ['31', 'failed'],
      ['30', 'passed'],
    ]);
    expect(items[0].failure).toEqual({
      class: 'infrastructure',
      reason: 'the runner failed',
      evidence: ['failure_reason: runner_system_failure'],
    });

    const changes = await get(`/instances/${instance}/builds/31/changes`);
    expect(changes.status).toBe(200);
    const sha = (changes.body as { commits: { to: string } }).commits.to;
    expect(changes.body).toMatchObject({
      last_passing: { build_id: '30' },
      commits: { from: sha, compare_url: `${gitlab.url}/${path}/-/compare/${sha}...${sha}` },
      runner: { after: { image: 'blue-3.saas-linux-small-amd64', labels: ['saas-linux-small-amd64'] } },
      failed_jobs: [{ name: 'wf-a', conclusion: 'failed', url: `${gitlab.url}/${path}/-/jobs/3101` }],
      failed_steps: [],
    });
  });

  describe('webhooks in', () => {
    it('refuses a wrong or missing X-Gitlab-Token with 401, changing nothing', async () => {
      const path = 'science/guarded';
      gitlab.addProject(path);
      gitlab.push(path, { branch: 'main', files: crateFiles('guarded', path) });
      gitlab.setPipelines(path, [{ id: 31, status: 'success' }]);
      const uuid = await register(path);
      await check();
      gitlab.setPipelines(path, [
        { id: 31, status: 'success' },
        { id: 32, status: 'failed' },
      ]);
      gitlab.resetLog();
      for (const token of [null, 'wrong-secret', `${SECRET}x`]) {
        const response = await hook('Pipeline Hook', payload('pipeline.json', path), token);
        expect(response.status).toBe(401);
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      }
      expect(gitlab.requests).toHaveLength(0);
      const status = await get(`/workflows/${uuid}/status`);
      expect((status.body as { latest_builds: Json[] }).latest_builds[0]).toMatchObject({ build_id: '31' });
    });

    it('re-checks the instances of a project at once on a Pipeline Hook', async () => {
      const path = 'science/hooked';
      gitlab.addProject(path);
      gitlab.push(path, { branch: 'main', files: crateFiles('hooked', path) });
      gitlab.setPipelines(path, [{ id: 41, status: 'success' }]);
      const uuid = await register(path);
      await check();
      gitlab.setPipelines(path, [
        { id: 41, status: 'success' },
        { id: 42, status: 'failed' },
      ]);
      expect((await hook('Pipeline Hook', payload('pipeline.json', path))).status).toBe(204);
      await until('the failed pipeline is the latest build', async () => {
        const status = await get(`/workflows/${uuid}/status`);
        return (status.body as { latest_builds: Json[] }).latest_builds[0]?.build_id === '42';
      });
      expect((await hook('Note Hook', { object_kind: 'note' })).status).toBe(204);
      expect(
        (
          await t.http
            .post('/integrations/gitlab/webhooks')
            .set({ 'x-gitlab-token': SECRET, 'x-gitlab-event': 'Push Hook', 'content-type': 'text/plain' })
            .send('not json')
        ).status,
      ).toBe(400);
    });

    it('finds an instance given another project (PUT /instances/{uuid}) by that project', async () => {
      const from = 'science/moved-from';
      gitlab.addProject(from);
      gitlab.push(from, { branch: 'main', files: crateFiles('moved', from) });
      const uuid = await register(from);
      const suites = await get(`/workflows/${uuid}/suites`);
      const instance = (suites.body as { items: { instances: { uuid: string }[] }[] }).items[0].instances[0]
        .uuid;
      const webhooks = t.app.get(GitlabWebhooksService, { strict: false });
      const watching = (path: string) => webhooks.instancesWatching([`${gitlab.url}/${path}`]);
      const ids = await watching(from);
      expect(ids).toHaveLength(1);

      const moved = await t.http
        .put(`/instances/${instance}`)
        .set(as(alice))
        .send({ resource: 'science/Moved-To' });
      expect(moved.status).toBe(200);
      expect(await watching(from)).toEqual([]);
      // Keys are lower case: GitLab's paths are not case-sensitive.
      expect(await watching('science/moved-to')).toEqual(ids);
    });

    it('registers followed tags and branches from Tag Push, Release and Push Hooks', async () => {
      const path = 'science/followed';
      gitlab.addProject(path);
      gitlab.push(path, { branch: 'main', files: crateFiles('followed main', path) });
      const uuid = await register(path);
      const set = await t.http
        .put(`/workflows/${uuid}`)
        .set(as(alice))
        .send({ follow: { tags: ['v*'], branches: ['main'] } });
      expect(set.status).toBe(200);
      await poll(); // notes the refs there are

      const tagged = gitlab.push(path, { tag: 'v1.0', files: crateFiles('followed 1.0', path) });
      const tagPush = payload('tag_push.json', path, {
        ref: 'refs/tags/v1.0',
        after: tagged,
        checkout_sha: tagged,
      });
      expect((await hook('Tag Push Hook', tagPush)).status).toBe(204);
      await until('v1.0 registered', async () => (await versionNames(uuid)).includes('v1.0'));
      const read = await get(`/workflows/${uuid}/versions/v1.0`);
      expect(read.body.version.ro_crate.source).toEqual({ ref: 'v1.0', commit: tagged });

      gitlab.push(path, { tag: 'v2.0', files: crateFiles('followed 2.0', path) });
      expect(
        (await hook('Release Hook', payload('release.json', path, { tag: 'v2.0', action: 'create' }))).status,
      ).toBe(204);
      await until('v2.0 registered', async () => (await versionNames(uuid)).includes('v2.0'));

      const pushed = gitlab.push(path, { branch: 'main', files: crateFiles('followed main 2', path) });
      const push = payload('push.json', path, { ref: 'refs/heads/main', after: pushed });
      expect((await hook('Push Hook', push)).status).toBe(204);
      await until('main registered at the pushed commit', async () => {
        const main = await get(`/workflows/${uuid}/versions/main`);
        return main.status === 200 && (main.body.version.ro_crate.source as Json).commit === pushed;
      });
    });

    it('stops reading the pages of a listing that never ends', async () => {
      const path = 'science/endless';
      gitlab.addProject(path);
      gitlab.push(path, { branch: 'main', files: crateFiles('endless', path) });
      const uuid = await register(path);
      await t.http
        .put(`/workflows/${uuid}`)
        .set(as(alice))
        .send({ follow: { tags: [], branches: ['main'] } });
      // The follow just set wakes a poll of its own: it reads the ordinary listing.
      await t.app.get(FollowScheduler).settled();
      gitlab.endlessPages = true;
      gitlab.resetLog();
      try {
        await poll();
      } finally {
        gitlab.endlessPages = false;
      }
      const pages = gitlab.countMatching(/science%2Fendless\/repository\/branches$/);
      expect(pages).toBeGreaterThan(1);
      expect(pages).toBeLessThanOrEqual(50);
    });
  });

  describe('bad links and a failing GitLab', () => {
    it('refuses project links that climb or hide a slash, and says why when GitLab fails', async () => {
      for (const link of [
        `${gitlab.url}/science/../admin/x`,
        `${gitlab.url}/science%2Fsub/project`,
        `${gitlab.url}/science`,
      ]) {
        const response = await t.http
          .post('/users/current/workflows')
          .set(as(alice))
          .send({ roc_link: link, version: '1' });
        expect({ link, status: response.status }).toEqual({ link, status: 400 });
      }
      gitlab.addProject('science/down');
      gitlab.fail({ kind: 'status', status: 503 });
      const down = await t.http
        .post('/users/current/workflows')
        .set(as(alice))
        .send({ roc_link: `${gitlab.url}/science/down`, version: '1' });
      gitlab.heal();
      expect(down.status).toBe(400);
      expect(down.body.detail).toMatch(/GitLab answered 503/);
      gitlab.fail({ kind: 'hang' });
      const slow = await t.http
        .post('/users/current/workflows')
        .set(as(alice))
        .send({ roc_link: `${gitlab.url}/science/down`, version: '1' });
      gitlab.heal();
      expect(slow.status).toBe(400);
      expect(slow.body.detail).toMatch(/did not answer/);
    });
  });
});

const LINE_BYTES = 16;

/**
 * `bytes` of lines (`line 0000000000\n`), made as they are read: the same 64 KiB chunk again and
 * again (numbering 13 million lines one by one costs the test more than the service's read), the
 * last line numbered, so that the tail shows it came from the very end.
 */
function numberedLines(bytes: number): Readable {
  const chunk = Buffer.from('line filler----\n'.repeat(4096));
  const last = Buffer.from(`line ${String(bytes / LINE_BYTES - 1).padStart(10, '0')}\n`);
  let left = bytes - last.length;
  return new Readable({
    read() {
      if (left <= 0) {
        this.push(last);
        this.push(null);
        return;
      }
      const size = Math.min(left, chunk.length);
      left -= size;
      this.push(size === chunk.length ? chunk : chunk.subarray(0, size));
    },
  });
}
