import { createHmac, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { DataSource } from 'typeorm';
import { DeliveryWorker } from '../../src/notifications/delivery.worker.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { NotificationReceiver } from '../fakes/notification-receiver.js';
import { SmtpReceiver } from '../fakes/smtp-receiver.js';
import { createTestApp, startApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateZip, TEST_TERMS } from '../support/registry.js';

const HOUR = 3600_000;
const INSTANCES = 3;

interface AttemptReply {
  time: string;
  delivery: string;
  status: string;
  status_code: number | null;
  error: string | null;
}

/**
 * Deliveries end to end: a workflow of three GitHub instances flips, its notifications go to a
 * webhook, a Slack receiver and a real SMTP server on 127.0.0.1; the receivers fail, hang and
 * recover, the service restarts between attempts, and every notification arrives exactly once
 * at each receiver. The worker's timer is off (REFRESH_INTERVAL_SECONDS=0): its rounds are
 * called with the time they run at.
 */
describe(`notification deliveries (${testDatabase()})`, () => {
  let t: TestApp;
  let app: NestExpressApplication;
  /** The service as it runs now (a restart moves it to another port). */
  let http: TestAgent;
  let links: LinkServer;
  let github: GithubFake;
  let hook: NotificationReceiver;
  let slack: NotificationReceiver;
  let smtp: SmtpReceiver;
  let alice: string;
  let channels: { webhook: number; slack: number; email: number };
  let clock = Date.now();
  const SECRET = 'webhook-signing-secret-1';

  const auth = (): Record<string, string> => ({ Authorization: `Bearer ${alice}` });

  async function check(advanceMs = 20 * 60_000): Promise<void> {
    clock = Math.max(clock, Date.now()) + advanceMs;
    await app.get(RefreshScheduler).tick(new Date(clock));
  }

  async function deliver(advanceMs = 0): Promise<number> {
    clock = Math.max(clock, Date.now()) + advanceMs;
    return app.get(DeliveryWorker).tick(new Date(clock));
  }

  function flip(conclusion: string, id: number): void {
    for (let i = 0; i < INSTANCES; i++) {
      github.addRun('octo', `deliver${i}`, 'ci.yml', {
        id: id + i,
        conclusion,
        startedAt: new Date(Math.max(clock, Date.now()) - HOUR),
      });
    }
  }

  async function log(channel: number): Promise<AttemptReply[]> {
    const response = await http.get(`/users/current/channels/${channel}/deliveries`).set(auth());
    expect(response.status).toBe(200);
    return (response.body as { items: AttemptReply[] }).items;
  }

  /** Every attempt of one delivery (one X-Delivery) carried the same bytes and the same signature. */
  function expectIdenticalAttempts(receiver: NotificationReceiver): void {
    const byDelivery = new Map<string, Set<string>>();
    for (const request of receiver.requests) {
      const id = String(request.headers['x-delivery']);
      const sent = `${String(request.headers['x-signature-256'])} ${request.body}`;
      byDelivery.set(id, (byDelivery.get(id) ?? new Set()).add(sent));
    }
    expect([...byDelivery.values()].map((bodies) => bodies.size)).toEqual(
      Array<number>(byDelivery.size).fill(1),
    );
  }

  function distinctDeliveries(receiver: NotificationReceiver): Set<string> {
    return new Set(receiver.accepted.map((request) => String(request.headers['x-delivery'])));
  }

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
    links = await LinkServer.start();
    hook = await new NotificationReceiver().start();
    slack = await new NotificationReceiver().start();
    smtp = await new SmtpReceiver().start();
    t = await createTestApp({
      SMTP_URL: smtp.url,
      MAIL_FROM: 'ci-bot@example.org',
      UPSTREAM_TIMEOUT_SECONDS: '1',
      PUBLIC_BASE_URL: 'https://status.example.org',
    });
    app = t.app;
    http = t.http;
    alice = await t.userToken();
    for (let i = 0; i < INSTANCES; i++) {
      github.setRuns('octo', `deliver${i}`, 'ci.yml', [
        { id: 100 + i, conclusion: 'success', startedAt: new Date(clock - 2 * HOUR) },
      ]);
    }
    const path = `/deliver-${randomUUID()}.crate.zip`;
    links.route(path, {
      kind: 'bytes',
      body: crateZip({
        name: 'delivered',
        marker: path,
        instances: Array.from({ length: INSTANCES }, (_, i) => ({
          id: `#deliver${i}`,
          name: `deliver${i}`,
          runsOn: `${TEST_TERMS}GithubService`,
          url: github.url,
          resource: GithubFake.resource('octo', `deliver${i}`, 'ci.yml'),
        })),
      }),
    });
    const registered = await http
      .post('/users/current/workflows')
      .set(auth())
      .send({ roc_link: links.url(path), version: '1.0' });
    expect(registered.status).toBe(201);
  });

  afterAll(async () => {
    if (app !== t?.app) {
      await app?.close();
    }
    await t?.close();
    await Promise.all([github?.stop(), hook?.stop(), slack?.stop(), smtp?.stop()]);
    await links?.close();
  });

  it('creates channels, never shows a secret, and refuses bad ones with 400', async () => {
    const created = await Promise.all(
      [
        { type: 'webhook', target: `${hook.url}/ci`, secret: SECRET },
        {
          type: 'slack',
          target: `${slack.url}/services/T0/B0/x`,
          events: ['BUILD_FAILED', 'BUILD_RECOVERED'],
        },
        { type: 'email', target: 'alice@example.org' },
      ].map((body) => http.post('/users/current/channels').set(auth()).send(body)),
    );
    expect(created.map((response) => response.status)).toEqual([201, 201, 201]);
    expect(created[0].body).toEqual({
      id: expect.any(Number),
      type: 'webhook',
      target: `${hook.url}/ci`,
      events: ['ALL'],
      has_secret: true,
      created: expect.stringMatching(/^\d+$/),
    });
    expect(JSON.stringify(created.map((response) => response.body))).not.toContain(SECRET);
    const [webhook, slackChannel, email] = created.map((response) => (response.body as { id: number }).id);
    channels = { webhook, slack: slackChannel, email };
    const listed = await http.get('/users/current/channels').set(auth());
    expect((listed.body as { items: unknown[] }).items).toHaveLength(3);
    expect(listed.text).not.toContain(SECRET);

    for (const [body, field] of [
      [{ type: 'pager', target: hook.url }, 'type'],
      [{ type: 'webhook', target: 'ftp://example.org/x' }, 'target'],
      [{ type: 'webhook', target: hook.url, events: ['SOMETIMES'] }, 'events'],
      [{ type: 'webhook', target: hook.url, events: [] }, 'events'],
      [{ type: 'slack', target: hook.url, secret: 'a-secret-for-slack' }, 'secret'],
      [{ type: 'email', target: 'not an address' }, 'target'],
      [{ type: 'webhook', target: 'http://user:pw@example.org/' }, 'target'],
    ] as const) {
      const refused = await http.post('/users/current/channels').set(auth()).send(body);
      expect({ body, status: refused.status }).toEqual({ body, status: 400 });
      expect(refused.headers['content-type']).toMatch(/application\/problem\+json/);
      expect((refused.body as { errors: { field: string }[] }).errors[0].field).toBe(field);
    }
    const other = await t.userToken();
    const foreign = await http
      .get(`/users/current/channels/${webhook}/deliveries`)
      .set('Authorization', `Bearer ${other}`);
    expect(foreign.status).toBe(404);
    expect(
      (await http.delete(`/users/current/channels/${webhook}`).set('Authorization', `Bearer ${other}`))
        .status,
    ).toBe(404);
    expect((await http.get('/users/current/channels/abc/deliveries').set(auth())).status).toBe(400);
  });

  it('retries what failed or timed out with back-off, keeps the X-Delivery id, and delivers each notification once', async () => {
    await check(); // first builds: no event
    hook.mode = { kind: 'status', status: 503 };
    slack.mode = { kind: 'hang' };
    smtp.refuse = true;
    flip('failure', 200);
    await check();
    expect(await deliver()).toBe(3 * INSTANCES);
    // Nothing is due again until the back-off has passed.
    expect(await deliver(1000)).toBe(0);
    expect(hook.requests).toHaveLength(INSTANCES);
    expect(slack.requests).toHaveLength(INSTANCES);
    expect(smtp.refused).toBe(INSTANCES);
    await app.get(DeliveryWorker).updateGauges(new Date(clock + 60_000));
    const gauges = (await http.get('/metrics')).text;
    expect(gauges).toMatch(new RegExp(`^notification_outbox_depth ${3 * INSTANCES}$`, 'm'));
    expect(gauges).toMatch(/^notification_outbox_oldest_pending_seconds [1-9]\d*/m);
    const failed = await log(channels.webhook);
    expect(failed).toHaveLength(INSTANCES);
    expect(failed[0]).toMatchObject({
      status: 'error',
      status_code: 503,
      error: 'the receiver answered 503',
    });
    expect((await log(channels.slack))[0]).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/did not answer/),
    });

    // Read between two attempts: the retry still sends what the first attempt sent.
    const unread = (await http.get('/users/current/notifications').set(auth())).body as {
      items: { uuid: string }[];
    };
    await http
      .put('/users/current/notifications')
      .set(auth())
      .send({ items: unread.items.map(({ uuid }) => ({ uuid, read: true })) })
      .expect(204);

    hook.mode = { kind: 'ok' };
    slack.mode = { kind: 'ok' };
    smtp.refuse = false;
    expect(await deliver(2 * HOUR)).toBe(3 * INSTANCES);
    expect(await deliver(2 * HOUR)).toBe(0);
    expectIdenticalAttempts(hook);

    expect(hook.accepted).toHaveLength(INSTANCES);
    expect(distinctDeliveries(hook).size).toBe(INSTANCES);
    // The same X-Delivery on the failed attempt and on the one that got through.
    const firstIds = new Set(
      hook.requests.slice(0, INSTANCES).map((request) => String(request.headers['x-delivery'])),
    );
    expect(distinctDeliveries(hook)).toEqual(firstIds);
    for (const request of hook.accepted) {
      expect(request.headers['x-event']).toBe('BUILD_FAILED');
      expect(request.headers['x-signature-256']).toBe(
        `sha256=${createHmac('sha256', SECRET).update(request.body).digest('hex')}`,
      );
      const body = JSON.parse(request.body) as {
        event: string;
        notification: { data: { workflow: { name: string } } };
      };
      expect(body.event).toBe('BUILD_FAILED');
      expect(body.notification.data.workflow.name).toBe('delivered');
    }
    expect(slack.accepted).toHaveLength(INSTANCES);
    const text = (JSON.parse(slack.accepted[0].body) as { text: string }).text;
    expect(text).toMatch(
      /\[delivered\] BUILD_FAILED: workflow "delivered" version 1\.0, instance "deliver\d"/,
    );
    expect(text).toContain('https://status.example.org/status/');
    expect(smtp.mails).toHaveLength(INSTANCES);
    expect(smtp.mails[0].to).toEqual(['alice@example.org']);
    expect(smtp.mails[0].from).toBe('ci-bot@example.org');
    expect(smtp.mails[0].raw).toMatch(/Subject: \[delivered\] BUILD_FAILED/);
    const notifications = await http.get('/users/current/notifications').set(auth());
    for (const n of (notifications.body as { items: { emailed: string | null }[] }).items) {
      expect(n.emailed).toMatch(/^\d+$/);
    }
    expect((await log(channels.webhook)).map((attempt) => attempt.status)).toEqual([
      ...Array<string>(INSTANCES).fill('sent'),
      ...Array<string>(INSTANCES).fill('error'),
    ]);
  });

  it('delivers every notification exactly once across a restart of the service in the middle of retries', async () => {
    hook.mode = { kind: 'status', status: 500 };
    smtp.refuse = true;
    flip('success', 300);
    await check();
    expect(await deliver()).toBe(3 * INSTANCES);
    const acceptedBefore = {
      hook: hook.accepted.length,
      slack: slack.accepted.length,
      mail: smtp.mails.length,
    };
    expect(slack.accepted.length).toBe(2 * INSTANCES);

    // The service stops with deliveries waiting for their next attempt, and starts again.
    await app.close();
    app = await startApp(t.env);
    http = request(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
    hook.mode = { kind: 'ok' };
    smtp.refuse = false;
    expect(await deliver(2 * HOUR)).toBe(2 * INSTANCES);
    expect(await deliver(2 * HOUR)).toBe(0);

    const counts = {
      hook: hook.accepted.length - acceptedBefore.hook,
      slack: slack.accepted.length - acceptedBefore.slack,
      mail: smtp.mails.length - acceptedBefore.mail,
    };
    expect(counts).toEqual({ hook: INSTANCES, slack: 0, mail: INSTANCES });
    expect(distinctDeliveries(hook).size).toBe(2 * INSTANCES);
    process.stdout.write(
      `deliveries across a restart: webhook ${hook.accepted.length} accepted of ${hook.requests.length} requests ` +
        `(${distinctDeliveries(hook).size} distinct), slack ${slack.accepted.length} of ${slack.requests.length}, ` +
        `smtp ${smtp.mails.length} mails (${smtp.refused} refused)\n`,
    );
  });

  it('gives a delivery up after 24 h of failures, and follows no redirect', async () => {
    hook.mode = { kind: 'status', status: 302, headers: { location: `${slack.url}/elsewhere` } };
    const slackBefore = slack.requests.length;
    flip('failure', 400);
    await check();
    await deliver();
    expect((await log(channels.webhook))[0]).toMatchObject({
      status: 'error',
      status_code: 302,
      error: 'the receiver answered 302 (redirects are not followed)',
    });
    for (let hours = 0; hours < 30; hours += 2) {
      await deliver(2 * HOUR);
    }
    const last = await log(channels.webhook);
    expect(last.filter((attempt) => attempt.status === 'failed')).toHaveLength(INSTANCES);
    expect(await deliver(48 * HOUR)).toBe(0);
    expect(slack.requests.filter((request) => request.path === '/elsewhere')).toEqual([]);
    expect(slack.requests.length - slackBefore).toBe(INSTANCES);
    const metrics = await http.get('/metrics');
    expect(metrics.text).toMatch(/notification_deliveries_total\{channel="webhook",result="failed"\} 3/);
    expect(metrics.text).toMatch(/notifications_raised_total \d+/);
  });

  it("keeps a channel's log when notifications are deleted, and still sends their pending deliveries", async () => {
    hook.mode = { kind: 'status', status: 500 };
    const before = hook.requests.length;
    flip('success', 500);
    await check();
    await deliver();
    expect(hook.requests.length - before).toBe(INSTANCES);
    const logged = await log(channels.webhook);
    const notifications = (await http.get('/users/current/notifications').set(auth())).body as {
      items: { uuid: string }[];
    };
    const [one, ...others] = notifications.items.map(({ uuid }) => uuid);
    expect((await http.delete(`/users/current/notifications/${one}`).set(auth())).status).toBe(204);
    expect((await http.patch('/users/current/notifications').set(auth()).send(others)).status).toBe(204);
    expect((await http.get('/users/current/notifications').set(auth())).body).toEqual({ items: [] });
    expect(await log(channels.webhook)).toEqual(logged);
    await app.get(DeliveryWorker).sweep(new Date(clock));
    expect(await log(channels.webhook)).toEqual(logged);

    hook.mode = { kind: 'ok' };
    expect(await deliver(2 * HOUR)).toBe(INSTANCES);
    const recovered = hook.accepted.slice(-INSTANCES);
    for (const request of recovered) {
      expect(request.headers['x-event']).toBe('BUILD_RECOVERED');
    }
    expectIdenticalAttempts(hook);
    const after = await log(channels.webhook);
    expect(after.slice(INSTANCES)).toEqual(logged);
    expect(after.slice(0, INSTANCES).map((attempt) => attempt.status)).toEqual(
      Array<string>(INSTANCES).fill('sent'),
    );
  });

  it('deletes a channel with its deliveries and log', async () => {
    expect((await http.delete(`/users/current/channels/${channels.slack}`).set(auth())).status).toBe(204);
    expect((await http.get(`/users/current/channels/${channels.slack}/deliveries`).set(auth())).status).toBe(
      404,
    );
    const rows = await app
      .get(DataSource)
      .query<{ n: number | string }[]>('SELECT COUNT(*) AS n FROM deliveries WHERE channel_id = ?', [
        channels.slack,
      ]);
    expect(Number(rows[0].n)).toBe(0);
  });
});
