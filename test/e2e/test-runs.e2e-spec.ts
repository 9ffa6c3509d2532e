import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import { CheckStateEntity } from '../../src/test-monitoring/entities/check-state.entity.js';
import { ServicePauseEntity } from '../../src/test-monitoring/entities/service-pause.entity.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { TestInstanceEntity } from '../../src/workflows/entities/registry.entities.js';
import { GithubFake } from '../fakes/github-fake.js';
import { JenkinsFake } from '../fakes/jenkins-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { TravisFake } from '../fakes/travis-fake.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateZip, ISO_UTC, TEST_TERMS } from '../support/registry.js';

const GITHUB_TOKEN = 'ghp_tests-that-run-token';
const TRAVIS_TOKEN = 'travis-tests-that-run-token';
const JENKINS = { username: 'bot', password: 'jenkins-api-token-1' };
const MAX_LOG_BYTES = 4096;

interface Registered {
  uuid: string;
  /** Instance uuids by service type. */
  github: string;
  travis: string;
  jenkins: string;
}

interface Problem {
  status: number;
  detail: string;
}

// API.md 11: builds started through the API, and the tails of build logs, on the three fakes.
describe(`tests that run: triggers and logs (${testDatabase()})`, () => {
  let t: TestApp;
  let links: LinkServer;
  let github: GithubFake;
  let travis: TravisFake;
  let jenkins: JenkinsFake;
  let dataSource: DataSource;
  let scheduler: RefreshScheduler;
  let dir: string;
  let alice: string;
  let bob: string;
  let admin: string;

  beforeAll(async () => {
    github = new GithubFake();
    travis = new TravisFake();
    jenkins = new JenkinsFake();
    jenkins.csrf = true;
    await Promise.all([github.start(), travis.start(), jenkins.start()]);
    links = await LinkServer.start();
    dir = mkdtempSync(join(tmpdir(), 'test-runs-'));
    const file = join(dir, 'services.yaml');
    writeFileSync(
      file,
      [
        'services:',
        `  - {type: github, url: "${github.url}", token: "${GITHUB_TOKEN}"}`,
        `  - {type: travis, url: "${travis.url}", token: "${TRAVIS_TOKEN}"}`,
        `  - {type: jenkins, url: "${jenkins.url}", username: ${JENKINS.username}, password: "${JENKINS.password}"}`,
        '',
      ].join('\n'),
    );
    t = await createTestApp({
      TESTING_SERVICES_FILE: file,
      UPSTREAM_TIMEOUT_SECONDS: '1',
      MAX_LOG_BYTES: String(MAX_LOG_BYTES),
    });
    dataSource = t.app.get(DataSource);
    scheduler = t.app.get(RefreshScheduler);
    admin = await t.login();
    alice = await t.userToken(['user'], `alice_${randomUUID().slice(0, 8)}`);
    bob = await t.userToken(['user'], `bob_${randomUUID().slice(0, 8)}`);
  });

  afterAll(async () => {
    await t?.close();
    await links?.close();
    await Promise.all([github?.stop(), travis?.stop(), jenkins?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  const as = (token: string | undefined) => ({
    post: (path: string) => {
      const request = t.http.post(path);
      return token ? request.set('Authorization', `Bearer ${token}`) : request;
    },
    get: (path: string) => {
      const request = t.http.get(path);
      return token ? request.set('Authorization', `Bearer ${token}`) : request;
    },
  });

  /**
   * A workflow (version `version`) with one instance on each fake, each on its own repository or
   * job `key`; the GitHub repository has `main` and a tag named like the version.
   */
  async function register(
    key: string,
    options: { version?: string; public?: boolean; githubUrl?: string } = {},
  ): Promise<Registered> {
    const version = options.version ?? '1.0';
    github.addRepository('octo', key);
    github.push('octo', key, { branch: 'main', files: { 'README.md': key } });
    github.setRuns('octo', key, 'ci.yml', []);
    travis.setRepo(`octo/${key}`, []);
    jenkins.setJob(['folder', key], []);
    const path = `/${key}-${randomUUID()}.crate.zip`;
    links.route(path, {
      kind: 'bytes',
      body: crateZip({
        name: `workflow ${key}`,
        marker: path,
        instances: [
          {
            id: '#gh',
            name: 'on github',
            runsOn: `${TEST_TERMS}GithubService`,
            url: options.githubUrl ?? github.url,
            resource: GithubFake.resource('octo', key, 'ci.yml'),
          },
          {
            id: '#travis',
            name: 'on travis',
            runsOn: `${TEST_TERMS}TravisService`,
            url: travis.url,
            resource: TravisFake.resource(`octo/${key}`),
          },
          {
            id: '#jenkins',
            name: 'on jenkins',
            runsOn: `${TEST_TERMS}JenkinsService`,
            url: jenkins.url,
            resource: JenkinsFake.resource(['folder', key]),
          },
        ],
      }),
    });
    const created = await as(alice)
      .post('/users/current/workflows')
      .send({ roc_link: links.url(path), version, public: options.public ?? false });
    expect(created.status).toBe(201);
    const uuid = (created.body as { uuid: string }).uuid;
    const suites = await as(alice).get(`/workflows/${uuid}/suites`).expect(200);
    const instances = (
      suites.body as { items: { instances: { uuid: string; service: { type: string } }[] }[] }
    ).items[0].instances;
    const of = (type: string): string =>
      instances.find((instance) => instance.service.type === type)?.uuid ?? '';
    return { uuid, github: of('github'), travis: of('travis'), jenkins: of('jenkins') };
  }

  /** Waits (bounded by the test's timeout) for the instance's builds to hold `buildId`. */
  async function untilBuild(instance: string, buildId: (ids: string[]) => boolean): Promise<string[]> {
    for (;;) {
      const reply = await as(alice).get(`/instances/${instance}/latest-builds`).expect(200);
      const ids = (reply.body as { items: { build_id: string }[] }).items.map((build) => build.build_id);
      if (buildId(ids)) {
        return ids;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Makes every instance due and checks them (after a tick already running, if one is). */
  async function checkNow(): Promise<void> {
    await dataSource
      .createQueryBuilder()
      .update(CheckStateEntity)
      .set({ nextCheckAt: new Date(0) })
      .where('1 = 1')
      .execute();
    while ((await scheduler.tick()) === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  describe('POST /instances/{uuid}/builds', () => {
    it("dispatches the GitHub workflow on the version's tag with the token, answers 202, and the next check finds the run", async () => {
      const wf = await register('dispatch', { version: 'v1' });
      github.push('octo', 'dispatch', { tag: 'v1', files: { 'README.md': 'v1' } });
      const before = github.dispatches.length;
      const response = await as(alice).post(`/instances/${wf.github}/builds`);
      expect(response.status).toBe(202);
      expect(response.body).toEqual({
        instance: wf.github,
        requested: expect.stringMatching(ISO_UTC),
        how: 'dispatch',
      });
      expect(github.dispatches.slice(before)).toEqual([
        { owner: 'octo', repo: 'dispatch', workflow: 'ci.yml', ref: 'v1' },
      ]);
      const sent = github.requests.find((request) => request.path.endsWith('/dispatches'));
      expect(sent?.headers.authorization).toBe(`Bearer ${GITHUB_TOKEN}`);
      expect(JSON.parse(sent?.body ?? '{}')).toEqual({ ref: 'v1' });
      // A check was scheduled at once: the new run shows without waiting for the next cycle.
      const ids = await untilBuild(wf.github, (found) => found.length === 1);
      expect(ids[0]).toMatch(/^\d+_1$/);

      // One trigger per instance per 10 minutes, counted in the database, for admins too.
      const again = await as(admin).post(`/instances/${wf.github}/builds`);
      expect(again.status).toBe(429);
      expect(again.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(Number(again.headers['retry-after'])).toBeGreaterThan(500);
      expect(Number(again.headers['retry-after'])).toBeLessThanOrEqual(600);
      // The start it counts from, as people read a time (Retry-After is the machine's).
      expect(again.body.detail).toMatch(
        /^A build of this test instance was started at \d{4}-\d\d-\d\d \d\d:\d\d UTC: at most one start/,
      );
      expect(github.dispatches).toHaveLength(before + 1);
    });

    it("dispatches on the repository's default branch when no ref is named like the version", async () => {
      const wf = await register('default-branch');
      await as(alice).post(`/instances/${wf.github}/builds`).expect(202);
      expect(github.dispatches.at(-1)).toMatchObject({ repo: 'default-branch', ref: 'main' });
    });

    it('re-runs the latest run of the version when the workflow has no workflow_dispatch trigger (422)', async () => {
      const wf = await register('rerun');
      github.setRuns('octo', 'rerun', 'ci.yml', [{ id: 4101, conclusion: 'failure', startedAt: new Date() }]);
      await checkNow();
      await untilBuild(wf.github, (ids) => ids.includes('4101_1'));
      github.setDispatchable('octo', 'rerun', 'ci.yml', false);
      const response = await as(alice).post(`/instances/${wf.github}/builds`);
      expect(response.status).toBe(202);
      expect(response.body).toMatchObject({ how: 'rerun' });
      expect(github.reruns.at(-1)).toEqual({ owner: 'octo', repo: 'rerun', runId: 4101 });
      await untilBuild(wf.github, (ids) => ids.includes('4101_2'));
    });

    it('asks Travis for a build request on the branch, API v3, with the token', async () => {
      const wf = await register('travis-request', { version: 'release' });
      travis.setRepo('octo/travis-request', [{ id: 7001, branch: 'release' }]);
      const response = await as(alice).post(`/instances/${wf.travis}/builds`);
      expect(response.status).toBe(202);
      expect(response.body).toMatchObject({ how: 'request' });
      expect(travis.triggers.at(-1)).toEqual({
        repository: 'octo/travis-request',
        body: { request: { branch: 'release' } },
        apiVersion: '3',
      });
      const sent = travis.requests.find((request) => request.path.endsWith('/requests'));
      expect(sent?.headers.authorization).toBe(`token ${TRAVIS_TOKEN}`);
      await untilBuild(wf.travis, (ids) => ids.length === 2);
    });

    it('builds the Jenkins job with the crumb Jenkins asks for (CSRF protection on)', async () => {
      const wf = await register('jenkins-build');
      const before = jenkins.triggers.length;
      const response = await as(alice).post(`/instances/${wf.jenkins}/builds`);
      expect(response.status).toBe(202);
      expect(response.body).toMatchObject({ how: 'build' });
      const [refused, accepted] = jenkins.triggers.slice(before);
      expect(refused).toMatchObject({ job: ['folder', 'jenkins-build'], crumb: undefined });
      expect(accepted).toMatchObject({
        crumb: expect.any(String),
        cookie: expect.stringMatching(/^JSESSIONID/),
      });
      const sent = jenkins.requests.filter((request) => request.path.endsWith('/build')).at(-1);
      expect(sent?.headers.authorization).toBe(
        `Basic ${Buffer.from(`${JENKINS.username}:${JENKINS.password}`).toString('base64')}`,
      );
      await untilBuild(wf.jenkins, (ids) => ids.includes('1'));
    });

    it('answers 409 naming the service URL and the setting when no credentials are configured, and sends nothing', async () => {
      const other = new GithubFake();
      await other.start();
      try {
        const wf = await register('no-credentials', { githubUrl: other.url });
        other.resetLog();
        const response = await as(alice).post(`/instances/${wf.github}/builds`);
        expect(response.status).toBe(409);
        expect((response.body as Problem).detail).toContain(other.url);
        expect((response.body as Problem).detail).toContain('TESTING_SERVICES_FILE');
        expect(other.requests).toHaveLength(0);
        // Nothing was started: the 10 minutes did not begin.
        expect((await as(alice).post(`/instances/${wf.github}/builds`)).status).toBe(409);
      } finally {
        await other.stop();
      }
    });

    it('answers an upstream refusal 502 with its status and message, a rate limit 503, a timeout 504; none counts', async () => {
      const wf = await register('refusals');
      const dispatches = GithubFake.resource('octo', 'refusals', 'ci.yml');
      github.fail(
        { kind: 'status', status: 403, body: { message: `Resource not accessible with ${GITHUB_TOKEN}` } },
        `${dispatches}/dispatches`,
      );
      const refused = await as(alice).post(`/instances/${wf.github}/builds`);
      expect(refused.status).toBe(502);
      expect((refused.body as Problem).detail).toMatch(
        /answered 403: Resource not accessible with \[redacted\]/,
      );
      expect(JSON.stringify(refused.body)).not.toContain(GITHUB_TOKEN);
      github.heal();

      travis.limitRate({ status: 429, retryAfterSeconds: 120 });
      const limited = await as(alice).post(`/instances/${wf.travis}/builds`);
      travis.heal();
      expect(limited.status).toBe(503);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(100);
      expect(limited.body.detail).toMatch(/is rate-limited until \d{4}-\d\d-\d\d \d\d:\d\d UTC: /);
      // Travis is paused for every copy, as a rate-limited check pauses it; the rest of this file needs it.
      const pauses = dataSource.getRepository(ServicePauseEntity);
      expect(await pauses.count()).toBe(1);
      await pauses.clear();

      jenkins.fail({ kind: 'hang' }, '/build');
      const slow = await as(alice).post(`/instances/${wf.jenkins}/builds`);
      jenkins.heal();
      expect(slow.status).toBe(504);

      // None of them started a build, so none holds the instance back.
      await as(alice).post(`/instances/${wf.github}/builds`).expect(202);
      await as(alice).post(`/instances/${wf.jenkins}/builds`).expect(202);
    });

    it('is for the owner and admins: 404 for an unknown or private instance of another, 403 on a public one, 401 without a token', async () => {
      const wf = await register('access');
      const open = await register('access-public', { public: true });
      expect((await as(bob).post(`/instances/${wf.github}/builds`)).status).toBe(404);
      expect((await as(bob).post(`/instances/${randomUUID()}/builds`)).status).toBe(404);
      expect((await as(bob).post(`/instances/${open.github}/builds`)).status).toBe(403);
      expect((await as(undefined).post(`/instances/${open.github}/builds`)).status).toBe(401);
      expect((await as(bob).post('/instances/not-a-uuid/builds')).status).toBe(400);
      expect((await as(admin).post(`/instances/${wf.travis}/builds`)).status).toBe(202);
    });
  });

  describe('GET /instances/{uuid}/builds/{build_id}/logs', () => {
    let wf: Registered;
    let open: Registered;
    const lines = (count: number, prefix: string): string =>
      Array.from({ length: count }, (_, line) => `${prefix} ${line}`).join('\n') + '\n';

    beforeAll(async () => {
      wf = await register('logs');
      open = await register('logs-public', { public: true });
      github.setRuns('octo', 'logs', 'ci.yml', [{ id: 5101, conclusion: 'failure', startedAt: new Date() }]);
      github.setRunLogs('octo', 'logs', 5101, [
        { name: 'build', text: 'building\n', steps: [{ name: 'Set up job', text: 'step log\n' }] },
        { name: 'test (ubuntu)', text: 'testing\nfailed\n' },
      ]);
      travis.setRepo('octo/logs', [{ id: 5201, state: 'failed' }]);
      travis.setJobLog(TravisFake.jobIdOf(5201), lines(1000, 'travis line'));
      jenkins.setJob(['folder', 'logs'], [{ number: 3 }, { number: 4 }, { number: 5 }, { number: 6 }]);
      jenkins.setConsoleText(['folder', 'logs'], 3, 'Started by user bot\nFinished: SUCCESS\n');
      jenkins.setJob(['folder', 'logs-public'], [{ number: 1 }]);
      jenkins.setConsoleText(['folder', 'logs-public'], 1, 'a public log\n');
      await checkNow();
      await untilBuild(wf.github, (ids) => ids.includes('5101_1'));
      await untilBuild(wf.travis, (ids) => ids.includes('5201'));
      await untilBuild(wf.jenkins, (ids) => ids.includes('6'));
    });

    it("serves a GitHub run's job logs in job order, as plain text", async () => {
      const response = await as(alice).get(`/instances/${wf.github}/builds/5101_1/logs`);
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(response.text).toBe('building\ntesting\nfailed\n');
      // The token went to GitHub's API, not to the storage its redirect pointed at.
      const archive = github.archiveRequests.find((request) => request.path.startsWith('/logs/'));
      expect(archive?.authorization).toBeUndefined();
    });

    it('serves the last MAX_LOG_BYTES of a long log, from the next whole line (Travis)', async () => {
      const response = await as(alice).get(`/instances/${wf.travis}/builds/5201/logs`);
      expect(response.status).toBe(200);
      const log = lines(1000, 'travis line');
      expect(response.text.length).toBeLessThanOrEqual(MAX_LOG_BYTES);
      expect(log.endsWith(response.text)).toBe(true);
      expect(response.text.startsWith('travis line ')).toBe(true);
      expect(response.text.length).toBeGreaterThan(MAX_LOG_BYTES - 1024);
    });

    it("serves Jenkins's console text; anybody may read a public workflow's", async () => {
      const response = await as(alice).get(`/instances/${wf.jenkins}/builds/3/logs`);
      expect(response.status).toBe(200);
      expect(response.text).toBe('Started by user bot\nFinished: SUCCESS\n');
      const anonymous = await as(undefined).get(`/instances/${open.jenkins}/builds/1/logs`);
      expect(anonymous.status).toBe(200);
      expect(anonymous.text).toBe('a public log\n');
    });

    it('answers 404 for an unknown build, a build of another instance, a private instance of another, a build without a log', async () => {
      for (const [token, path] of [
        [alice, `/instances/${wf.jenkins}/builds/999/logs`],
        [alice, `/instances/${wf.jenkins}/builds/5201/logs`],
        [alice, `/instances/${randomUUID()}/builds/3/logs`],
        [bob, `/instances/${wf.jenkins}/builds/3/logs`],
        [undefined, `/instances/${wf.jenkins}/builds/3/logs`],
        [alice, `/instances/${wf.jenkins}/builds/5/logs`],
      ] as const) {
        const response = await as(token).get(path);
        expect({ path, status: response.status }).toEqual({ path, status: 404 });
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      }
    });

    it('answers a log that is not text with a 404 that says so, never a 500', async () => {
      // A gzip file as application/gzip.
      jenkins.fail(
        { kind: 'status', status: 200, body: 'x', headers: { 'content-type': 'application/gzip' } },
        '/job/folder/job/logs/4/consoleText',
      );
      try {
        const response = await as(alice).get(`/instances/${wf.jenkins}/builds/4/logs`);
        expect(response.status).toBe(404);
        expect((response.body as Problem).detail).toMatch(/is not text \(application\/gzip\)/);
      } finally {
        jenkins.heal();
      }
    });

    it('answers 504 when the CI service does not answer in time or goes silent mid-log, 502 on its refusal', async () => {
      jenkins.fail({ kind: 'hang' }, '/consoleText');
      const hang = await as(alice).get(`/instances/${wf.jenkins}/builds/3/logs`);
      jenkins.heal();
      expect(hang.status).toBe(504);
      jenkins.setConsoleText(['folder', 'logs'], 5, () => {
        // One line, then nothing, without ending.
        const stream = new Readable({ read: () => undefined });
        stream.push('a first line\n');
        return stream;
      });
      const silent = await as(alice).get(`/instances/${wf.jenkins}/builds/5/logs`);
      expect(silent.status).toBe(504);
      expect((silent.body as Problem).detail).toMatch(/sent nothing for 1 s/);
      jenkins.fail(
        { kind: 'status', status: 500, body: { message: 'Jenkins is restarting' } },
        '/consoleText',
      );
      const refused = await as(alice).get(`/instances/${wf.jenkins}/builds/3/logs`);
      jenkins.heal();
      expect(refused.status).toBe(502);
      expect((refused.body as Problem).detail).toMatch(/answered 500: Jenkins is restarting/);
    });

    it('stops reading from the CI service once the client goes away', async () => {
      // A log that never ends, a line every 20 ms: only the client going away can stop it.
      jenkins.setConsoleText(['folder', 'logs'], 6, () => {
        let line = 0;
        let timer: NodeJS.Timeout | undefined;
        return new Readable({
          read() {
            timer = setTimeout(() => this.push(`line ${line++}\n`), 20);
          },
          destroy(error, callback) {
            clearTimeout(timer);
            callback(error);
          },
        });
      });
      const unfinished = jenkins.unfinished.length;
      const client = new AbortController();
      const request = fetch(`${t.baseUrl}/instances/${wf.jenkins}/builds/6/logs`, {
        headers: { authorization: `Bearer ${alice}` },
        signal: client.signal,
      }).catch((error: unknown) => error);
      while (!jenkins.requests.some((sent) => sent.path.endsWith('/6/consoleText'))) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      client.abort();
      await expect(request).resolves.toMatchObject({ name: 'AbortError' });
      await jenkins.untilUnfinished(unfinished + 1);
      expect(jenkins.unfinished.at(-1)).toBe('/job/folder/job/logs/6/consoleText');
    });
  });

  it('refuses with 409 an instance registered as never checked, and sends nothing', async () => {
    const path = `/unchecked-${randomUUID()}.crate.zip`;
    links.route(path, {
      kind: 'bytes',
      body: crateZip({
        name: 'unchecked',
        marker: path,
        instances: [
          {
            id: '#view',
            name: 'a view, not a job',
            runsOn: `${TEST_TERMS}JenkinsService`,
            url: jenkins.url,
            resource: 'view/all',
          },
        ],
      }),
    });
    const created = await as(alice)
      .post('/users/current/workflows')
      .send({ roc_link: links.url(path), version: '1' });
    expect(created.status).toBe(201);
    const suites = await as(alice)
      .get(`/workflows/${(created.body as { uuid: string }).uuid}/suites`)
      .expect(200);
    const instance = (suites.body as { items: { instances: { uuid: string }[] }[] }).items[0].instances[0]
      .uuid;
    const sent = jenkins.requests.length;
    const refused = await as(alice).post(`/instances/${instance}/builds`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ detail: expect.stringContaining('is never checked') });
    expect(jenkins.requests).toHaveLength(sent);
  });

  it('starts a build from the status page only from a page of this service (CSRF), then goes back to the page', async () => {
    const wf = await register('from-the-page');
    const action = `/status/${wf.uuid}/instances/${wf.jenkins}/builds`;
    const forged = await t.http
      .post(action)
      .set('Cookie', `session=${alice}`)
      .set('Origin', 'https://attacker.example');
    expect(forged.status).toBe(403);
    expect(forged.headers['content-type']).toMatch(/^text\/html/);
    const anonymous = await t.http.post(action).set('Origin', t.baseUrl);
    expect(anonymous.status).toBe(401);
    const started = await t.http.post(action).set('Cookie', `session=${alice}`).set('Origin', t.baseUrl);
    expect(started.status).toBe(303);
    expect(started.headers.location).toBe(`/status/${wf.uuid}`);
    // One build started, with the crumb (Jenkins refused the first try without it); none by the forged forms.
    const built = jenkins.triggers.filter(
      (sent) => sent.job.includes('from-the-page') && sent.crumb !== undefined,
    );
    expect(built).toHaveLength(1);

    // Refused, the form's page says so, when to ask again, and links back to the workflow's page.
    const again = await t.http.post(action).set('Cookie', `session=${alice}`).set('Origin', t.baseUrl);
    expect(again.status).toBe(429);
    expect(again.headers['content-type']).toMatch(/^text\/html/);
    const wait = Number(again.headers['retry-after']);
    expect(wait).toBeGreaterThan(0);
    expect(again.text).toContain('The tests were not started.');
    expect(again.text).toContain('at most one start per instance per 10 minutes');
    const at = /The next run can be asked for at <time datetime="([^"]+)">/.exec(again.text)?.[1];
    expect(Date.parse(at ?? '')).toBeGreaterThanOrEqual(Date.parse(again.headers.date) + wait * 1000 - 1000);
    expect(again.text).toContain(`<a href="/status/${wf.uuid}">Back to the workflow</a>`);

    // An upstream refusal (502) shows what the CI service answered, never the credential, and the way back.
    github.fail(
      { kind: 'status', status: 403, body: { message: `Resource not accessible with ${GITHUB_TOKEN}` } },
      `${GithubFake.resource('octo', 'from-the-page', 'ci.yml')}/dispatches`,
    );
    const refused = await t.http
      .post(`/status/${wf.uuid}/instances/${wf.github}/builds`)
      .set('Cookie', `session=${alice}`)
      .set('Origin', t.baseUrl);
    github.heal();
    expect(refused.status).toBe(502);
    expect(refused.text).toMatch(/answered 403: Resource not accessible with \[redacted\]/);
    expect(refused.text).not.toContain(GITHUB_TOKEN);
    expect(refused.text).toContain(`<a href="/status/${wf.uuid}">Back to the workflow</a>`);
  });

  it('keeps a trigger in the check state of the instance it started', async () => {
    const wf = await register('counted');
    await as(alice).post(`/instances/${wf.jenkins}/builds`).expect(202);
    const instance = await dataSource.getRepository(TestInstanceEntity).findOneByOrFail({ uuid: wf.jenkins });
    const state = await dataSource
      .getRepository(CheckStateEntity)
      .findOneByOrFail({ instanceId: instance.id });
    expect(state.lastTriggerAt).toEqual(expect.any(Date));
  });
});
