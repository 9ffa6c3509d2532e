import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { DEFAULT_REFRESH_INTERVAL_MS } from '../../src/test-monitoring/refresh-schedule.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { BuildEntity } from '../../src/test-monitoring/entities/build.entity.js';
import { TestInstanceEntity } from '../../src/workflows/entities/registry.entities.js';
import { checkStateRow, type CheckStateRow } from '../support/monitoring-repositories.js';
import { GithubFake } from '../fakes/github-fake.js';
import { JenkinsFake } from '../fakes/jenkins-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { TravisFake } from '../fakes/travis-fake.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateZip, ISO_UTC, type CrateInstanceSpec } from '../support/registry.js';

const TEST = 'https://w3id.org/ro/terms/test#';
const I = DEFAULT_REFRESH_INTERVAL_MS;
const START = Date.UTC(2024, 0, 1, 10, 0, 0);
const epochSeconds = (iso: string): string => String(Math.floor(Date.parse(iso) / 1000));

interface InstanceReply {
  uuid: string;
  name: string;
  resource: string;
  service: { type: string; url: string };
  last_check: { at: string; ok: boolean; error: string | null } | null;
}

interface BuildReply {
  build_id: string;
  suite_uuid: string;
  instance: InstanceReply;
  status: string;
  timestamp: string;
  duration: number;
  links: { origin: string };
}

interface StatusReply {
  workflow: { uuid: string; name: string };
  version: { uuid: string; version: string };
  aggregate_test_status: string;
  latest_builds: BuildReply[];
  last_checked: string | null;
  stale: boolean;
  reason: string;
}

/** One workflow's instances on the three fakes, by service type, each with its own repository. */
interface Registered {
  uuid: string;
  key: string;
  github: string;
  travis: string;
  jenkins: string;
}

