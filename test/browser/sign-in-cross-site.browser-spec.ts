import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { OidcOp } from '../fakes/oidc-op.js';
import { launchChromium, SCREENSHOTS } from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { freePort } from '../support/mariadb-server.mjs';
import { writeProvidersFile } from '../support/sign-in.js';

const CLIENT = { client_id: 'workflow-service', client_secret: 'op-secret-of-the-cross-site-0123456789' };

/**
 * Signing in at a provider on another site (API.md 15.1), in Chromium: the provider (oidc-provider)
 * is on `127.0.0.1`, the service is reached as `localhost`, which Chromium holds to be another
 * site. The redirect chain back from the provider is then cross-site, and a browser sends no
 * `SameSite=Strict` cookie along it: the first page after signing in must still show the person
 * signed in, without a click.
 */
describe('sign-in at a provider on another site, in a real browser', () => {
  let t: TestApp;
  let op: OidcOp;
  let browser: Browser;
  let file: { path: string; remove(): void };
  let service: string;

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
    // No PUBLIC_BASE_URL: the service builds its redirect URI from the name the browser used.
    service = `http://localhost:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    op = new OidcOp();
    op.people.set('bob-at-ls', { preferred_username: 'bob', email: 'bob@lifescience.example' });
    await op.start({ ...CLIENT, redirect_uris: [`${service}/oauth2/authorized/lslogin`] }, opPort);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await op?.stop();
    file?.remove();
  });

  it('lands signed in on the first page after the provider', async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${service}/status/sign-in?next=%2Fstatus%2Faccount`);
    await page.getByRole('link', { name: 'Sign in with LS Login' }).click();

    await page.waitForURL((url) => url.origin === op.issuer);
    await page.fill('input[name="login"]', 'bob-at-ls');
    await page.fill('input[name="password"]', 'any password');
    await page.click('button[type="submit"]');
    await page.waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached' });
    await page.click('button[type="submit"]');

    // Back on the service, past the redirect URI: the first page the person sees.
    await page.waitForURL((url) => url.origin === service && !url.pathname.startsWith('/oauth2/'));
    await page.screenshot({ path: `${SCREENSHOTS}/sign-in-cross-site.png`, fullPage: true });
    await expect(page.locator('header .who').textContent()).resolves.toMatch(/^Signed in as bob/);
    expect(new URL(page.url()).pathname).toBe('/status/account');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Your account');
    const cookies = await context.cookies(service);
    expect(cookies.find((cookie) => cookie.name === 'session')).toMatchObject({ sameSite: 'Strict' });
    await context.close();
  });
});
