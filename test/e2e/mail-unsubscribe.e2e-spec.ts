import { randomUUID } from 'node:crypto';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type TestAgent from 'supertest/lib/agent.js';
import { DeliveryWorker } from '../../src/notifications/delivery.worker.js';
import { UnsubscribeLinks } from '../../src/notifications/unsubscribe-links.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { SmtpReceiver } from '../fakes/smtp-receiver.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateZip, TEST_TERMS } from '../support/registry.js';

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const BASE = 'https://status.example.org';

/**
 * One-click unsubscribe (RFC 8058, API.md 6.4) end to end: a build fails, the mail reaches a real
 * SMTP server on 127.0.0.1 with `List-Unsubscribe` and `List-Unsubscribe-Post`; the link's GET
 * changes nothing, its POST without a token or cookie ends the subscription, and a link that was
 * altered, signed under another secret or expired changes nothing.
 */
describe(`mail unsubscribe links (${testDatabase()})`, () => {
  let t: TestApp;
  let app: NestExpressApplication;
  let http: TestAgent;
  let links: LinkServer;
  let github: GithubFake;
  let smtp: SmtpReceiver;
  let alice: string;
  let aliceId: number;
  let workflow: string;
  let clock = Date.now();

  const auth = (): Record<string, string> => ({ Authorization: `Bearer ${alice}` });

  async function subscriptions(): Promise<string[]> {
    const listed = await http.get('/users/current/subscriptions').set(auth());
    expect(listed.status).toBe(200);
    return (listed.body as { items: { resource: { uuid: string } }[] }).items.map((s) => s.resource.uuid);
  }

  async function channels(): Promise<{ id: number; events: string[] }[]> {
    const listed = await http.get('/users/current/channels').set(auth());
    expect(listed.status).toBe(200);
    return (listed.body as { items: { id: number; events: string[] }[] }).items;
  }

  /** A mail's header fields, unfolded (RFC 5322 2.2.3). */
  function headerFields(raw: string): string {
    return raw.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
  }

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
    links = await LinkServer.start();
    smtp = await new SmtpReceiver().start();
    t = await createTestApp({
      SMTP_URL: smtp.url,
      MAIL_FROM: 'ci-bot@example.org',
      UPSTREAM_TIMEOUT_SECONDS: '2',
      PUBLIC_BASE_URL: BASE,
    });
    app = t.app;
    http = t.http;
    alice = await t.userToken();
    aliceId = ((await http.get('/users/current').set(auth())).body as { id: number }).id;
    github.setRuns('octo', 'unsub', 'ci.yml', [
      { id: 100, conclusion: 'success', startedAt: new Date(clock - 2 * HOUR) },
    ]);
    const path = `/unsub-${randomUUID()}.crate.zip`;
    links.route(path, {
      kind: 'bytes',
      body: crateZip({
        name: 'unsubscribed',
        marker: path,
        instances: [
          {
            id: '#unsub',
            name: 'unsub',
            runsOn: `${TEST_TERMS}GithubService`,
            url: github.url,
            resource: GithubFake.resource('octo', 'unsub', 'ci.yml'),
          },
        ],
      }),
    });
    const registered = await http
      .post('/users/current/workflows')
      .set(auth())
      .send({ roc_link: links.url(path), version: '1.0' });
    expect(registered.status).toBe(201);
    workflow = (registered.body as { uuid: string }).uuid;
  });

  afterAll(async () => {
    await t?.close();
    await Promise.all([github?.stop(), smtp?.stop()]);
    await links?.close();
  });

  it("sends the link in the mail's headers; its GET changes nothing, its POST ends the subscription", async () => {
    const channel = await http
      .post('/users/current/channels')
      .set(auth())
      .send({ type: 'email', target: 'alice@example.org' });
    expect(channel.status).toBe(201);
    clock += 20 * 60_000;
    await app.get(RefreshScheduler).tick(new Date(clock)); // first build: no event
    github.addRun('octo', 'unsub', 'ci.yml', {
      id: 200,
      conclusion: 'failure',
      startedAt: new Date(clock - HOUR),
    });
    clock += 20 * 60_000;
    await app.get(RefreshScheduler).tick(new Date(clock));
    expect(await app.get(DeliveryWorker).tick(new Date(clock))).toBe(1);
    expect(smtp.mails).toHaveLength(1);

    const fields = headerFields(smtp.mails[0].raw);
    expect(fields).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
    const link = /^List-Unsubscribe: <([^>\s]+)>$/m.exec(fields)?.[1] ?? '';
    expect(link).toMatch(/^https:\/\/status\.example\.org\/unsubscribe\/[\w-]+\.[\w-]+$/);
    const path = new URL(link).pathname;

    // A scanner's or a person's GET: a page with the button, the subscription still there.
    const page = await http.get(path);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.text).toContain(`<form class="sign-in" method="post" action="${path}">`);
    expect(page.text).toContain('<input type="hidden" name="List-Unsubscribe" value="One-Click">');
    expect(page.text).toContain('<strong>alice@example.org</strong>');
    expect(await subscriptions()).toEqual([workflow]);

    // Without the one-click body: refused, nothing changed.
    const bare = await http.post(path);
    expect(bare.status).toBe(400);
    expect(bare.text).toContain('List-Unsubscribe=One-Click');
    expect(await subscriptions()).toEqual([workflow]);

    // The mail provider's one click: multipart/form-data, no token, no cookie, no Origin.
    const done = await http.post(path).field('List-Unsubscribe', 'One-Click');
    expect(done.status).toBe(200);
    expect(done.text).toContain('Unsubscribed');
    expect(await subscriptions()).toEqual([]);
    // The channel is the user's to keep: only the subscription went.
    expect((await channels()).map((c) => c.events)).toEqual([['ALL']]);

    // Again, as the page's form sends it: the same answer, nothing more to change.
    const again = await http.post(path).type('form').send('List-Unsubscribe=One-Click');
    expect(again.status).toBe(200);
    expect((await http.get(path)).text).toContain('Nothing to do');
  });

  it('changes nothing for a link that was altered, signed under another secret, or expired', async () => {
    await http.post(`/workflows/${workflow}/subscribe`).set(auth()).expect(201);
    const [channel] = await channels();
    const target = {
      userId: aliceId,
      channelId: channel.id,
      list: { kind: 'workflow', workflowUuid: workflow },
    } as const;
    const good = new URL(app.get(UnsubscribeLinks).linkFor(BASE, target, clock)).pathname;
    const [payload, mac] = good.slice('/unsubscribe/'.length).split('.');
    const message = Buffer.from(payload, 'base64url').toString('utf8');
    const otherUser = Buffer.from(message.replace(`|${aliceId}|`, `|${aliceId + 1}|`)).toString('base64url');
    const flipped = `${mac.slice(0, -2)}${mac.endsWith('A') ? 'B' : 'A'}${mac.slice(-1)}`;
    const foreign = new UnsubscribeLinks({
      ...t.config,
      auth: { ...t.config.auth, jwtSecret: 'another-secret-'.repeat(3) },
    });
    const expired = app.get(UnsubscribeLinks).linkFor(BASE, target, clock - 61 * DAY);
    const refused: [string, number, string][] = [
      [`/unsubscribe/${otherUser}.${mac}`, 400, 'not valid'],
      [`/unsubscribe/${payload}.${flipped}`, 400, 'not valid'],
      [`/unsubscribe/${payload}`, 400, 'not valid'],
      [`/unsubscribe/${payload}.${mac}.x`, 400, 'not valid'],
      [new URL(foreign.linkFor(BASE, target, clock)).pathname, 400, 'not valid'],
      [new URL(expired).pathname, 403, 'expired'],
    ];
    for (const [path, status, says] of refused) {
      for (const answer of [
        await http.get(path),
        await http.post(path).type('form').send('List-Unsubscribe=One-Click'),
      ]) {
        expect([path, answer.status]).toEqual([path, status]);
        expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(answer.text).toContain(says);
      }
    }
    expect(await subscriptions()).toEqual([workflow]);
    await http.post(good).type('form').send('List-Unsubscribe=One-Click').expect(200);
    expect(await subscriptions()).toEqual([]);
  });

  it("turns FOLLOW_FAILED off on the mail's channel, and removes a channel that wanted nothing else", async () => {
    const made = await Promise.all(
      [{ events: ['ALL'] }, { events: ['FOLLOW_FAILED'] }].map(({ events }) =>
        http
          .post('/users/current/channels')
          .set(auth())
          .send({ type: 'email', target: 'owner@example.org', events }),
      ),
    );
    const [all, only] = made.map((response) => (response.body as { id: number }).id);
    for (const channelId of [all, only]) {
      const link = app
        .get(UnsubscribeLinks)
        .linkFor(BASE, { userId: aliceId, channelId, list: { kind: 'follow-failed' } }, clock);
      const path = new URL(link).pathname;
      expect((await http.get(path)).text).toContain('FOLLOW_FAILED');
      await http.post(path).type('form').send('List-Unsubscribe=One-Click').expect(200);
    }
    const left = await channels();
    expect(left.find((c) => c.id === all)?.events).toEqual([
      'BUILD_FAILED',
      'BUILD_RECOVERED',
      'TESTS_STOPPED',
      'SCHEDULE_DISABLED',
    ]);
    expect(left.find((c) => c.id === only)).toBeUndefined();
  });
});
