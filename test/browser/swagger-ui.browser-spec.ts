import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { ADMIN, createTestApp, type TestApp } from '../support/create-test-app.js';

const CHROMIUM = '/usr/bin/chromium';
/** Screenshots for a person to look at after the run (test-results/ is not committed). */
const SCREENSHOTS = 'test-results/screenshots';

/**
 * Opens one operation by its deep link and returns its block, expanded. Swagger UI renders only the
 * operations near the viewport (Chromium 156 with Swagger UI 5.33: 8–10 blocks of a 900 px window),
 * so waiting for an operation's id without going there depends on how much the UI chose to render.
 */
async function openOperation(
  page: Page,
  baseUrl: string,
  tag: string,
  operationId: string,
): Promise<Locator> {
  await page.goto(`${baseUrl}/docs#/${tag}/${operationId}`);
  const operation = page.locator(`#operations-${tag}-${operationId}`);
  await operation.waitFor();
  await operation.scrollIntoViewIfNeeded();
  if (!(await operation.evaluate((block) => block.classList.contains('is-open')))) {
    await operation.locator('.opblock-summary').click();
  }
  await operation.locator('button.try-out__btn').waitFor();
  return operation;
}

describe('Swagger UI in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  const outsideRequests: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `${CHROMIUM} is missing: the browser test needs Debian's chromium (apt-get install -y chromium)`,
      );
    }
    t = await createTestApp();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('authorizes with a token from /api/v1/auth and runs "Try it out" on GET /users/current', async () => {
    const login = await t.http.post('/api/v1/auth').send(ADMIN).expect(200);
    const token = (login.body as { token: string }).token;

    const page = await browser.newPage();
    page.on('request', (request) => {
      if (!request.url().startsWith(t.baseUrl) && !request.url().startsWith('data:')) {
        outsideRequests.push(request.url());
      }
    });
    await page.setViewportSize({ width: 1280, height: 900 });
    const operation = await openOperation(page, t.baseUrl, 'users', 'users-get-current');
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: `${SCREENSHOTS}/swagger-ui-overview.png` });
    // The operation's own lock: the page's Authorize button is at its top, and scrolling there
    // leaves the operation far below, where Swagger UI no longer renders it.
    await operation.locator('button.authorization__btn').click();
    const bearer = page.locator('.auth-container').filter({ hasText: 'bearer' }).first();
    await bearer.locator('input').fill(token);
    await bearer.locator('button.authorize').click();
    await page.locator('button.btn-done').first().click();

    await operation.locator('button.try-out__btn').click();
    await operation.locator('button.execute').click();

    const live = operation.locator('.live-responses-table tr.response');
    await live.first().waitFor();
    expect((await live.locator('.response-col_status').first().innerText()).trim()).toBe('200');
    const body = await live.locator('.response-col_description pre.microlight').first().innerText();
    expect(JSON.parse(body)).toEqual({
      id: expect.any(Number),
      username: ADMIN.username,
      roles: ['admin'],
    });
    await operation.screenshot({ path: `${SCREENSHOTS}/swagger-ui-try-it-out.png` });
    expect(outsideRequests).toEqual([]);
    await page.close();
  });

  it('authorizes with an API key pasted alone (X-API-Key) and runs "Try it out" with it', async () => {
    const token = (await t.http.post('/api/v1/auth').send(ADMIN).expect(200)).body as { token: string };
    const made = await t.http
      .post('/users/current/apikeys')
      .set('Authorization', `Bearer ${token.token}`)
      .send({ name: 'swagger' })
      .expect(201);
    const key = (made.body as { key: string }).key;

    const page = await browser.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    const operation = await openOperation(page, t.baseUrl, 'users', 'users-get-current');
    // The operation's own lock: the page's Authorize button is at its top, and scrolling there
    // leaves the operation far below, where Swagger UI no longer renders it.
    await operation.locator('button.authorization__btn').click();
    const alone = page
      .locator('.auth-container')
      .filter({ has: page.locator('h4', { hasText: /^apiKeyHeader\b/ }) })
      .first();
    await alone.locator('input').fill(key);
    await alone.locator('button.authorize').click();
    await page.screenshot({ path: `${SCREENSHOTS}/swagger-ui-api-key.png` });
    await page.locator('button.btn-done').first().click();

    await operation.locator('button.try-out__btn').click();
    await operation.locator('button.execute').click();
    const live = operation.locator('.live-responses-table tr.response');
    await live.first().waitFor();
    expect((await live.locator('.response-col_status').first().innerText()).trim()).toBe('200');
    const body = await live.locator('.response-col_description pre.microlight').first().innerText();
    expect(JSON.parse(body)).toEqual({
      id: expect.any(Number),
      username: ADMIN.username,
      roles: ['admin'],
    });
    expect(await operation.locator('.curl-command').innerText()).toContain(`X-API-Key: ${key}`);
    await page.close();
  });
});
