import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { DeliveryWorker } from '../../src/notifications/delivery.worker.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { captureQueries } from '../support/query-plans.js';
import { crateZip, TEST_TERMS } from '../support/registry.js';

const DAY = 24 * 3600_000;

interface NotificationReply {
  uuid: string;
  created: string;
  read: string | null;
  emailed: string | null;
  event: string;
  data: {
    workflow: { uuid: string; name: string; version: string };
    instance: { uuid: string; name: string | null };
    build: { build_id: string; status: string; timestamp: string; links: { origin: string } } | null;
  };
}

describe(`subscriptions and notifications (${testDatabase()})`, () => {
  let t: TestApp;
  let links: LinkServer;
  let github: GithubFake;
  let scheduler: RefreshScheduler;
  let worker: DeliveryWorker;
  let alice: string;
  let bob: string;
  let admin: string;
  let workflow: string;
  /** The scheduler runs by hand: each tick's clock moves on from the real time. */
  let clock = Date.now();

  async function tick(advanceMs = 20 * 60_000): Promise<void> {
    clock = Math.max(clock, Date.now()) + advanceMs;
    await scheduler.tick(new Date(clock));
  }

  /** A run of the fake that started an hour before the scheduler's clock. */
  function run(id: number, conclusion: string): { id: number; conclusion: string; startedAt: Date } {
    return { id, conclusion, startedAt: new Date(Math.max(clock, Date.now()) - 3600_000) };
  }

  async function notifications(token: string): Promise<NotificationReply[]> {
    const response = await t.http.get('/users/current/notifications').set('Authorization', `Bearer ${token}`);
    expect(response.status).toBe(200);
    return (response.body as { items: NotificationReply[] }).items;
  }

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
    links = await LinkServer.start();
    t = await createTestApp();
    scheduler = t.app.get(RefreshScheduler);
    worker = t.app.get(DeliveryWorker);
    admin = await t.login();
    alice = await t.userToken();
    bob = await t.userToken();
    github.setRuns('octo', 'notify', 'ci.yml', [run(101, 'success')]);
    const path = `/notify-${randomUUID()}.crate.zip`;
    links.route(path, {
      kind: 'bytes',
      body: crateZip({
        name: 'notify me',
        marker: path,
        instances: [
          {
            id: '#notify-gh',
            name: 'notify-gh',
            runsOn: `${TEST_TERMS}GithubService`,
            url: github.url,
            resource: GithubFake.resource('octo', 'notify', 'ci.yml'),
          },
        ],
      }),
    });
    const registered = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${alice}`)
      .send({ roc_link: links.url(path), version: '1.0' });
    expect(registered.status).toBe(201);
    workflow = (registered.body as { uuid: string }).uuid;
  });

  afterAll(async () => {
    await t?.close();
    await github?.stop();
    await links?.close();
  });

  describe('subscriptions', () => {
    it('subscribes the submitter of a new workflow to ALL', async () => {
      const response = await t.http
        .get('/users/current/subscriptions')
        .set('Authorization', `Bearer ${alice}`);
      expect(response.status).toBe(200);
      const items = (response.body as { items: Record<string, unknown>[] }).items;
      expect(items).toEqual([
        {
          user: { id: expect.any(Number), username: expect.any(String) },
          resource: { uuid: workflow, type: 'workflow' },
          created: expect.stringMatching(/^\d+$/),
          modified: expect.stringMatching(/^\d+$/),
          events: ['ALL'],
        },
      ]);
    });

    it('lets anybody who can see the workflow subscribe, and hides it (404) from others', async () => {
      const denied = await t.http
        .post(`/workflows/${workflow}/subscribe`)
        .set('Authorization', `Bearer ${bob}`);
      expect(denied.status).toBe(404);
      expect(denied.headers['content-type']).toMatch(/application\/problem\+json/);
      const byAdmin = await t.http
        .post(`/workflows/${workflow}/subscribe`)
        .set('Authorization', `Bearer ${admin}`);
      expect(byAdmin.status).toBe(201);
      expect(byAdmin.body).toMatchObject({ resource: { uuid: workflow, type: 'workflow' }, events: ['ALL'] });
      const noToken = await t.http.post(`/workflows/${workflow}/subscribe`);
      expect(noToken.status).toBe(401);
    });

    it('sets events with PUT (201 new, 204 updated), refuses unknown events, and unsubscribes', async () => {
      const auth = { Authorization: `Bearer ${alice}` };
      const updated = await t.http.put(`/workflows/${workflow}/subscribe`).set(auth).send(['BUILD_FAILED']);
      expect(updated.status).toBe(204);
      for (const body of [['NOPE'], [], { events: ['ALL'] }, ['ALL', 3]]) {
        const bad = await t.http.put(`/workflows/${workflow}/subscribe`).set(auth).send(body);
        expect(bad.status).toBe(400);
        expect(bad.body).toMatchObject({ status: 400, errors: [{ field: 'events' }] });
      }
      const gone = await t.http.post(`/workflows/${workflow}/unsubscribe`).set(auth);
      expect(gone.status).toBe(204);
      const none = await t.http.get('/users/current/subscriptions').set(auth);
      expect((none.body as { items: unknown[] }).items).toEqual([]);
      const again = await t.http
        .put(`/workflows/${workflow}/subscribe`)
        .set(auth)
        .send(['BUILD_FAILED', 'BUILD_RECOVERED', 'TESTS_STOPPED', 'BUILD_FAILED']);
      expect(again.status).toBe(201);
      expect(again.body).toMatchObject({ events: ['BUILD_FAILED', 'BUILD_RECOVERED', 'TESTS_STOPPED'] });
      const missing = await t.http.post(`/workflows/${randomUUID()}/subscribe`).set(auth);
      expect(missing.status).toBe(404);
      const badUuid = await t.http.post('/workflows/not-a-uuid/subscribe').set(auth);
      expect(badUuid.status).toBe(400);
    });

    it("carries each caller's own subscriptions in the workflow's status (LifeMonitor's member), none for anonymous callers", async () => {
      const subscriptionsIn = async (token?: string): Promise<unknown> => {
        const call = t.http.get(`/workflows/${workflow}/status`);
        const response = await (token ? call.set('Authorization', `Bearer ${token}`) : call);
        expect(response.status).toBe(200);
        return (response.body as { subscriptions: unknown }).subscriptions;
      };
      const listed = async (token: string): Promise<unknown[]> =>
        (
          (await t.http.get('/users/current/subscriptions').set('Authorization', `Bearer ${token}`)).body as {
            items: unknown[];
          }
        ).items;
      const [aliceListed] = await listed(alice);
      expect(aliceListed).toMatchObject({ events: ['BUILD_FAILED', 'BUILD_RECOVERED', 'TESTS_STOPPED'] });
      expect(await subscriptionsIn(alice)).toEqual([aliceListed]);
      const [adminListed] = await listed(admin);
      expect(adminListed).toMatchObject({ resource: { uuid: workflow }, events: ['ALL'] });
      expect(await subscriptionsIn(admin)).toEqual([adminListed]);

      // Public for a moment: anybody reads its status, with no subscription.
      const owner = { Authorization: `Bearer ${alice}` };
      expect((await t.http.put(`/workflows/${workflow}`).set(owner).send({ public: true })).status).toBe(200);
      try {
        expect(await subscriptionsIn()).toEqual([]);
        expect(await subscriptionsIn(bob)).toEqual([]);
      } finally {
        expect((await t.http.put(`/workflows/${workflow}`).set(owner).send({ public: false })).status).toBe(
          200,
        );
      }
    });
  });

  describe('events', () => {
    it('raises nothing for the first build ever seen', async () => {
      await tick();
      expect(await notifications(alice)).toEqual([]);
      expect(await notifications(admin)).toEqual([]);
    });

    it('raises BUILD_FAILED once per subscriber when a passing instance fails', async () => {
      github.addRun('octo', 'notify', 'ci.yml', run(102, 'failure'));
      await tick();
      await tick(); // unchanged (a 304): nothing more
      const [mine, admins] = [await notifications(alice), await notifications(admin)];
      expect(mine).toHaveLength(1);
      expect(admins).toHaveLength(1);
      expect(mine[0]).toEqual({
        uuid: expect.any(String),
        created: expect.stringMatching(/^\d+$/),
        read: null,
        emailed: null,
        event: 'BUILD_FAILED',
        data: {
          workflow: { uuid: workflow, name: 'notify me', version: '1.0' },
          instance: { uuid: expect.any(String), name: 'notify-gh' },
          build: {
            build_id: '102_1',
            status: 'failed',
            timestamp: expect.stringMatching(/^\d+$/),
            links: { origin: expect.stringContaining('102') },
            // API.md 16: the fake keeps no log of the run, and `failure` alone does not tell.
            failure: {
              class: 'unknown',
              reason: 'the CI fields do not tell, and no log was read',
              evidence: ['conclusion: failure'],
            },
          },
        },
      });
      expect(admins[0].uuid).not.toBe(mine[0].uuid);
    });

    it('raises BUILD_RECOVERED when it passes again, and nothing for another failure after a failure', async () => {
      github.addRun('octo', 'notify', 'ci.yml', run(103, 'success'));
      await tick();
      expect((await notifications(alice)).map((n) => n.event)).toEqual(['BUILD_RECOVERED', 'BUILD_FAILED']);
      github.addRun('octo', 'notify', 'ci.yml', run(104, 'failure'));
      await tick();
      github.addRun('octo', 'notify', 'ci.yml', run(105, 'error'));
      await tick();
      expect((await notifications(alice)).map((n) => n.event)).toEqual([
        'BUILD_FAILED',
        'BUILD_RECOVERED',
        'BUILD_FAILED',
      ]);
    });

    it('raises TESTS_STOPPED once after MAX_BUILD_AGE_DAYS without a finished build, again after a new one', async () => {
      await tick(31 * DAY);
      // Still due at the next check, it is found raised by a read, not tried again on the unique key.
      const next = await captureQueries(t.app.get(DataSource), () => tick(DAY));
      expect(next.filter((query) => /^\s*SELECT\b.*\bnotification_events\b/is.test(query.sql))).toHaveLength(
        1,
      );
      expect(next.filter((query) => /^\s*INSERT\b/i.test(query.sql))).toEqual([]);
      const stopped = (await notifications(alice)).filter((n) => n.event === 'TESTS_STOPPED');
      expect(stopped).toHaveLength(1);
      expect(stopped[0].data.build?.build_id).toBe('105_1');
      github.addRun('octo', 'notify', 'ci.yml', run(106, 'error'));
      await tick();
      expect((await notifications(alice)).filter((n) => n.event === 'TESTS_STOPPED')).toHaveLength(1);
      await tick(31 * DAY);
      expect((await notifications(alice)).filter((n) => n.event === 'TESTS_STOPPED')).toHaveLength(2);
    });

    it('does not tell a user who subscribed to other events', async () => {
      const auth = { Authorization: `Bearer ${admin}` };
      const before = (await notifications(admin)).length;
      expect(
        (await t.http.put(`/workflows/${workflow}/subscribe`).set(auth).send(['BUILD_RECOVERED'])).status,
      ).toBe(204);
      github.addRun('octo', 'notify', 'ci.yml', run(107, 'success'));
      await tick();
      github.addRun('octo', 'notify', 'ci.yml', run(108, 'failure'));
      await tick();
      const events = (await notifications(admin)).slice(0, (await notifications(admin)).length - before);
      expect(events.map((n) => n.event)).toEqual(['BUILD_RECOVERED']);
    });
  });

  describe('notification operations', () => {
    it("marks read and unread, deletes by list and one by one, and never touches another user's", async () => {
      const auth = { Authorization: `Bearer ${alice}` };
      const [first, second, third] = await notifications(alice);
      const others = await notifications(admin);
      const marked = await t.http
        .put('/users/current/notifications')
        .set(auth)
        .send({
          items: [
            { uuid: first.uuid, read: true },
            { uuid: others[0].uuid, read: true },
          ],
        });
      expect(marked.status).toBe(204);
      const afterMark = await notifications(alice);
      expect(afterMark.find((n) => n.uuid === first.uuid)?.read).toMatch(/^\d+$/);
      expect((await notifications(admin))[0].read).toBeNull();
      await t.http
        .put('/users/current/notifications')
        .set(auth)
        .send({ items: [{ uuid: first.uuid, read: false }] });
      expect((await notifications(alice)).find((n) => n.uuid === first.uuid)?.read).toBeNull();

      const patched = await t.http
        .patch('/users/current/notifications')
        .set(auth)
        .send([first.uuid, others[0].uuid]);
      expect(patched.status).toBe(204);
      expect((await notifications(alice)).map((n) => n.uuid)).not.toContain(first.uuid);
      expect((await notifications(admin)).map((n) => n.uuid)).toContain(others[0].uuid);

      expect((await t.http.delete(`/users/current/notifications/${second.uuid}`).set(auth)).status).toBe(204);
      expect((await t.http.delete(`/users/current/notifications/${second.uuid}`).set(auth)).status).toBe(404);
      expect((await t.http.delete(`/users/current/notifications/${others[0].uuid}`).set(auth)).status).toBe(
        404,
      );
      expect((await notifications(alice)).map((n) => n.uuid)).toContain(third.uuid);
    });

    it('answers 400 to bad bodies', async () => {
      const auth = { Authorization: `Bearer ${alice}` };
      for (const body of [
        { items: [{ uuid: 'x', read: true }] },
        { items: 'no' },
        { items: [{ uuid: randomUUID(), read: 'yes' }] },
      ]) {
        expect((await t.http.put('/users/current/notifications').set(auth).send(body)).status).toBe(400);
      }
      for (const body of [{ uuids: [] }, ['not-a-uuid'], [1]]) {
        const response = await t.http.patch('/users/current/notifications').set(auth).send(body);
        expect(response.status).toBe(400);
        expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
      }
      expect((await t.http.delete('/users/current/notifications/nope').set(auth)).status).toBe(400);
    });

    it('removes notifications past NOTIFICATION_RETENTION_DAYS in the scheduled sweep', async () => {
      expect((await notifications(admin)).length).toBeGreaterThan(0);
      await expect(worker.sweep(new Date(clock + 89 * DAY))).resolves.toBeGreaterThanOrEqual(0);
      expect((await notifications(admin)).length).toBeGreaterThan(0);
      await expect(worker.sweep(new Date(clock + 91 * DAY))).resolves.toBeGreaterThan(0);
      expect(await notifications(admin)).toEqual([]);
      expect(await notifications(alice)).toEqual([]);
    });
  });

  describe('workflow state', () => {
    const stoppedOf = async (token: string) =>
      (await notifications(token))
        .filter((n) => n.event === 'TESTS_STOPPED')
        .map((n) => n.data.build?.build_id);

    it('raises TESTS_STOPPED and SCHEDULE_DISABLED when the GitHub workflow is disabled, once until a new finished build', async () => {
      await t.http
        .put(`/workflows/${workflow}/subscribe`)
        .set('Authorization', `Bearer ${alice}`)
        .send(['BUILD_FAILED', 'BUILD_RECOVERED', 'TESTS_STOPPED', 'SCHEDULE_DISABLED'])
        .expect(204);
      const before = await stoppedOf(alice);
      // A run finished just before its owner disabled the workflow: the check reads both.
      github.addRun('octo', 'notify', 'ci.yml', run(201, 'success'));
      github.setWorkflowState('octo', 'notify', 'ci.yml', 'disabled_manually');
      await tick();
      expect(await stoppedOf(alice)).toEqual(['201_1', ...before]);

      // A listing that changed without a new finished build reads the state again: nothing more.
      github.addRun('octo', 'notify', 'ci.yml', {
        id: 202,
        status: 'in_progress',
        conclusion: null,
        startedAt: new Date(Math.max(clock, Date.now())),
      });
      await tick();
      await tick();
      expect(await stoppedOf(alice)).toEqual(['201_1', ...before]);

      github.setWorkflowState('octo', 'notify', 'ci.yml', 'disabled_inactivity');
      github.addRun('octo', 'notify', 'ci.yml', run(203, 'success'));
      await tick();
      expect(await stoppedOf(alice)).toEqual(['203_1', '201_1', ...before]);

      github.setWorkflowState('octo', 'notify', 'ci.yml', 'active');
      github.addRun('octo', 'notify', 'ci.yml', run(204, 'success'));
      await tick();
      expect(await stoppedOf(alice)).toEqual(['203_1', '201_1', ...before]);
      // API.md 16: SCHEDULE_DISABLED beside it, on the same builds, once each.
      expect(
        (await notifications(alice))
          .filter((n) => n.event === 'SCHEDULE_DISABLED')
          .map((n) => n.data.build?.build_id),
      ).toEqual(['203_1', '201_1']);
    });
  });

  describe('visibility', () => {
    it('tells a subscriber nothing once the owner made the workflow private; the owner still hears', async () => {
      const owner = { Authorization: `Bearer ${alice}` };
      const events = async (token: string) => (await notifications(token)).map((n) => n.data.build?.build_id);
      expect((await t.http.put(`/workflows/${workflow}`).set(owner).send({ public: true })).status).toBe(200);
      const subscribed = await t.http
        .post(`/workflows/${workflow}/subscribe`)
        .set('Authorization', `Bearer ${bob}`);
      expect(subscribed.status).toBe(201);
      const [bobBefore, aliceBefore] = [await events(bob), await events(alice)];

      // While public, bob hears of a failure (so the check below can fail).
      github.addRun('octo', 'notify', 'ci.yml', run(301, 'failure'));
      await tick();
      expect(await events(bob)).toEqual(['301_1', ...bobBefore]);

      expect((await t.http.put(`/workflows/${workflow}`).set(owner).send({ public: false })).status).toBe(
        200,
      );
      github.addRun('octo', 'notify', 'ci.yml', run(302, 'success'));
      await tick();
      expect(await events(bob)).toEqual(['301_1', ...bobBefore]);
      expect(await events(alice)).toEqual(['302_1', '301_1', ...aliceBefore]);
    });
  });
});
