import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { DeliveryWorker } from '../../src/notifications/delivery.worker.js';
import { CheckStateEntity } from '../../src/test-monitoring/entities/check-state.entity.js';
import { ServicePauseEntity } from '../../src/test-monitoring/entities/service-pause.entity.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { TestInstanceEntity } from '../../src/workflows/entities/registry.entities.js';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { NotificationReceiver } from '../fakes/notification-receiver.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateZip, TEST_TERMS } from '../support/registry.js';

const DAY = 24 * 3600_000;
const GITHUB_TOKEN = 'ghp_periodic-reruns-token';

/**
 * Periodic re-runs (API.md 11), the "software collapse" LifeMonitor exists to catch: a workflow
 * whose last build passed a month ago is run again, fails, and says so. The refresh timer is off:
 * the scheduler's cycles are called with the time they run at, which moves forward by days.
 */
describe(`periodic re-runs (${testDatabase()})`, () => {
  let t: TestApp;
  let links: LinkServer;
  let github: GithubFake;
  let hook: NotificationReceiver;
  let dataSource: DataSource;
  let dir: string;
  let alice: string;
  let clock = Date.now();

  const auth = (): Record<string, string> => ({ Authorization: `Bearer ${alice}` });

  /** One refresh cycle, `advanceMs` later than the last one. */
  async function cycle(advanceMs = 0): Promise<void> {
    clock += advanceMs;
    await t.app.get(RefreshScheduler).tick(new Date(clock));
  }

  /** A public workflow with one GitHub instance on `octo/{key}`, whose one run passed two hours ago. */
  async function register(key: string): Promise<{ uuid: string; instanceId: number }> {
    github.addRepository('octo', key);
    github.push('octo', key, { branch: 'main', files: { 'README.md': key } });
    github.setRuns('octo', key, 'ci.yml', [
      { id: 100, conclusion: 'success', startedAt: new Date(clock - 2 * 3600_000) },
    ]);
    const path = `/${key}-${randomUUID()}.crate.zip`;
    links.route(path, {
      kind: 'bytes',
      body: crateZip({
        name: `collapse ${key}`,
        marker: path,
        instances: [
          {
            id: `#${key}`,
            name: key,
            runsOn: `${TEST_TERMS}GithubService`,
            url: github.url,
            resource: GithubFake.resource('octo', key, 'ci.yml'),
          },
        ],
      }),
    });
    const created = await t.http
      .post('/users/current/workflows')
      .set(auth())
      .send({ roc_link: links.url(path), version: '1.0', public: true });
    expect(created.status).toBe(201);
    const uuid = (created.body as { uuid: string }).uuid;
    const suites = await t.http.get(`/workflows/${uuid}/suites`).set(auth()).expect(200);
    const instanceUuid = (suites.body as { items: { instances: { uuid: string }[] }[] }).items[0].instances[0]
      .uuid;
    const instance = await dataSource
      .getRepository(TestInstanceEntity)
      .findOneByOrFail({ uuid: instanceUuid });
    return { uuid, instanceId: instance.id };
  }

  const dispatchesOf = (key: string) => github.dispatches.filter((dispatch) => dispatch.repo === key);

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
    links = await LinkServer.start();
    hook = await new NotificationReceiver().start();
    dir = mkdtempSync(join(tmpdir(), 'periodic-reruns-'));
    const file = join(dir, 'services.yaml');
    writeFileSync(file, `services:\n  - {type: github, url: "${github.url}", token: "${GITHUB_TOKEN}"}\n`);
    t = await createTestApp({
      TESTING_SERVICES_FILE: file,
      UPSTREAM_TIMEOUT_SECONDS: '1',
      RERUN_INTERVAL_DAYS: '60',
    });
    dataSource = t.app.get(DataSource);
    alice = await t.userToken();
    // The new runs start when the service's clock says, and GitHub's 30 days of re-runs count on it.
    github.triggeredRun = () => ({ status: 'completed', conclusion: 'failure', startedAt: new Date(clock) });
    github.now = () => new Date(clock);
  });

  afterAll(async () => {
    await t?.close();
    await links?.close();
    await Promise.all([github?.stop(), hook?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes rerun_interval_days through PUT /workflows/{uuid}: an integer 1-365 or null, anything else 400', async () => {
    const { uuid } = await register('setting');
    const read = await t.http.get(`/workflows/${uuid}`).set(auth()).expect(200);
    expect(read.body).toMatchObject({ rerun_interval_days: null });
    for (const bad of [0, 366, 1.5, '30', true, -1, {}]) {
      const refused = await t.http.put(`/workflows/${uuid}`).set(auth()).send({ rerun_interval_days: bad });
      expect([bad, refused.status]).toEqual([bad, 400]);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.stringify(refused.body)).toContain('rerun_interval_days');
    }
    const set = await t.http.put(`/workflows/${uuid}`).set(auth()).send({ rerun_interval_days: 30 });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ rerun_interval_days: 30 });
    // Absent: unchanged.
    await t.http.put(`/workflows/${uuid}`).set(auth()).send({ public: true }).expect(200);
    expect((await t.http.get(`/workflows/${uuid}`).expect(200)).body).toMatchObject({
      rerun_interval_days: 30,
    });
    const cleared = await t.http.put(`/workflows/${uuid}`).set(auth()).send({ rerun_interval_days: null });
    expect(cleared.body).toMatchObject({ rerun_interval_days: null });
    const other = await t.userToken(['user'], `bob_${randomUUID().slice(0, 8)}`);
    const forbidden = await t.http
      .put(`/workflows/${uuid}`)
      .set('Authorization', `Bearer ${other}`)
      .send({ rerun_interval_days: 7 });
    expect(forbidden.status).toBe(403);
  });

  it('the collapse story: a passing build, 31 days pass, the re-run fails, the webhook gets BUILD_FAILED, the badge turns red', async () => {
    const { uuid } = await register('collapse');
    await t.http.put(`/workflows/${uuid}`).set(auth()).send({ rerun_interval_days: 30 }).expect(200);
    const channel = await t.http
      .post('/users/current/channels')
      .set(auth())
      .send({ type: 'webhook', target: `${hook.url}/collapse`, events: ['BUILD_FAILED'] });
    expect(channel.status).toBe(201);
    // The submitter is subscribed to everything already; the subscriber here wants failures.
    await t.http.put(`/workflows/${uuid}/subscribe`).set(auth()).send(['BUILD_FAILED']).expect(204);

    // Registered instances are first checked within the refresh interval.
    await cycle(20 * 60_000);
    expect((await t.http.get(`/workflows/${uuid}/badge.json`).expect(200)).body).toMatchObject({
      message: 'passing',
      color: 'brightgreen',
    });
    // Within the interval: nothing is started.
    await cycle(29 * DAY);
    expect(dispatchesOf('collapse')).toEqual([]);

    await cycle(2 * DAY);
    // GitHub re-runs no run created over a month ago: a fresh run, started once, on the version's
    // ref (the repository's default branch: no ref is named 1.0).
    expect(github.reruns.filter((rerun) => rerun.repo === 'collapse')).toEqual([
      { owner: 'octo', repo: 'collapse', runId: 100 },
    ]);
    expect(dispatchesOf('collapse')).toEqual([
      { owner: 'octo', repo: 'collapse', workflow: 'ci.yml', ref: 'main' },
    ]);
    // The same cycle checked the instance: the new run failed.
    const badge = await t.http.get(`/workflows/${uuid}/badge.json`).expect(200);
    expect(badge.body).toMatchObject({ message: 'failing', color: 'red' });
    const svg = await t.http.get(`/workflows/${uuid}/badge.svg`).buffer(true).expect(200);
    expect(svg.body.toString('utf8')).toContain('fill="#e05d44"');

    await t.app.get(DeliveryWorker).tick(new Date(clock));
    const delivered = hook.accepted.filter((request) => request.path === '/collapse');
    expect(delivered).toHaveLength(1);
    expect(JSON.parse(delivered[0].body)).toMatchObject({ event: 'BUILD_FAILED' });

    // Once per due time: later cycles start nothing until the new run is 30 days old.
    await cycle(5 * 60_000);
    await cycle(10 * DAY);
    expect(dispatchesOf('collapse')).toHaveLength(1);
    await cycle(21 * DAY);
    expect(dispatchesOf('collapse')).toHaveLength(2);
  });

  it('re-runs the latest run itself while GitHub still re-runs it (within 30 days): its next attempt is the new build', async () => {
    const { uuid } = await register('same-run');
    await t.http.put(`/workflows/${uuid}`).set(auth()).send({ rerun_interval_days: 7 }).expect(200);
    await cycle(20 * 60_000);
    await cycle(8 * DAY);
    expect(github.reruns.filter((rerun) => rerun.repo === 'same-run')).toEqual([
      { owner: 'octo', repo: 'same-run', runId: 100 },
    ]);
    expect(dispatchesOf('same-run')).toEqual([]);
    // The same cycle checked it: the second attempt failed.
    const status = await t.http.get(`/workflows/${uuid}/status`).expect(200);
    expect(status.body).toMatchObject({
      aggregate_test_status: 'all_failing',
      latest_builds: [{ build_id: '100_2', status: 'failed' }],
    });
  });

  it('re-runs workflows without an interval of their own after RERUN_INTERVAL_DAYS, never while their service is paused', async () => {
    const { instanceId } = await register('default-interval');
    // Registered instances are first checked within the refresh interval.
    await cycle(20 * 60_000);
    await cycle(31 * DAY);
    expect(dispatchesOf('default-interval')).toEqual([]);
    const state = await dataSource.getRepository(CheckStateEntity).findOneByOrFail({ instanceId });
    await dataSource
      .getRepository(ServicePauseEntity)
      .upsert({ serviceId: state.serviceId, pausedUntil: new Date(clock + 31 * DAY) }, ['serviceId']);
    await cycle(30 * DAY);
    expect(dispatchesOf('default-interval')).toEqual([]);
    await cycle(2 * DAY);
    expect(dispatchesOf('default-interval')).toHaveLength(1);
    const after = await dataSource.getRepository(CheckStateEntity).findOneByOrFail({ instanceId });
    expect(after.lastTriggerAt?.getTime()).toBe(Math.floor(clock / 1000) * 1000);
  });
});
