import type { Browser } from 'playwright-core';
import { DataSource } from 'typeorm';
import { UnsubscribeLinks } from '../../src/notifications/unsubscribe-links.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { launchChromium, recordOutsideRequests, SCREENSHOTS } from '../support/browser.js';
import { seedVersion } from '../support/monitoring-seed.js';

/**
 * A mail's unsubscribe link opened in Chromium, as a person clicking it in a mail client does
 * (API.md 6.4): the page says what it stops, changes nothing until its button is pressed, and
 * the button unsubscribes with no token or cookie.
 */
describe('the unsubscribe page of a mail in a real browser', () => {
  let t: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    // A channel of type email needs SMTP_URL set; nothing is sent here.
    t = await createTestApp({ SMTP_URL: 'smtp://127.0.0.1:9', PUBLIC_BASE_URL: 'http://127.0.0.1:1' });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows what the link stops with a button, and unsubscribes only when it is pressed', async () => {
    const token = await t.login();
    const auth = { Authorization: `Bearer ${token}` };
    const user = (await t.http.get('/users/current').set(auth).expect(200)).body as { id: number };
    const channel = await t.http
      .post('/users/current/channels')
      .set(auth)
      .send({ type: 'email', target: 'alice@example.org' })
      .expect(201);
    const w = await seedVersion(t.app.get(DataSource), { public: true, suites: [] });
    await t.http.post(`/workflows/${w.workflowUuid}/subscribe`).set(auth).expect(201);
    const subscribed = async (): Promise<number> =>
      ((await t.http.get('/users/current/subscriptions').set(auth)).body as { items: unknown[] }).items
        .length;
    const link = t.app.get(UnsubscribeLinks).linkFor(
      t.baseUrl,
      {
        userId: user.id,
        channelId: (channel.body as { id: number }).id,
        list: { kind: 'workflow', workflowUuid: w.workflowUuid },
      },
      Date.now(),
    );

    const page = await browser.newPage({ viewport: { width: 800, height: 600 } });
    const outside = recordOutsideRequests(page, t.baseUrl);
    expect((await page.goto(link))?.status()).toBe(200);
    await expect(page.title()).resolves.toBe('Unsubscribe · Workflow test status');
    const question = (await page.locator('p.summary').textContent()) ?? '';
    expect(question).toBe(`Stop the notifications of workflow ${w.workflowUuid} to alice@example.org?`);
    await page.screenshot({ path: `${SCREENSHOTS}/mail-unsubscribe.png`, fullPage: true });
    expect(await subscribed()).toBe(1);

    await Promise.all([page.waitForURL(link), page.getByRole('button', { name: 'Unsubscribe' }).click()]);
    await page.waitForSelector('p[role="status"]');
    await expect(page.title()).resolves.toBe('Unsubscribed · Workflow test status');
    expect(await page.locator('p[role="status"]').textContent()).toBe(
      `Done: the notifications of workflow ${w.workflowUuid} no longer come to alice@example.org.`,
    );
    await page.screenshot({ path: `${SCREENSHOTS}/mail-unsubscribe-done.png`, fullPage: true });
    expect(await subscribed()).toBe(0);
    expect(outside).toEqual([]);
  });
});
