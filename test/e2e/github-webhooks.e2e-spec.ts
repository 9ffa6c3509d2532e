import { createHmac, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { DeliveryWorker } from '../../src/notifications/delivery.worker.js';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { NotificationReceiver } from '../fakes/notification-receiver.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateZip, TEST_TERMS } from '../support/registry.js';
import { until } from '../support/until.js';

const SECRET = 'github-webhook-secret';

function sign(body: string | Buffer, secret = SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** A `workflow_run` payload as GitHub sends it, cut to what the service reads and a little more. */
function workflowRun(owner: string, repo: string, file: string, runId: number): string {
  return JSON.stringify({
    action: 'completed',
    workflow_run: {
      id: runId,
      name: 'CI',
      workflow_id: 161335,
      path: `.github/workflows/${file}`,
      status: 'completed',
      conclusion: 'failure',
    },
    repository: { id: 1296269, full_name: `${owner}/${repo}` },
  });
}

/** Waits (bounded by the test's timeout) until `done` holds. */
/**
 * GitHub webhooks in (API.md 6.5) on a service polling every 300 s with its schedulers running:
 * a signed workflow_run gets the instance checked, its new status shown and its notification
 * delivered long before the next poll would have come.
 */
describe(`GitHub webhooks in (${testDatabase()})`, () => {
  let t: TestApp;
  let links: LinkServer;
  let github: GithubFake;
  let receiver: NotificationReceiver;
  let alice: string;
  let workflow: string;
  const runsPath = GithubFake.runsPath('octo', 'hooked', 'ci.yml');

  const post = (body: string | Buffer, headers: Record<string, string>) =>
    t.http
      .post('/integrations/github/webhooks')
      .set({ 'content-type': 'application/json', ...headers })
      .send(body);

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
    links = await LinkServer.start();
    receiver = await new NotificationReceiver().start();
    t = await createTestApp({ REFRESH_INTERVAL_SECONDS: '300', GITHUB_WEBHOOK_SECRET: SECRET });
    alice = await t.userToken();
    github.setRuns('octo', 'hooked', 'ci.yml', [
      { id: 501, conclusion: 'success', startedAt: new Date(Date.now() - 3600_000) },
    ]);
    const path = `/hooked-${randomUUID()}.crate.zip`;
    links.route(path, {
      kind: 'bytes',
      body: crateZip({
        name: 'hooked',
        marker: path,
        instances: [
          {
            id: '#hooked',
            name: 'hooked',
            runsOn: `${TEST_TERMS}GithubService`,
            url: github.url,
            resource: GithubFake.resource('octo', 'hooked', 'ci.yml'),
          },
        ],
      }),
    });
    const channel = await t.http
      .post('/users/current/channels')
      .set('Authorization', `Bearer ${alice}`)
      .send({ type: 'webhook', target: `${receiver.url}/alice` });
    expect(channel.status).toBe(201);
    const registered = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${alice}`)
      .send({ roc_link: links.url(path), version: '1.0' });
    expect(registered.status).toBe(201);
    workflow = (registered.body as { uuid: string }).uuid;
    // The first check of a new instance is at once: the running scheduler makes it.
    await until('the first check', () => github.count(runsPath) >= 1);
  });

  afterAll(async () => {
    await t?.close();
    await Promise.all([github?.stop(), receiver?.stop()]);
    await links?.close();
  });

  it('re-checks the instance at once on a signed workflow_run: new status and its delivered notification, without a poll', async () => {
    const dataSource = t.app.get(DataSource);
    await until('the instance checked', async () => {
      const [row] = await dataSource.query<{ n: number | string }[]>(
        'SELECT COUNT(*) AS n FROM test_check_states WHERE last_checked_at IS NOT NULL',
      );
      return Number(row.n) === 1;
    });
    const [state] = await dataSource.query<{ next_check_at: Date | string }[]>(
      'SELECT next_check_at FROM test_check_states',
    );
    const nextPoll =
      state.next_check_at instanceof Date
        ? state.next_check_at
        : new Date(`${state.next_check_at.replace(' ', 'T')}Z`);
    const requestsBefore = github.count(runsPath);
    github.addRun('octo', 'hooked', 'ci.yml', {
      id: 502,
      conclusion: 'failure',
      startedAt: new Date(Date.now() - 60_000),
    });
    const body = workflowRun('octo', 'hooked', 'ci.yml', 502);
    const answered = await post(body, {
      'x-github-event': 'workflow_run',
      'x-hub-signature-256': sign(body),
    });
    expect(answered.status).toBe(204);

    await until('the notification delivered', () => receiver.accepted.length === 1);
    const status = await t.http.get(`/workflows/${workflow}/status`).set('Authorization', `Bearer ${alice}`);
    expect(status.body).toMatchObject({
      aggregate_test_status: 'all_failing',
      latest_builds: [{ build_id: '502_1', status: 'failed' }],
    });
    const delivered = JSON.parse(receiver.accepted[0].body) as {
      event: string;
      notification: { data: { build: { build_id: string } } };
    };
    expect(delivered.event).toBe('BUILD_FAILED');
    expect(delivered.notification.data.build.build_id).toBe('502_1');
    // One request to GitHub after the webhook (the re-check), and the regular poll was not due:
    // it was set for later than the re-check, at the 300 s interval.
    expect(github.count(runsPath)).toBe(requestsBefore + 1);
    expect(nextPoll.getTime()).toBeGreaterThan(Date.now());
  });

  it('answers ping and other events with 204 and does nothing', async () => {
    const before = github.count(runsPath);
    for (const event of ['ping', 'push', 'issues']) {
      const body = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
      const answered = await post(body, { 'x-github-event': event, 'x-hub-signature-256': sign(body) });
      expect({ event, status: answered.status }).toEqual({ event, status: 204 });
    }
    // A workflow_run of a workflow nobody registered: accepted, nothing checked.
    const other = workflowRun('octo', 'unknown', 'ci.yml', 9);
    expect(
      (await post(other, { 'x-github-event': 'workflow_run', 'x-hub-signature-256': sign(other) })).status,
    ).toBe(204);
    expect(github.count(runsPath)).toBe(before);
  });

  it('accepts the form-encoded payload GitHub sends when the hook is set to that content type', async () => {
    const body = `payload=${encodeURIComponent(workflowRun('octo', 'hooked', 'ci.yml', 503))}`;
    const answered = await t.http
      .post('/integrations/github/webhooks')
      .set({
        'content-type': 'application/x-www-form-urlencoded',
        'x-github-event': 'workflow_run',
        'x-hub-signature-256': sign(body),
      })
      .send(body);
    expect(answered.status).toBe(204);
  });

  it('refuses a missing or wrong signature with 401, a bad payload with 400, and 10 MiB with 413', async () => {
    const body = workflowRun('octo', 'hooked', 'ci.yml', 504);
    for (const signature of [
      undefined,
      'sha256=00',
      sign(body, 'another-secret'),
      sign(`${body} `),
      'sha1=abc',
    ]) {
      const headers: Record<string, string> = { 'x-github-event': 'workflow_run' };
      if (signature) {
        headers['x-hub-signature-256'] = signature;
      }
      const answered = await post(body, headers);
      expect({ signature, status: answered.status }).toEqual({ signature, status: 401 });
      expect(answered.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(answered.text).not.toContain(SECRET);
    }
    for (const bad of ['{"workflow_run": {}}', '{"repository": {"full_name": "octo/hooked"}}', 'not json']) {
      const answered = await post(bad, {
        'x-github-event': 'workflow_run',
        'x-hub-signature-256': sign(bad),
      });
      expect({ bad, status: answered.status }).toEqual({ bad, status: 400 });
    }
    const huge = Buffer.alloc(10 * 1024 * 1024, 0x20);
    const tooLarge = await post(huge, {
      'x-github-event': 'workflow_run',
      'x-hub-signature-256': sign(huge),
    });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toMatchObject({ status: 413, detail: expect.stringMatching(/1 MiB|too large/i) });
  });
});

/** A service as deployed without the optional settings: no webhook secret, no SMTP, no private targets. */
describe(`notifications without optional settings (${testDatabase()})`, () => {
  let t: TestApp;
  let receiver: NotificationReceiver;

  beforeAll(async () => {
    receiver = await new NotificationReceiver().start();
    t = await createTestApp({ ALLOW_PRIVATE_NETWORK_LINKS: 'false' });
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
  });

  it('refuses GitHub webhooks with 401 while GITHUB_WEBHOOK_SECRET is unset', async () => {
    const body = '{"zen": "x"}';
    const answered = await t.http
      .post('/integrations/github/webhooks')
      .set({
        'content-type': 'application/json',
        'x-github-event': 'ping',
        'x-hub-signature-256': sign(body),
      })
      .send(body);
    expect(answered.status).toBe(401);
    expect(answered.body).toMatchObject({
      detail: expect.stringContaining('GITHUB_WEBHOOK_SECRET is not set'),
    });
  });

  it('refuses private targets and e-mail channels with 400, and guards every send', async () => {
    const token = await t.userToken();
    const auth = { Authorization: `Bearer ${token}` };
    for (const target of [
      receiver.url,
      'http://10.1.2.3/hook',
      'http://169.254.169.254/latest',
      'http://[::1]:9/',
    ]) {
      const refused = await t.http
        .post('/users/current/channels')
        .set(auth)
        .send({ type: 'webhook', target });
      expect({ target, status: refused.status }).toEqual({ target, status: 400 });
      expect((refused.body as { detail: string }).detail).toMatch(/private or reserved address/);
    }
    const email = await t.http
      .post('/users/current/channels')
      .set(auth)
      .send({ type: 'email', target: 'a@example.org' });
    expect(email.status).toBe(400);
    expect((email.body as { detail: string }).detail).toMatch(/SMTP_URL/);

    // A channel that got in while private targets were allowed: the send is refused, not made.
    const dataSource = t.app.get(DataSource);
    const [user] = await dataSource.query<{ id: number | string }[]>(
      "SELECT id FROM users WHERE username <> 'admin' ORDER BY id DESC LIMIT 1",
    );
    const now = new Date();
    // As TypeORM writes a DATETIME, which both databases read back.
    const stamp = now.toISOString().replace('T', ' ').replace('Z', '');
    await dataSource.query(
      'INSERT INTO notification_channels (user_id, type, target, events, secret, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      [Number(user.id), 'webhook', `${receiver.url}/inside`, 'ALL', null, stamp],
    );
    const [channel] = await dataSource.query<{ id: number | string }[]>(
      'SELECT MAX(id) AS id FROM notification_channels',
    );
    await dataSource.query(
      'INSERT INTO notifications (uuid, user_id, event_id, event, data, created_at) VALUES (?, ?, NULL, ?, ?, ?)',
      [
        randomUUID(),
        Number(user.id),
        'BUILD_FAILED',
        JSON.stringify({
          workflow: { uuid: randomUUID(), name: 'w', version: '1' },
          instance: { uuid: randomUUID(), name: 'i' },
          build: null,
        }),
        stamp,
      ],
    );
    const [notification] = await dataSource.query<{ id: number | string }[]>(
      'SELECT MAX(id) AS id FROM notifications',
    );
    await dataSource.query(
      'INSERT INTO deliveries (uuid, channel_id, notification_id, state, attempts, next_attempt_at, created_at) VALUES (?, ?, ?, ?, 0, ?, ?)',
      [randomUUID(), Number(channel.id), Number(notification.id), 'pending', stamp, stamp],
    );
    expect(await t.app.get(DeliveryWorker).tick(new Date(now.getTime() + 1000))).toBe(1);
    expect(receiver.requests).toEqual([]);
    const log = await t.http.get(`/users/current/channels/${Number(channel.id)}/deliveries`).set(auth);
    expect((log.body as { items: { status: string; error: string }[] }).items[0]).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/private or reserved address/),
    });
  });
});
