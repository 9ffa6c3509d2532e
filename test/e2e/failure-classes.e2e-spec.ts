import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DEFAULT_REFRESH_INTERVAL_MS } from '../../src/test-monitoring/refresh-schedule.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { GithubFake } from '../fakes/github-fake.js';
import { JenkinsFake } from '../fakes/jenkins-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { TravisFake } from '../fakes/travis-fake.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateZip, type CrateInstanceSpec } from '../support/registry.js';

const TEST = 'https://w3id.org/ro/terms/test#';
const START = Date.UTC(2024, 0, 1, 10, 0, 0);
/** Real logs of other projects (test/fixtures/ci-logs/README.md). */
const log = (name: string): string =>
  readFileSync(new URL(`../fixtures/ci-logs/${name}`, import.meta.url), 'utf8');

interface BuildReply {
  build_id: string;
  status: string;
  instance: { uuid: string; service: { type: string } };
  failure?: { class: string; reason: string; evidence: string[] };
}

describe(`failure classes (API.md 16, ${testDatabase()})`, () => {
  let t: TestApp;
  let links: LinkServer;
  let github: GithubFake;
  let travis: TravisFake;
  let jenkins: JenkinsFake;
  let scheduler: RefreshScheduler;
  let alice: string;
  let clock = Date.now();

  async function tick(): Promise<void> {
    clock = Math.max(clock, Date.now()) + 2 * DEFAULT_REFRESH_INTERVAL_MS;
    await scheduler.tick(new Date(clock));
  }

  /** A workflow with an instance on each fake that has builds for `key`. */
  async function register(key: string, on: ('github' | 'travis' | 'jenkins')[]): Promise<string> {
    const instances: CrateInstanceSpec[] = [];
    if (on.includes('github')) {
      instances.push({
        id: `#${key}-gh`,
        name: `${key}-gh`,
        runsOn: `${TEST}GithubService`,
        url: github.url,
        resource: GithubFake.resource('octo', key, 'ci.yml'),
      });
    }
    if (on.includes('travis')) {
      instances.push({
        id: `#${key}-travis`,
        name: `${key}-travis`,
        runsOn: `${TEST}TravisService`,
        url: travis.url,
        resource: TravisFake.resource(`octo/${key}`),
      });
    }
    if (on.includes('jenkins')) {
      instances.push({
        id: `#${key}-jenkins`,
        name: `${key}-jenkins`,
        runsOn: `${TEST}JenkinsService`,
        url: `${jenkins.url}/`,
        resource: JenkinsFake.resource(['folder', key]),
      });
    }
    const path = `/${key}-${randomUUID()}.crate.zip`;
    links.route(path, {
      kind: 'bytes',
      body: crateZip({ name: `workflow ${key}`, marker: path, instances }),
    });
    const response = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${alice}`)
      .send({ roc_link: links.url(path), version: '1.0' });
    expect(response.status).toBe(201);
    return (response.body as { uuid: string }).uuid;
  }

  async function latestBuilds(uuid: string): Promise<Record<string, BuildReply>> {
    const response = await t.http.get(`/workflows/${uuid}/status`).set('Authorization', `Bearer ${alice}`);
    expect(response.status).toBe(200);
    const body = response.body as { aggregate_test_status: string; latest_builds: BuildReply[] };
    expect(body.aggregate_test_status).toBe('all_failing');
    return Object.fromEntries(body.latest_builds.map((build) => [build.instance.service.type, build]));
  }

  async function badgeMessage(uuid: string): Promise<string> {
    const response = await t.http
      .get(`/workflows/${uuid}/badge.json`)
      .set('Authorization', `Bearer ${alice}`);
    expect(response.status).toBe(200);
    return (response.body as { message: string }).message;
  }

  beforeAll(async () => {
    github = new GithubFake();
    travis = new TravisFake();
    jenkins = new JenkinsFake();
    await Promise.all([github.start(), travis.start(), jenkins.start()]);
    links = await LinkServer.start();
    // The fixtures' builds are dated 2024: staleness (its own e2e) is not what this file tests.
    t = await createTestApp({ UPSTREAM_TIMEOUT_SECONDS: '2', STALE_AFTER_DAYS: '3650' });
    scheduler = t.app.get(RefreshScheduler);
    alice = await t.userToken(['user'], `alice_${randomUUID().slice(0, 8)}`);
  });

  afterAll(async () => {
    await t?.close();
    await links?.close();
    await Promise.all([github?.stop(), travis?.stop(), jenkins?.stop()]);
  });

  it('classifies each failing build from the CI fields and the log, and keeps the aggregate', async () => {
    github.setRuns('octo', 'mixed', 'ci.yml', [
      { id: 401, conclusion: 'cancelled', startedAt: new Date(START) },
    ]);
    travis.setRepo('octo/mixed', [{ id: 501, state: 'failed', startedAt: new Date(START) }]);
    travis.setJobLog(TravisFake.jobIdOf(501), log('travis-kevinburke-failure.txt'));
    jenkins.setJob(['folder', 'mixed'], [{ number: 9, result: 'FAILURE', timestamp: START, duration: 1000 }]);
    jenkins.setConsoleText(['folder', 'mixed'], 9, log('jenkins-silas-consoleText.txt'));
    const uuid = await register('mixed', ['github', 'travis', 'jenkins']);
    await tick();

    const builds = await latestBuilds(uuid);
    expect(builds.github.failure).toEqual({
      class: 'infrastructure',
      reason: 'cancelled on the CI',
      evidence: ['conclusion: cancelled'],
    });
    expect(builds.travis.failure).toEqual({
      class: 'test',
      reason: 'failing tests reported',
      evidence: ['--- FAIL: TestMain (0.00s)', 'FAIL\tgithub.com/kevinburke/travis\t0.054s'],
    });
    expect(builds.jenkins.failure).toEqual({
      class: 'unknown',
      reason: 'no known pattern in the CI fields or the log',
      evidence: ['result: FAILURE'],
    });
    await expect(badgeMessage(uuid)).resolves.toBe('failing');

    const one = await t.http
      .get(`/instances/${builds.travis.instance.uuid}/builds/501`)
      .set('Authorization', `Bearer ${alice}`);
    expect((one.body as BuildReply).failure?.class).toBe('test');
  });

  it("says 'failing (infrastructure)' on badge and page when every failing build failed for infrastructure", async () => {
    github.setRuns('octo', 'infra', 'ci.yml', [
      { id: 402, conclusion: 'timed_out', startedAt: new Date(START) },
    ]);
    travis.setRepo('octo/infra', [{ id: 601, state: 'errored', startedAt: new Date(START) }]);
    const uuid = await register('infra', ['github', 'travis']);
    await tick();

    const builds = await latestBuilds(uuid);
    expect(builds.travis.failure).toEqual({
      class: 'infrastructure',
      reason: 'the build errored before its tests ran',
      evidence: ['state: errored'],
    });
    await expect(badgeMessage(uuid)).resolves.toBe('failing (infrastructure)');
    const page = await t.http.get(`/status/${uuid}`).set('Authorization', `Bearer ${alice}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('failing (infrastructure)');
    expect(page.text).toContain('infrastructure: the build errored before its tests ran');
  });
});