describe(`test monitoring (${testDatabase()})`, () => {
  let t: TestApp;
  let links: LinkServer;
  let github: GithubFake;
  let travis: TravisFake;
  let jenkins: JenkinsFake;
  let scheduler: RefreshScheduler;
  let dataSource: DataSource;
  let alice: string;
  /** The scheduler runs by hand here: each tick's clock moves on from the real time. */
  let clock = Date.now();

  async function tick(advanceMs = 2 * I): Promise<void> {
    clock = Math.max(clock, Date.now()) + advanceMs;
    await scheduler.tick(new Date(clock));
  }

  function instancesFor(key: string, githubUrl = github.url): CrateInstanceSpec[] {
    return [
      {
        id: `#${key}-gh`,
        name: `${key}-gh`,
        runsOn: `${TEST}GithubService`,
        url: githubUrl,
        resource: GithubFake.resource('octo', key, 'ci.yml'),
      },
      {
        id: `#${key}-travis`,
        name: `${key}-travis`,
        runsOn: `${TEST}TravisService`,
        url: travis.url,
        resource: TravisFake.resource(`octo/${key}`),
      },
      {
        id: `#${key}-jenkins`,
        name: `${key}-jenkins`,
        runsOn: `${TEST}JenkinsService`,
        url: `${jenkins.url}/`,
        resource: JenkinsFake.resource(['folder', key]),
      },
    ];
  }

  async function register(
    key: string,
    options: { token?: string; uuid?: string; version?: string; githubUrl?: string } = {},
  ): Promise<Registered> {
    const path = `/${key}-${randomUUID()}.crate.zip`;
    links.route(path, {
      kind: 'bytes',
      body: crateZip({
        name: `workflow ${key}`,
        marker: path,
        instances: instancesFor(key, options.githubUrl),
      }),
    });
    const response = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${options.token ?? alice}`)
      .send({ roc_link: links.url(path), version: options.version ?? '1.0', uuid: options.uuid });
    expect(response.status).toBe(201);
    const uuid = (response.body as { uuid: string }).uuid;
    return {
      uuid,
      key,
      github: GithubFake.runsPath('octo', key, 'ci.yml'),
      travis: TravisFake.buildsPath(`octo/${key}`),
      jenkins: JenkinsFake.apiPath(['folder', key]),
    };
  }

  async function status(uuid: string, query = ''): Promise<StatusReply> {
    const response = await t.http
      .get(`/workflows/${uuid}/status${query}`)
      .set('Authorization', `Bearer ${alice}`);
    expect(response.status).toBe(200);
    return response.body as StatusReply;
  }

  function byService(reply: StatusReply): Record<string, BuildReply> {
    return Object.fromEntries(reply.latest_builds.map((build) => [build.instance.service.type, build]));
  }

  /** The check state of the instance of that name. */
  async function instanceRow(name: string): Promise<CheckStateRow> {
    const instance = await dataSource.getRepository(TestInstanceEntity).findOneByOrFail({ name });
    return checkStateRow(dataSource, instance.id);
  }

  beforeAll(async () => {
    github = new GithubFake();
    travis = new TravisFake();
    jenkins = new JenkinsFake();
    await Promise.all([github.start(), travis.start(), jenkins.start()]);
    links = await LinkServer.start();
    // The fakes' runs are dated 2024 (fixed, so that replies can be compared whole): not too old here.
    t = await createTestApp({ UPSTREAM_TIMEOUT_SECONDS: '1', STALE_AFTER_DAYS: '3650' });
    scheduler = t.app.get(RefreshScheduler);
    dataSource = t.app.get(DataSource);
    alice = await t.userToken(['user'], `alice_${randomUUID().slice(0, 8)}`);
  });

  afterAll(async () => {
    await t?.close();
    await links?.close();
    await Promise.all([github?.stop(), travis?.stop(), jenkins?.stop()]);
  });

  describe('status after a refresh (API.md 2.6)', () => {
    let wf: Registered;

    beforeAll(async () => {
      github.setRuns('octo', 'alpha', 'ci.yml', [
        { id: 101, conclusion: 'success', startedAt: new Date(START), updatedAt: new Date(START + 312_000) },
      ]);
      travis.setRepo('octo/alpha', [
        { id: 201, state: 'passed', startedAt: new Date(START + 60_000), duration: 95 },
      ]);
      jenkins.setJob(
        ['folder', 'alpha'],
        [{ number: 7, result: 'SUCCESS', timestamp: START + 120_000, duration: 61_000 }],
      );
      wf = await register('alpha');
    });

    it('is not_available before the first check, and the scheduler does not run on its own when off', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect(github.count(wf.github) + travis.count(wf.travis) + jenkins.count(wf.jenkins)).toBe(0);
      const reply = await status(wf.uuid);
      expect(reply).toMatchObject({
        aggregate_test_status: 'not_available',
        latest_builds: [],
        last_checked: null,
        stale: false,
      });
    });

    it('is all_passing with the build ids, times, durations and links of each service', async () => {
      await tick();
      const reply = await status(wf.uuid);
      expect(reply.workflow).toEqual({ uuid: wf.uuid, name: 'workflow alpha' });
      expect(reply.version).toMatchObject({ version: '1.0' });
      expect(reply.aggregate_test_status).toBe('all_passing');
      expect(reply.stale).toBe(false);
      expect(reply.last_checked).toMatch(ISO_UTC);
      // MariaDB keeps DATETIME to the second.
      expect(Math.floor(Date.parse(reply.last_checked ?? '') / 1000)).toBe(Math.floor(clock / 1000));
      const builds = byService(reply);
      expect(builds.github).toMatchObject({
        build_id: '101_1',
        status: 'passed',
        timestamp: epochSeconds('2024-01-01T10:00:00Z'),
        duration: 312,
        links: { origin: 'https://github.com/octo/alpha/actions/runs/101' },
        instance: {
          name: 'alpha-gh',
          resource: 'repos/octo/alpha/actions/workflows/ci.yml',
          service: { type: 'github', url: github.url },
        },
      });
      expect(builds.travis).toMatchObject({
        build_id: '201',
        status: 'passed',
        timestamp: epochSeconds('2024-01-01T10:01:00Z'),
        duration: 95,
        links: { origin: `${travis.url}/octo/alpha/builds/201` },
      });
      expect(builds.jenkins).toMatchObject({
        build_id: '7',
        status: 'passed',
        timestamp: epochSeconds('2024-01-01T10:02:00Z'),
        duration: 61,
        links: { origin: `${jenkins.url}/job/folder/job/alpha/7/` },
      });
      const suites = await t.http.get(`/workflows/${wf.uuid}/suites`).set('Authorization', `Bearer ${alice}`);
      expect(builds.github.suite_uuid).toBe((suites.body as { items: { uuid: string }[] }).items[0].uuid);
    });

    it('answers the suite status, an instance’s latest builds and one build', async () => {
      const reply = await status(wf.uuid);
      const gh = byService(reply).github;
      const suite = await t.http
        .get(`/suites/${gh.suite_uuid}/status`)
        .set('Authorization', `Bearer ${alice}`);
      expect(suite.status).toBe(200);
      expect(suite.body).toMatchObject({ suite_uuid: gh.suite_uuid, status: 'all_passing' });
      expect((suite.body as { latest_builds: unknown[] }).latest_builds).toHaveLength(3);

      const latest = await t.http
        .get(`/instances/${gh.instance.uuid}/latest-builds?limit=5`)
        .set('Authorization', `Bearer ${alice}`);
      expect(latest.status).toBe(200);
      expect(latest.body).toEqual({ items: [gh] });

      const one = await t.http
        .get(`/instances/${gh.instance.uuid}/builds/101_1`)
        .set('Authorization', `Bearer ${alice}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(gh);
    });

    it('turns some_passing when one service fails, all_failing when all do', async () => {
      github.addRun('octo', 'alpha', 'ci.yml', {
        id: 102,
        conclusion: 'failure',
        startedAt: new Date(START + 3600_000),
      });
      await tick();
      expect((await status(wf.uuid)).aggregate_test_status).toBe('some_passing');

      travis.setRepo('octo/alpha', [
        { id: 201, state: 'passed', startedAt: new Date(START + 60_000), duration: 95 },
        { id: 202, state: 'errored', startedAt: new Date(START + 3600_000), duration: 10 },
      ]);
      jenkins.setJob(
        ['folder', 'alpha'],
        [
          { number: 7, result: 'SUCCESS', timestamp: START + 120_000 },
          { number: 8, result: 'ABORTED', timestamp: START + 3600_000 },
        ],
      );
      await tick();
      const reply = await status(wf.uuid);
      expect(reply.aggregate_test_status).toBe('all_failing');
      expect(
        Object.values(byService(reply))
          .map((b) => [b.build_id, b.status])
          .sort(),
      ).toEqual([
        ['102_1', 'failed'],
        ['202', 'error'],
        ['8', 'aborted'],
      ]);
    });

    it('shows a running build in latest_builds without counting it in the aggregate', async () => {
      github.addRun('octo', 'alpha', 'ci.yml', {
        id: 103,
        status: 'in_progress',
        startedAt: new Date(START + 7200_000),
      });
      travis.setRepo('octo/alpha', [
        { id: 202, state: 'errored', startedAt: new Date(START + 3600_000), duration: 10 },
        { id: 203, state: 'passed', startedAt: new Date(START + 7200_000), duration: 50 },
      ]);
      await tick();
      const reply = await status(wf.uuid);
      expect(byService(reply).github).toMatchObject({ build_id: '103_1', status: 'running', duration: 0 });
      // GitHub's latest finished build is still the failed 102: one passing, two failing.
      expect(reply.aggregate_test_status).toBe('some_passing');
      const latest = await t.http
        .get(`/instances/${byService(reply).github.instance.uuid}/latest-builds`)
        .set('Authorization', `Bearer ${alice}`);
      expect((latest.body as { items: BuildReply[] }).items.map((b) => b.build_id)).toEqual([
        '103_1',
        '102_1',
        '101_1',
      ]);
    });

    it('fills the status member of the workflow list from the same source', async () => {
      const list = await t.http.get('/users/current/workflows').set('Authorization', `Bearer ${alice}`);
      expect(list.status).toBe(200);
      const item = (
        list.body as {
          items: {
            uuid: string;
            status: { aggregate_test_status: string; latest_build: BuildReply | null };
          }[];
        }
      ).items.find((candidate) => candidate.uuid === wf.uuid);
      const reply = await status(wf.uuid);
      expect(item?.status.aggregate_test_status).toBe(reply.aggregate_test_status);
      // The most recent build over all instances: GitHub's 103 and Travis's 203 started together; both qualify.
      expect(['103_1', '203']).toContain(item?.status.latest_build?.build_id);
      expect(item?.status.latest_build).toEqual(
        reply.latest_builds.find((b) => b.build_id === item?.status.latest_build?.build_id),
      );
    });

    it('keeps the status of each version apart (version query)', async () => {
      travis.setRepo('octo/alpha2', []);
      jenkins.setJob(['folder', 'alpha2'], []);
      await register('alpha2', { uuid: wf.uuid, version: '2.0' });
      // No branch or tag is named 2.0: the version's runs are those created since its registration (API.md 7.2).
      github.setRuns('octo', 'alpha2', 'ci.yml', [
        { id: 300, conclusion: 'success', createdAt: new Date(Date.UTC(2024, 0, 1)) },
        { id: 301, conclusion: 'failure', createdAt: new Date(clock + 1000) },
      ]);
      await tick();
      expect(await status(wf.uuid)).toMatchObject({
        version: { version: '2.0' },
        aggregate_test_status: 'all_failing',
      });
      expect(await status(wf.uuid, '?version=1.0')).toMatchObject({
        version: { version: '1.0' },
        aggregate_test_status: 'some_passing',
      });
    });

    it('hides the status of a workflow from other users (404) but not from admins, and checks parameters', async () => {
      const bob = await t.userToken();
      const admin = await t.login();
      const gh = byService(await status(wf.uuid, '?version=1.0')).github;
      const routes = [
        `/workflows/${wf.uuid}/status`,
        `/suites/${gh.suite_uuid}/status`,
        `/instances/${gh.instance.uuid}/latest-builds`,
        `/instances/${gh.instance.uuid}/builds/101_1`,
      ];
      for (const route of routes) {
        const hidden = await t.http.get(route).set('Authorization', `Bearer ${bob}`);
        expect(hidden.status).toBe(404);
        expect(hidden.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect((await t.http.get(route).set('Authorization', `Bearer ${admin}`)).status).toBe(200);
        // Anonymous callers see public workflows only (API.md 5.1): this one is private.
        expect((await t.http.get(route)).status).toBe(404);
      }
      const base = `/instances/${gh.instance.uuid}`;
      for (const [route, code] of [
        [`${base}/latest-builds?limit=0`, 400],
        [`${base}/latest-builds?limit=101`, 400],
        [`${base}/latest-builds?limit=abc`, 400],
        [`${base}/latest-builds?limit=100`, 200],
        [`${base}/builds/999`, 404],
        ['/instances/not-a-uuid/latest-builds', 400],
        [`/workflows/${wf.uuid}/status?version=9.9`, 404],
        [`/workflows/${randomUUID()}/status`, 404],
      ] as const) {
        const response = await t.http.get(route).set('Authorization', `Bearer ${alice}`);
        expect([route, response.status]).toEqual([route, code]);
      }
    });
  });

  it('is not_available for services with no builds yet, and the check counts as successful', async () => {
    github.setRuns('octo', 'empty', 'ci.yml', []);
    travis.setRepo('octo/empty', []);
    jenkins.setJob(['folder', 'empty'], []);
    const wf = await register('empty');
    await tick();
    const reply = await status(wf.uuid);
    expect(reply).toMatchObject({ aggregate_test_status: 'not_available', latest_builds: [], stale: false });
    expect(reply.last_checked).toMatch(ISO_UTC);
  });

  it('sends If-None-Match on the second poll of an unchanged workflow, gets a 304 and changes no row', async () => {
    // A fake of its own, so that its 304 count is this workflow's alone.
    const steady = new GithubFake();
    await steady.start();
    try {
      steady.setRuns('octo', 'steady', 'ci.yml', [{ id: 501 }, { id: 502, conclusion: 'failure' }]);
      travis.setRepo('octo/steady', [{ id: 601 }]);
      jenkins.setJob(['folder', 'steady'], [{ number: 1 }]);
      await register('steady', { githubUrl: steady.url });
      await tick();
      const before = await instanceRow('steady-gh');
      expect(before.etag).toMatch(/^W\/"/);
      const buildsOf = (): Promise<BuildEntity[]> =>
        dataSource
          .getRepository(BuildEntity)
          .find({ where: { instanceId: before.id }, order: { id: 'ASC' } });
      const builds = await buildsOf();
      expect(builds.map((b) => b.buildId).sort()).toEqual(['501_1', '502_1']);
      // Counted on the runs: a changed listing also reads the workflow's state (6.2), and the first
      // check asks whether the version names a branch or tag (API.md 7.2): it does not.
      const runs = GithubFake.runsPath('octo', 'steady', 'ci.yml');
      const runReads = () => steady.requests.filter((request) => request.path === runs);
      const first = runReads().length;
      expect(steady.notModifiedCount).toBe(0);

      await tick();
      expect(runReads()).toHaveLength(first + 1);
      expect(runReads()[first].headers['if-none-match']).toBe(before.etag);
      expect(steady.notModifiedCount).toBe(1);
      await expect(buildsOf()).resolves.toEqual(builds);
      const after = await instanceRow('steady-gh');
      expect(after).toMatchObject({ etag: before.etag, failureCount: 0, lastCheckFailed: false });
      expect(after.lastCheckedAt?.getTime()).toBeGreaterThan(before.lastCheckedAt?.getTime() ?? 0);
    } finally {
      await steady.stop();
    }
  });

  it('says in its reason that the check failed and why when there is no finished build (the CI unreachable)', async () => {
    const down = new GithubFake();
    await down.start();
    const unreachable = down.url;
    await down.stop();
    const path = `/down-${randomUUID()}.crate.zip`;
    links.route(path, {
      kind: 'bytes',
      body: crateZip({
        name: 'workflow down',
        marker: path,
        instances: [instancesFor('down', unreachable)[0]],
      }),
    });
    const registered = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${alice}`)
      .send({ roc_link: links.url(path), version: '1.0' })
      .expect(201);
    const uuid = (registered.body as { uuid: string }).uuid;
    expect(await status(uuid)).toMatchObject({ reason: 'No build of this version found yet', stale: false });

    await tick();
    const reply = await status(uuid);
    const error = (await instanceRow('down-gh')).lastError;
    expect(error).toMatch(/127\.0\.0\.1:\d+/);
    expect(reply).toMatchObject({
      aggregate_test_status: 'not_available',
      latest_builds: [],
      last_checked: null,
      stale: true,
      reason: `The last check of 'down-gh' failed: ${error}`,
    });
  });

  it('marks the status stale on a 500 or a timeout, keeps the builds, backs off, and stays healthy', async () => {
    github.setRuns('octo', 'flaky', 'ci.yml', [{ id: 701 }]);
    travis.setRepo('octo/flaky', [{ id: 801 }]);
    jenkins.setJob(['folder', 'flaky'], [{ number: 3 }]);
    const wf = await register('flaky');
    await tick();
    expect(await status(wf.uuid)).toMatchObject({ aggregate_test_status: 'all_passing', stale: false });

    github.fail({ kind: 'status', status: 500 }, wf.github);
    travis.fail({ kind: 'hang' }, wf.travis);
    try {
      await tick();
      const reply = await status(wf.uuid);
      expect(reply).toMatchObject({ aggregate_test_status: 'all_passing', stale: true });
      expect(reply.latest_builds).toHaveLength(3);
      for (const [name, error] of [
        ['flaky-gh', /answered 500/],
        ['flaky-travis', /did not answer within 1 s|was cancelled/],
      ] as const) {
        const row = await instanceRow(name);
        expect(row).toMatchObject({ lastCheckFailed: true, failureCount: 1 });
        expect(row.lastError).toMatch(error);
        // Back-off: at least one and a half intervals, where a successful check waits at most two.
        expect(row.nextCheckAt.getTime() - clock).toBeGreaterThanOrEqual(1.5 * I - 1000);
      }
      const jenkinsRow = await instanceRow('flaky-jenkins');
      expect(jenkinsRow.lastCheckFailed).toBe(false);

      // Checked again only once the back-off is over.
      const ghRequests = github.count(wf.github);
      await tick(I);
      expect(github.count(wf.github)).toBe(ghRequests);

      expect((await t.http.get('/health/live')).status).toBe(200);
      expect((await t.http.get('/health/ready')).status).toBe(200);
    } finally {
      github.heal();
      travis.heal();
    }
    await tick(6 * I);
    expect(await status(wf.uuid)).toMatchObject({ aggregate_test_status: 'all_passing', stale: false });
  });

  it('says why a check failed (API.md 11 last_check): in every instance reply and per build, never a credential', async () => {
    travis.setRepo('octo/why', [{ id: 1101 }]);
    jenkins.setJob(['folder', 'why'], [{ number: 4 }]);
    const wf = await register('why');
    const auth = { Authorization: `Bearer ${alice}` };
    const suites = async (): Promise<{ uuid: string; instances: InstanceReply[] }[]> =>
      (await t.http.get(`/workflows/${wf.uuid}/suites`).set(auth).expect(200)).body.items as {
        uuid: string;
        instances: InstanceReply[];
      }[];
    const [before] = await suites();
    expect(before.instances.map((instance) => instance.last_check)).toEqual([null, null, null]);

    // The GitHub workflow does not exist; Travis refuses, in its own words.
    travis.fail(
      {
        kind: 'status',
        status: 403,
        body: {
          '@type': 'error',
          error_type: 'insufficient_access',
          error_message: 'insufficient access',
        },
      },
      wf.travis,
    );
    try {
      await tick();
    } finally {
      travis.heal();
    }
    const checkedAt = new Date(Math.floor(clock / 1000) * 1000).toISOString();
    const [suite] = await suites();
    const byName = Object.fromEntries(suite.instances.map((instance) => [instance.name, instance]));
    expect(byName['why-gh'].last_check).toEqual({
      at: expect.stringMatching(ISO_UTC),
      ok: false,
      error: 'workflow octo/why/ci.yml not found (404)',
    });
    expect(byName['why-travis'].last_check).toEqual({
      at: expect.stringMatching(ISO_UTC),
      ok: false,
      error: expect.stringContaining('answered 403: insufficient access'),
    });
    expect(byName['why-jenkins'].last_check).toEqual({
      at: expect.stringMatching(ISO_UTC),
      ok: true,
      error: null,
    });
    // MariaDB keeps DATETIME to the second.
    expect(
      new Date(Math.floor(Date.parse(byName['why-gh'].last_check?.at ?? '') / 1000) * 1000).toISOString(),
    ).toBe(checkedAt);

    const instance = await t.http.get(`/instances/${byName['why-gh'].uuid}`).set(auth).expect(200);
    expect((instance.body as InstanceReply).last_check).toEqual(byName['why-gh'].last_check);
    const one = await t.http.get(`/suites/${suite.uuid}`).set(auth).expect(200);
    expect((one.body as { instances: InstanceReply[] }).instances).toEqual(suite.instances);
    const listed = await t.http.get(`/suites/${suite.uuid}/instances`).set(auth).expect(200);
    expect((listed.body as { items: InstanceReply[] }).items).toEqual(suite.instances);
    const reply = await status(wf.uuid);
    expect(reply.stale).toBe(true);
    expect(byService(reply).jenkins.instance).toEqual(byName['why-jenkins']);
    const suiteStatus = await t.http.get(`/suites/${suite.uuid}/status`).set(auth).expect(200);
    expect((suiteStatus.body as { latest_builds: BuildReply[] }).latest_builds[0].instance).toEqual(
      byName['why-jenkins'],
    );
    const builds = await t.http
      .get(`/instances/${byName['why-jenkins'].uuid}/latest-builds`)
      .set(auth)
      .expect(200);
    expect((builds.body as { items: BuildReply[] }).items[0].instance).toEqual(byName['why-jenkins']);

    // A later successful check clears the error.
    github.setRuns('octo', 'why', 'ci.yml', [{ id: 1102 }]);
    await tick(6 * I);
    const again = await t.http.get(`/instances/${byName['why-gh'].uuid}`).set(auth).expect(200);
    expect((again.body as InstanceReply).last_check).toMatchObject({ ok: true, error: null });
  });

  it('pauses a rate-limited GitHub until its reset: no request before it, the other services still checked', async () => {
    const limited = new GithubFake();
    await limited.start();
    try {
      limited.setRuns('octo', 'limited', 'ci.yml', [{ id: 901 }]);
      travis.setRepo('octo/limited', [{ id: 902 }]);
      jenkins.setJob(['folder', 'limited'], [{ number: 9 }]);
      const wf = await register('limited', { githubUrl: limited.url });
      clock = Math.max(clock, Date.now());
      const reset = new Date(clock + 4 * I + 30_000);
      limited.limitRate({ resetAt: reset });

      const runs = GithubFake.runsPath('octo', 'limited', 'ci.yml');
      await tick();
      expect(limited.totalRequests).toBe(1);
      const travisChecks = travis.count(wf.travis);
      expect(travisChecks).toBeGreaterThan(0);
      expect(jenkins.count(wf.jenkins)).toBe(1);
      const reply = await status(wf.uuid);
      expect(reply.stale).toBe(true);
      expect(byService(reply).travis).toMatchObject({ build_id: '902' });
      const row = await instanceRow('limited-gh');
      expect(row).toMatchObject({ lastCheckFailed: false, failureCount: 0 });

      await tick(); // still before the reset
      expect(limited.totalRequests).toBe(1);
      expect(limited.count(runs)).toBe(1);
      const metrics = (await t.http.get('/metrics')).text;
      expect(metrics).toMatch(/^testing_services_paused [1-9]/m);
      expect(metrics).toMatch(
        /^testing_service_checks_total\{service="github",result="rate_limited"\} [1-9]/m,
      );
      expect(travis.count(wf.travis)).toBeGreaterThan(travisChecks);
      expect(jenkins.count(wf.jenkins)).toBe(2);

      limited.heal();
      clock = reset.getTime();
      await tick(1000);
      // Checked again after the reset (with the lookup of the version's ref, API.md 7.2, on this first full check).
      expect(limited.count(runs)).toBeGreaterThan(1);
      expect(byService(await status(wf.uuid)).github).toMatchObject({ build_id: '901_1', status: 'passed' });
    } finally {
      await limited.stop();
    }
  });

  describe('builds per version (API.md 7.2)', () => {
    const ids = (reply: StatusReply): string[] => reply.latest_builds.map((build) => build.build_id).sort();

    it('shows two versions on two tags their own runs, and so different statuses; the list follows', async () => {
      github.addRepository('octo', 'tagged');
      github.push('octo', 'tagged', { tag: '1.0', files: {} });
      github.push('octo', 'tagged', { tag: '2.0', files: {} });
      github.setRuns('octo', 'tagged', 'ci.yml', [
        { id: 1201, branch: '1.0', conclusion: 'success' },
        { id: 1202, branch: '2.0', conclusion: 'failure' },
        { id: 1203, branch: 'main', conclusion: 'success' },
      ]);
      travis.setRepo('octo/tagged', [
        { id: 1301, branch: '1.0', state: 'passed' },
        { id: 1302, branch: '2.0', state: 'failed' },
        { id: 1303, branch: 'main', state: 'passed' },
      ]);
      jenkins.setJob(['folder', 'tagged'], []);
      const wf = await register('tagged', { version: '1.0' });
      await register('tagged', { uuid: wf.uuid, version: '2.0' });
      await tick();

      const one = await status(wf.uuid, '?version=1.0');
      expect(one.aggregate_test_status).toBe('all_passing');
      expect(ids(one)).toEqual(['1201_1', '1301']);
      const two = await status(wf.uuid);
      expect(two).toMatchObject({ version: { version: '2.0' }, aggregate_test_status: 'all_failing' });
      expect(ids(two)).toEqual(['1202_1', '1302']);
      const list = await t.http.get('/users/current/workflows').set('Authorization', `Bearer ${alice}`);
      const item = (
        list.body as {
          items: { uuid: string; status: { aggregate_test_status: string; latest_build: BuildReply } }[];
        }
      ).items.find((candidate) => candidate.uuid === wf.uuid);
      expect(item?.status.aggregate_test_status).toBe('all_failing');
      expect(['1202_1', '1302']).toContain(item?.status.latest_build.build_id);
    });

    it('shows a version registered without a ref only the runs of its own window', async () => {
      github.setRuns('octo', 'windowed', 'ci.yml', [
        { id: 1401, conclusion: 'success', createdAt: new Date(Date.UTC(2024, 0, 1)) },
      ]);
      travis.setRepo('octo/windowed', []);
      jenkins.setJob(['folder', 'windowed'], []);
      const wf = await register('windowed', { version: 'a' });
      await register('windowed', { uuid: wf.uuid, version: 'b' });
      // Created after b's registration: b's, and not a's (whose window closed when b came).
      github.addRun('octo', 'windowed', 'ci.yml', {
        id: 1402,
        conclusion: 'failure',
        createdAt: new Date(Date.now() + 3600_000),
      });
      await tick();

      const a = await status(wf.uuid, '?version=a');
      expect(a.aggregate_test_status).toBe('all_passing');
      expect(ids(a)).toEqual(['1401_1']);
      const b = await status(wf.uuid, '?version=b');
      expect(b.aggregate_test_status).toBe('all_failing');
      expect(ids(b)).toEqual(['1402_1']);
    });
  });

  it('documents the status operations in the OpenAPI document', async () => {
    const document = (await t.http.get('/docs-json')).body as {
      paths: Record<
        string,
        Record<
          string,
          {
            operationId: string;
            parameters?: { name: string; in: string }[];
            responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
            security?: unknown[];
          }
        >
      >;
    };
    const expected: [string, string, string][] = [
      ['/workflows/{wf_uuid}/status', 'workflows-get-status', 'WorkflowStatusDto'],
      ['/suites/{suite_uuid}/status', 'suites-get-status', 'SuiteStatusDto'],
      ['/instances/{instance_uuid}/latest-builds', 'instances-get-builds', 'BuildListDto'],
      ['/instances/{instance_uuid}/builds/{build_id}', 'instances-builds-get-by-id', 'BuildDto'],
    ];
    for (const [path, operationId, schema] of expected) {
      const operation = document.paths[path]?.get;
      expect({ path, operationId: operation?.operationId }).toEqual({ path, operationId });
      // The token is optional: public workflows are readable without one (API.md 5.1).
      expect(operation.security).toEqual([{ bearer: [] }, { apiKey: [] }, { apiKeyHeader: [] }, {}]);
      expect(operation.responses['200'].content?.['application/json'].schema?.$ref).toBe(
        `#/components/schemas/${schema}`,
      );
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['400', '401', '404']));
    }
    const params = (path: string): string[] =>
      (document.paths[path].get.parameters ?? []).map((p) => `${p.in}:${p.name}`);
    expect(params('/workflows/{wf_uuid}/status')).toEqual(
      expect.arrayContaining(['path:wf_uuid', 'query:version']),
    );
    expect(params('/instances/{instance_uuid}/latest-builds')).toEqual(
      expect.arrayContaining(['path:instance_uuid', 'query:limit']),
    );
  });

  it('checks a new instance at once when the scheduler is on', async () => {
    const on = await createTestApp({
      REFRESH_INTERVAL_SECONDS: '300',
      UPSTREAM_TIMEOUT_SECONDS: '1',
      STALE_AFTER_DAYS: '3650',
    });
    try {
      github.setRuns('octo', 'eager', 'ci.yml', [{ id: 1001 }]);
      travis.setRepo('octo/eager', [{ id: 1002 }]);
      jenkins.setJob(['folder', 'eager'], [{ number: 1 }]);
      const token = await on.userToken();
      const path = `/eager-${randomUUID()}.crate.zip`;
      links.route(path, {
        kind: 'bytes',
        body: crateZip({ name: 'eager', marker: path, instances: instancesFor('eager') }),
      });
      const created = await on.http
        .post('/users/current/workflows')
        .set('Authorization', `Bearer ${token}`)
        .send({ roc_link: links.url(path), version: '1' });
      expect(created.status).toBe(201);
      const uuid = (created.body as { uuid: string }).uuid;
      let reply: StatusReply | undefined;
      for (let attempt = 0; attempt < 50; attempt++) {
        reply = (await on.http.get(`/workflows/${uuid}/status`).set('Authorization', `Bearer ${token}`))
          .body as StatusReply;
        if (reply.latest_builds.length === 3) {
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(reply).toMatchObject({ aggregate_test_status: 'all_passing', stale: false });
    } finally {
      await on.close();
    }
  });

  it('moves the refresh counters of /metrics: cycles, checks by service and result, upstream requests', async () => {
    const metric = async (name: string, labels = ''): Promise<number> => {
      const text = (await t.http.get('/metrics')).text;
      const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}${labels} `));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const cycles = await metric('refresh_cycles_total');
    const githubOk = await metric('testing_service_checks_total', '{service="github",result="200"}');
    const requests = await metric('testing_service_http_requests_total', '{service="github"}');
    const checked = await metric('refresh_instances_checked_total');
    const registered = await register('metered');
    github.setRuns('octo', registered.key, 'ci.yml', [{ id: 4242 }]);
    await tick();
    expect(await metric('refresh_cycles_total')).toBeGreaterThan(cycles);
    expect(await metric('testing_service_checks_total', '{service="github",result="200"}')).toBeGreaterThan(
      githubOk,
    );
    expect(await metric('testing_service_http_requests_total', '{service="github"}')).toBeGreaterThan(
      requests,
    );
    expect(await metric('refresh_instances_checked_total')).toBeGreaterThanOrEqual(checked + 3);
    // The If-None-Match test above answered 304s; they are counted by their own label.
    expect(await metric('testing_service_checks_total', '{service="github",result="304"}')).toBeGreaterThan(
      0,
    );
  });
});
