import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { OidcOp } from '../fakes/oidc-op.js';
import { launchChromium, SCREENSHOTS } from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { freePort } from '../support/mariadb-server.mjs';
import { writeProvidersFile } from '../support/sign-in.js';

/** axe-core from node_modules, injected into the page by the test (the pages themselves run no script). */
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const CLIENT = { client_id: 'workflow-service', client_secret: 'op-secret-of-the-browser-0123456789' };

/**
 * Signing in with an OpenID Connect provider in Chromium (API.md 15): "Sign in with …" on the
 * sign-in form, the provider's (oidc-provider's) login and consent pages, and back, signed in, on
 * the account page, which shows the identity.
 */
describe('sign-in with an OpenID provider in a real browser', () => {
  let t: TestApp;
  let op: OidcOp;
  let browser: Browser;
  let file: { path: string; remove(): void };

  beforeAll(async () => {
    const opPort = await freePort();
    file = writeProvidersFile(`providers:
  lslogin:
    type: oidc
    label: LS Login
    issuer: http://127.0.0.1:${opPort}
    client_id: ${CLIENT.client_id}
    client_secret: ${CLIENT.client_secret}
`);
    t = await createTestApp({ IDENTITY_PROVIDERS_FILE: file.path });
    op = new OidcOp();
    op.people.set('alice-at-ls', { preferred_username: 'alice', email: 'alice@lifescience.example' });
    await op.start({ ...CLIENT, redirect_uris: [`${t.baseUrl}/oauth2/authorized/lslogin`] }, opPort);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await op?.stop();
    file?.remove();
  });

  const axe = async (page: Page): Promise<unknown[]> => {
    await page.addScriptTag({ content: AXE });
    const result = await page.evaluate<{ violations: unknown[] }>(
      `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })`,
    );
    return result.violations;
  };

  it('signs in through the pages and shows the identity on the account page', async () => {
    // bypassCSP: the test injects axe-core, which the pages' Content-Security-Policy would refuse.
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1100, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/status/sign-in?next=%2Fstatus%2Faccount`);
    expect(await axe(page)).toEqual([]);
    await page.getByRole('link', { name: 'Sign in with LS Login' }).click();

    // The provider's own login and consent pages.
    await page.waitForURL((url) => url.origin === op.issuer);
    await page.fill('input[name="login"]', 'alice-at-ls');
    await page.fill('input[name="password"]', 'any password');
    await page.click('button[type="submit"]');
    await page.waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached' });
    await page.click('button[type="submit"]');

    await page.waitForURL(`${t.baseUrl}/status/account`);
    await expect(page.locator('header .who strong').textContent()).resolves.toBe('alice');
    const row = page.locator('table tbody tr').first();
    await expect(row.locator('th').textContent()).resolves.toBe('LS Login');
    await expect(row.locator('td').nth(0).textContent()).resolves.toBe('alice');
    await expect(row.locator('td').nth(1).textContent()).resolves.toBe('alice@lifescience.example');
    await expect(page.getByText('your only way in').count()).resolves.toBe(1);
    expect(await axe(page)).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/sign-in-account.png`, fullPage: true });
    const cookies = await context.cookies(t.baseUrl);
    expect(cookies.find((cookie) => cookie.name === 'session')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
    });
    await context.close();
  });
});
