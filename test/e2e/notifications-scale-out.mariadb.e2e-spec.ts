import { createHmac, randomUUID } from 'node:crypto';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { NotificationReceiver } from '../fakes/notification-receiver.js';
import { SmtpReceiver } from '../fakes/smtp-receiver.js';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { EventRaiser } from '../../src/notifications/event-raiser.js';
import { ADMIN, startApp, testDatabase } from '../support/create-test-app.js';
import { crateZip, TEST_TERMS } from '../support/registry.js';
import { COPIES_WAIT, ServiceCopies } from '../support/service-copies.js';
import type { ServiceProcess } from '../support/service-process.js';
import { until } from '../support/until.js';

/**
 * Two copies of the built service on one MariaDB, polling every 2 s, while the CI fake flips the
 * builds of many instances: every transition raises one notification per subscriber, and every
 * notification reaches each receiver once, counted at the receivers. The copies' logs (debug)
 * never show the webhook secret, the SMTP password or GITHUB_WEBHOOK_SECRET.
 */
const INSTANCES = 12;
const INTERVAL_SECONDS = 2;
const WEBHOOK_SECRET = 'channel-secret-do-not-log';
const GITHUB_SECRET = 'github-secret-do-not-log';

describe(`notifications from two copies of the service on one ${testDatabase()}`, () => {
  let copies: ServiceCopies;
  let links: LinkServer;
  let github: GithubFake;
  let hook: NotificationReceiver;
  let smtp: SmtpReceiver;

  beforeAll(async () => {
    copies = await ServiceCopies.prepare('notify-scale');
    links = await LinkServer.start();
    github = new GithubFake();
    await github.start();
    hook = await new NotificationReceiver().start();
    smtp = await new SmtpReceiver('mailer', 'smtp-password-do-not-log').start();
  });

  afterAll(async () => {
    await copies?.close();
    await Promise.all([github?.stop(), hook?.stop(), smtp?.stop()]);
    await links?.close();
  });

  async function api(
    copy: ServiceProcess,
    path: string,
    token: string,
    init: RequestInit = {},
  ): Promise<Response> {
    return fetch(`${copy.url}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...init.headers },
    });
  }

  async function events(copy: ServiceProcess, token: string): Promise<string[]> {
    const response = await api(copy, '/users/current/notifications', token);
    return ((await response.json()) as { items: { event: string }[] }).items.map((n) => n.event);
  }

  function flip(conclusion: string, firstId: number): void {
    for (let i = 0; i < INSTANCES; i++) {
      github.addRun('octo', `scale${i}`, 'ci.yml', {
        id: firstId + i,
        conclusion,
        startedAt: new Date(Date.now() - 60_000),
      });
    }
  }

  it('raises one notification per subscriber per transition and delivers each once, whichever copy checks', async () => {
    const [a, b] = await copies.start({
      REFRESH_INTERVAL_SECONDS: String(INTERVAL_SECONDS),
      LOG_LEVEL: 'debug',
      NODE_ENV: 'production',
      SMTP_URL: smtp.url,
      GITHUB_WEBHOOK_SECRET: GITHUB_SECRET,
      UPSTREAM_TIMEOUT_SECONDS: '2',
    });
    const login = async (username: string, password: string): Promise<string> => {
      const response = await fetch(`${a.url}/api/v1/auth`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password }),
      });
      return ((await response.json()) as { token: string }).token;
    };
    const admin = await login(ADMIN.username, ADMIN.password);
    const users: string[] = [];
    for (const name of ['carol', 'dave']) {
      const created = await api(a, '/api/v1/users', admin, {
        method: 'POST',
        body: JSON.stringify({ username: name, password: 'a-test-password', roles: ['user'] }),
      });
      expect(created.status).toBe(201);
      users.push(await login(name, 'a-test-password'));
    }
    const [carol, dave] = users;

    for (let i = 0; i < INSTANCES; i++) {
      github.setRuns('octo', `scale${i}`, 'ci.yml', [
        { id: 1000 + i, conclusion: 'success', startedAt: new Date(Date.now() - 120_000) },
      ]);
    }
    const link = links.route('/scale.crate.zip', {
      kind: 'bytes',
      body: crateZip({
        name: 'scaled',
        marker: randomUUID(),
        instances: Array.from({ length: INSTANCES }, (_, i) => ({
          id: `#s${i}`,
          name: `s${i}`,
          runsOn: `${TEST_TERMS}GithubService`,
          url: github.url,
          resource: GithubFake.resource('octo', `scale${i}`, 'ci.yml'),
        })),
      }),
    });
    // Carol registers (subscribed to ALL), makes it visible to Dave by way of the admin: admins
    // see everything, so Dave's subscription goes through the admin's token here.
    const created = await api(a, '/users/current/workflows', carol, {
      method: 'POST',
      body: JSON.stringify({ roc_link: link, version: '1.0' }),
    });
    expect(created.status).toBe(201);
    const { uuid } = (await created.json()) as { uuid: string };
    expect((await api(b, `/workflows/${uuid}/subscribe`, dave, { method: 'POST' })).status).toBe(404);
    expect(
      (
        await api(b, `/workflows/${uuid}/subscribe`, admin, {
          method: 'PUT',
          body: JSON.stringify(['BUILD_FAILED']),
        })
      ).status,
    ).toBe(201);
    for (const channel of [
      { type: 'webhook', target: `${hook.url}/carol`, secret: WEBHOOK_SECRET },
      { type: 'email', target: 'carol@example.org' },
    ]) {
      expect(
        (await api(a, '/users/current/channels', carol, { method: 'POST', body: JSON.stringify(channel) }))
          .status,
      ).toBe(201);
    }

    // First checks (by either copy): no event for the first builds.
    await until(
      'every instance checked once',
      async () => {
        const status = await api(b, `/workflows/${uuid}/status`, carol);
        const body = (await status.json()) as { latest_builds: unknown[] };
        return body.latest_builds.length === INSTANCES;
      },
      COPIES_WAIT,
    );
    flip('failure', 2000);
    await until(
      'a BUILD_FAILED for every instance',
      async () => (await events(a, carol)).length === INSTANCES,
      COPIES_WAIT,
    );
    flip('success', 3000);
    await until(
      'a BUILD_RECOVERED for every instance',
      async () => (await events(b, carol)).length === 2 * INSTANCES,
      COPIES_WAIT,
    );
    await until(
      'every notification at the webhook and by mail',
      () => hook.accepted.length >= 2 * INSTANCES && smtp.mails.length >= 2 * INSTANCES,
      COPIES_WAIT,
    );
    // Several more polls by both copies, and the worker rounds after them: nothing more.
    const polled = github.totalRequests;
    await until(
      'three more polls of every instance',
      () => github.totalRequests >= polled + 3 * INSTANCES,
      COPIES_WAIT,
    );
    await new Promise((resolve) => setTimeout(resolve, 2500));

    const carolEvents = await events(a, carol);
    const adminEvents = await events(b, admin);
    const counts = {
      carol: carolEvents.length,
      carolFailed: carolEvents.filter((event) => event === 'BUILD_FAILED').length,
      admin: adminEvents.length,
      dave: (await events(a, dave)).length,
      webhookAccepted: hook.accepted.length,
      webhookDistinct: new Set(hook.accepted.map((request) => String(request.headers['x-delivery']))).size,
      mails: smtp.mails.length,
    };
    expect(counts).toEqual({
      carol: 2 * INSTANCES,
      carolFailed: INSTANCES,
      admin: INSTANCES,
      dave: 0,
      webhookAccepted: 2 * INSTANCES,
      webhookDistinct: 2 * INSTANCES,
      mails: 2 * INSTANCES,
    });
    for (const request of hook.accepted) {
      expect(request.headers['x-signature-256']).toBe(
        `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(request.body).digest('hex')}`,
      );
    }
    // Both copies did checks: the events were raised wherever the builds were recorded.
    const checks = await Promise.all(
      copies.all.map(async (copy) => {
        const text = await (await fetch(`${copy.url}/metrics`)).text();
        return text
          .split('\n')
          .filter((line) => line.startsWith('testing_service_checks_total{'))
          .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
      }),
    );
    expect(checks.every((count) => count > 0)).toBe(true);

    // A bad signature in, then everything the copies logged: no secret anywhere.
    const unsigned = await fetch(`${a.url}/integrations/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'ping',
        'x-hub-signature-256': 'sha256=00',
      },
      body: '{}',
    });
    expect(unsigned.status).toBe(401);
    expect(await unsigned.text()).not.toContain(GITHUB_SECRET);
    const channels = await (await api(b, '/users/current/channels', carol)).text();
    expect(channels).not.toContain(WEBHOOK_SECRET);
    for (const copy of copies.all) {
      await copy.stop();
    }
    const output = copies.all.map((copy) => copy.output()).join('\n');
    expect(output.length).toBeGreaterThan(0);
    for (const secret of [WEBHOOK_SECRET, GITHUB_SECRET, smtp.password]) {
      expect({ secret, logged: output.includes(secret) }).toEqual({ secret, logged: false });
    }
    process.stdout.write(
      `notifications, two copies: carol ${counts.carol} notifications (${counts.carolFailed} BUILD_FAILED), ` +
        `admin ${counts.admin}, webhook receiver ${counts.webhookAccepted} accepted (${counts.webhookDistinct} distinct ` +
        `X-Delivery) of ${hook.requests.length} requests, SMTP ${counts.mails} mails; checks by copy ${checks.join(' + ')}\n`,
    );
  }, 180_000);

  it('inserts an event once when two copies record the same transition at the same moment (the unique key decides)', async () => {
    const env = copies.env();
    const apps: NestExpressApplication[] = [await startApp(env), await startApp(env)];
    try {
      const dataSource = apps[0].get(DataSource);
      const [instance] = await dataSource.query<{ id: number | string }[]>(
        "SELECT i.id AS id FROM test_instances i WHERE i.roc_instance = '#s0'",
      );
      const count = async (sql: string): Promise<number> =>
        Number((await dataSource.query<{ n: number | string }[]>(sql, [Number(instance.id)]))[0].n);
      const notificationsOf = (): Promise<number> =>
        count(
          'SELECT COUNT(*) AS n FROM notifications n INNER JOIN notification_events e ON e.id = n.event_id WHERE e.instance_id = ?',
        );
      const before = await notificationsOf();
      const at = new Date();
      const build = (buildId: string, status: 'passed' | 'failed') => ({
        buildId,
        status,
        startedAt: new Date(at.getTime() - 60_000),
        durationSeconds: 30,
        url: `https://ci.example.org/${buildId}`,
      });
      const check = {
        instanceId: Number(instance.id),
        checkedAt: at,
        latestFinished: build('race_1', 'failed'),
        previousFinished: build('before_1', 'passed'),
        latestFinishedBefore: build('before_1', 'passed'),
        workflowDisabled: false,
      };
      // Each copy in its own transaction on its own connection pool, both before either commits.
      await Promise.all(
        apps.map((app) => app.get(DataSource).transaction((tx) => app.get(EventRaiser).raise(tx, [check]))),
      );
      expect(
        await count(
          "SELECT COUNT(*) AS n FROM notification_events WHERE instance_id = ? AND build_id = 'race_1'",
        ),
      ).toBe(1);
      // Carol (ALL) and the admin (BUILD_FAILED): one notification each.
      expect((await notificationsOf()) - before).toBe(2);
    } finally {
      for (const app of apps) {
        await app.close();
      }
    }
  });
});
