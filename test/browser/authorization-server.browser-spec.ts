import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { launchChromium, recordOutsideRequests, SCREENSHOTS } from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { authorizeQuery, pkcePair, tokenRequest, type RegisteredClient } from '../support/oauth-app.js';

const PASSWORD = 'a-test-password';

/**
 * An application sends a person to the consent page in Chromium (API.md 15): they sign in, read
 * what it asks for, approve, and the browser lands on the application's redirect URI with a code
 * the application exchanges. The account page lists the application and the approval, whose
 * Revoke button stops the application's token.
 */
describe('letting an application act for you, in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let app: http.Server;
  let callback: string;

  beforeAll(async () => {
    t = await createTestApp();
    browser = await launchChromium();
    // The application's own server: it only has to be there for the browser to land on.
    app = http.createServer((_request, response) => response.end('the application'));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    callback = `http://127.0.0.1:${(app.address() as AddressInfo).port}/callback`;
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => app?.close(resolve));
    await t?.close();
  });

  it('signs in, shows the consent page, sends the browser back with a code that gives a token, and revokes it from the account page', async () => {
    const admin = await t.login();
    await t.http
      .post('/api/v1/users')
      .set('Authorization', `Bearer ${admin}`)
      .send({ username: 'carol', password: PASSWORD, roles: ['user'] })
      .expect(201);
    const carol = await t.login('carol', PASSWORD);
    const made = await t.http
      .post('/users/current/clients')
      .set('Authorization', `Bearer ${carol}`)
      .send({ name: 'Workflow dashboard', redirect_uris: [callback], confidential: false })
      .expect(201);
    const client = made.body as RegisteredClient;
    const pkce = pkcePair();
    const query = authorizeQuery(client, pkce, { scope: 'workflow.read user.workflow.read', state: 'st-42' });

    const page = await browser.newPage({ viewport: { width: 900, height: 700 } });
    const outside = recordOutsideRequests(page, t.baseUrl);
    await page.goto(`${t.baseUrl}/oauth2/authorize?${query}`);
    expect(new URL(page.url()).pathname).toBe('/status/sign-in');
    await page.fill('#username', 'carol');
    await page.fill('#password', PASSWORD);
    await page.click('form.sign-in button[type=submit]');
    await page.waitForURL((url) => url.pathname === '/oauth2/authorize');
    await expect(page.locator('h1').textContent()).resolves.toBe('Let Workflow dashboard act for you?');
    const scopes = await page.locator('ul.scopes li').allTextContents();
    expect(scopes).toEqual([
      'Read the workflows you may see, with their suites, instances, builds and status workflow.read',
      'Read the list of your workflows user.workflow.read',
    ]);
    await page.screenshot({ path: `${SCREENSHOTS}/consent.png`, fullPage: true });

    await page.click('button.approve');
    await page.waitForURL((url) => url.href.startsWith(callback));
    const landed = new URL(page.url());
    expect(landed.searchParams.get('state')).toBe('st-42');
    const tokens = await tokenRequest(t.baseUrl, {
      grant_type: 'authorization_code',
      code: landed.searchParams.get('code') ?? '',
      redirect_uri: callback,
      code_verifier: pkce.verifier,
      client_id: client.client_id,
    });
    expect(tokens.status).toBe(200);
    const read = await fetch(`${t.baseUrl}/workflows`, {
      headers: { authorization: `Bearer ${tokens.body.access_token as string}` },
    });
    expect(read.status).toBe(200);
    // Only the application's own server was reached besides the service.
    expect(outside.filter((url) => !url.startsWith(callback))).toEqual([]);

    await page.goto(`${t.baseUrl}/status/account`);
    await expect(page.locator('#applications tbody th').allTextContents()).resolves.toEqual([
      'Workflow dashboard',
    ]);
    await page.screenshot({ path: `${SCREENSHOTS}/account-applications.png`, fullPage: true });

    // The approval is listed too, and its Revoke button (a same-origin form) stops the token.
    await expect(page.locator('#authorizations tbody th').allTextContents()).resolves.toEqual([
      'Workflow dashboard',
    ]);
    await expect(page.locator('#authorizations tbody td[data-label="May"]').textContent()).resolves.toBe(
      'workflow.readuser.workflow.read',
    );
    // Each scope stays whole in the narrow "May" column, on a desktop and on a phone: an inline
    // element the browser broke across lines has one box per line.
    const linesOfScopes = (): Promise<number[]> =>
      page
        .locator('#authorizations td[data-label="May"] code')
        .evaluateAll((scopes) => scopes.map((scope) => scope.getClientRects().length));
    await expect(linesOfScopes()).resolves.toEqual([1, 1]);
    await page.locator('#authorizations').screenshot({ path: `${SCREENSHOTS}/account-authorizations.png` });
    await page.setViewportSize({ width: 360, height: 700 });
    await expect(linesOfScopes()).resolves.toEqual([1, 1]);
    await page
      .locator('#authorizations')
      .screenshot({ path: `${SCREENSHOTS}/account-authorizations-phone.png` });
    await page.setViewportSize({ width: 900, height: 700 });
    await page.click('#authorizations button[type=submit]');
    await page.waitForURL(`${t.baseUrl}/status/account#authorizations`);
    await expect(page.locator('#authorizations p.muted').textContent()).resolves.toBe(
      'You have let no application act for you.',
    );
    const after = await fetch(`${t.baseUrl}/workflows`, {
      headers: { authorization: `Bearer ${tokens.body.access_token as string}` },
    });
    expect(after.status).toBe(401);
    await page.close();
  });
});
