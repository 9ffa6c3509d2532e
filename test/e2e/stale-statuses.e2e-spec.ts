import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { CheckStateRepository } from '../../src/test-monitoring/check-state.repository.js';
import { ServicePauseEntity } from '../../src/test-monitoring/entities/service-pause.entity.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateZip, TEST_TERMS } from '../support/registry.js';

const DAY = 24 * 3600_000;

interface StatusReply {
  aggregate_test_status: string;
  stale: boolean;
  stale_reasons: string[];
}

/**
 * Still true? (API.md 16): a status whose newest build is older than STALE_AFTER_DAYS, or whose
 * GitHub workflow the CI switched off, is stale, says why in the reply and on the page, and its
 * badge says so. Status reads use the real clock, so the runs are dated from it.
 */
describe(`stale statuses (${testDatabase()})`, () => {
  let t: TestApp;
  let github: GithubFake;
  let links: LinkServer;
  let auth: Record<string, string>;
  let clock = Date.now();

  async function tick(): Promise<void> {
    clock = Math.max(clock, Date.now()) + 20 * 60_000;
    await t.app.get(RefreshScheduler).tick(new Date(clock));
  }

  /** A public workflow whose one GitHub instance (`key`) has one passing run, started `daysAgo` days ago. */
  async function register(key: string, daysAgo: number): Promise<string> {
    github.setRuns('octo', key, 'ci.yml', [
      { id: 100, conclusion: 'success', startedAt: new Date(Date.now() - daysAgo * DAY) },
    ]);
    const path = `/${key}-${randomUUID()}.crate.zip`;
    links.route(path, {
      kind: 'bytes',
      body: crateZip({
        name: `stale ${key}`,
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
      .set(auth)
      .send({ roc_link: links.url(path), version: '1.0', public: true });
    expect(created.status).toBe(201);
    return (created.body as { uuid: string }).uuid;
  }

  const status = async (uuid: string): Promise<StatusReply> =>
    (await t.http.get(`/workflows/${uuid}/status`).expect(200)).body as StatusReply;
  const badge = async (uuid: string): Promise<string> =>
    ((await t.http.get(`/workflows/${uuid}/badge.json`).expect(200)).body as { message: string }).message;
  const page = async (uuid: string): Promise<string> =>
    (await t.http.get(`/status/${uuid}`).expect(200)).text;

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
    links = await LinkServer.start();
    t = await createTestApp({ UPSTREAM_TIMEOUT_SECONDS: '1' });
    auth = { Authorization: `Bearer ${await t.userToken()}` };
  });

  afterAll(async () => {
    await t?.close();
    await links?.close();
    await github?.stop();
  });

  it('holds while the newest build is recent, and is stale (no_recent_build) once it is older than STALE_AFTER_DAYS', async () => {
    const fresh = await register('fresh', 29);
    const old = await register('old', 31);
    await tick();
    expect(await status(fresh)).toMatchObject({
      aggregate_test_status: 'all_passing',
      stale: false,
      stale_reasons: [],
    });
    expect(await badge(fresh)).toBe('passing');
    expect(await status(old)).toMatchObject({
      aggregate_test_status: 'all_passing',
      stale: true,
      stale_reasons: ['no_recent_build'],
    });
    expect(await badge(old)).toBe('passing (stale)');
    expect(await page(old)).toContain(
      '— stale: the newest build of ‘old’ is more than 30 days old, it may no longer hold',
    );
    // The list of workflows marks it too.
    const list = (await t.http.get('/status').set(auth).expect(200)).text;
    expect(list).toMatch(new RegExp(`/status/${old}[\\s\\S]*?\\(stale\\)`));
  });

  it('is stale (schedule_disabled) while GitHub has the workflow switched off, and holds again once it is enabled', async () => {
    const uuid = await register('asleep', 1);
    await tick();
    expect(await status(uuid)).toMatchObject({ stale: false, stale_reasons: [] });

    // GitHub switched the schedule off; a run that finished before shows in the listing that changed.
    github.setWorkflowState('octo', 'asleep', 'ci.yml', 'disabled_inactivity');
    github.addRun('octo', 'asleep', 'ci.yml', { id: 101, conclusion: 'success', startedAt: new Date() });
    await tick();
    expect(await status(uuid)).toMatchObject({
      aggregate_test_status: 'all_passing',
      stale: true,
      stale_reasons: ['schedule_disabled'],
    });
    expect(await badge(uuid)).toBe('passing (stale)');
    expect(await page(uuid)).toContain('the CI has switched off the workflow of ‘asleep’');
    // Subscribers (the submitter: ALL) hear SCHEDULE_DISABLED once.
    await tick();
    const notifications = (await t.http.get('/users/current/notifications').set(auth).expect(200)).body as {
      items: { event: string; data: { workflow: { uuid: string } } }[];
    };
    expect(
      notifications.items.filter((n) => n.event === 'SCHEDULE_DISABLED' && n.data.workflow.uuid === uuid),
    ).toHaveLength(1);

    github.setWorkflowState('octo', 'asleep', 'ci.yml', 'active');
    github.addRun('octo', 'asleep', 'ci.yml', { id: 102, conclusion: 'success', startedAt: new Date() });
    await tick();
    expect(await status(uuid)).toMatchObject({ stale: false, stale_reasons: [] });
    expect(await badge(uuid)).toBe('passing');
  });

  it('is stale (rate_limited) while its service is paused by a rate limit, and holds again once the pause is over', async () => {
    const uuid = await register('limited', 1);
    await tick();
    expect(await status(uuid)).toMatchObject({ stale: false, stale_reasons: [] });
    const dataSource = t.app.get(DataSource);
    const [{ service_id: serviceId }] = await dataSource.query<{ service_id: number | string }[]>(
      `SELECT c.service_id AS service_id FROM test_check_states c
       JOIN workflow_versions v ON v.id = c.version_id JOIN workflows w ON w.id = v.workflow_id WHERE w.uuid = ?`,
      [uuid],
    );

    await t.app.get(CheckStateRepository).pauseService(Number(serviceId), new Date(Date.now() + 3600_000));
    expect(await status(uuid)).toMatchObject({
      aggregate_test_status: 'all_passing',
      stale: true,
      stale_reasons: ['rate_limited'],
    });
    expect(await badge(uuid)).toBe('passing (stale)');

    // Over: a pause that ends keeps its row.
    await dataSource
      .getRepository(ServicePauseEntity)
      .update({ serviceId: Number(serviceId) }, { pausedUntil: new Date(Date.now() - 1000) });
    expect(await status(uuid)).toMatchObject({ stale: false, stale_reasons: [] });
  });
});
