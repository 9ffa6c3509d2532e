import { SchedulerRegistry } from '@nestjs/schedule';
import { DataSource, IsNull, LessThan, Like, Not } from 'typeorm';
import { ExpiryJanitor, EXPIRY_BATCH } from '../../src/auth/expiry.janitor.js';
import { SignInFlowEntity } from '../../src/auth/identity/entities/sign-in-flow.entity.js';
import { OAuthGrantEntity } from '../../src/authorization-server/entities/oauth-grant.entity.js';
import { OAuthTokenEntity } from '../../src/authorization-server/entities/oauth-token.entity.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import {
  authorizeQuery,
  consent,
  consentFields,
  pkcePair,
  signInCookie,
  tokenRequest,
  type RegisteredClient,
} from '../support/oauth-app.js';
import { captureQueries, fullScansOf, isPlannable } from '../support/query-plans.js';
import { crateZip } from '../support/registry.js';

const PASSWORD = 'a-test-password';
const CALLBACK = 'https://app.example.org/oauth/callback';

/** Statistics as a server that has seen the rows would have them (InnoDB updates its own later). */
async function analyzeOnMariaDb(dataSource: DataSource): Promise<void> {
  if (testDatabase() === 'mariadb') {
    await dataSource.query('ANALYZE TABLE oauth_clients, oauth_grants, oauth_tokens, sign_in_flows');
  }
}

/** The service as an OAuth2 authorization server for other applications (API.md 15), driven over HTTP as an application and a browser drive it. */
describe(`the authorization server (${testDatabase()})`, () => {
  let t: TestApp;
  let base: string;
  let links: LinkServer;
  let alice: { token: string; cookie: string };
  let bob: { token: string; cookie: string };
  let privateWorkflow: string;

  const register = async (
    owner: { token: string },
    body: Record<string, unknown> = { name: 'Dashboard', redirect_uris: [CALLBACK], confidential: false },
  ): Promise<RegisteredClient> => {
    const reply = await t.http
      .post('/users/current/clients')
      .set('Authorization', `Bearer ${owner.token}`)
      .send(body);
    expect(reply.status).toBe(201);
    return reply.body as RegisteredClient;
  };

  /** The whole flow for a person, up to the token reply: consent, code, exchange with PKCE. */
  const tokensFor = async (person: { cookie: string }, client: RegisteredClient, scope?: string) => {
    const pkce = pkcePair();
    const query = authorizeQuery(client, pkce, scope === undefined ? {} : { scope });
    const redirect = await consent(base, person.cookie, query);
    const code = redirect.searchParams.get('code') ?? '';
    const reply = await tokenRequest(base, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirect_uris[0],
      code_verifier: pkce.verifier,
      client_id: client.client_id,
      ...(client.client_secret ? { client_secret: client.client_secret } : {}),
    });
    expect(reply.status).toBe(200);
    return reply.body as { access_token: string; refresh_token: string; scope: string; expires_in: number };
  };

  const api = (path: string, token: string) =>
    fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    t = await createTestApp();
    base = t.baseUrl;
    links = await LinkServer.start();
    const admin = await t.login();
    const people: Record<string, { token: string; cookie: string }> = {};
    for (const username of ['alice', 'bob']) {
      await t.http
        .post('/api/v1/users')
        .set('Authorization', `Bearer ${admin}`)
        .send({ username, password: PASSWORD, roles: ['user'] })
        .expect(201);
      people[username] = {
        token: await t.login(username, PASSWORD),
        cookie: await signInCookie(base, username, PASSWORD),
      };
    }
    alice = people.alice;
    bob = people.bob;
    const link = links.route('/alice.zip', { kind: 'bytes', body: crateZip({ marker: 'alice' }) });
    const registered = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${alice.token}`)
      .send({ roc_link: link, version: '1' });
    expect(registered.status).toBe(201);
    privateWorkflow = registered.body.uuid as string;
  });

  afterAll(async () => {
    await links?.close();
    await t?.close();
  });

  describe('registering applications (/users/current/clients)', () => {
    it('answers a confidential client its secret once, a public one none, and lists them without secrets', async () => {
      const confidential = await register(alice, {
        name: 'Server app',
        redirect_uris: [CALLBACK],
        confidential: true,
      });
      expect(confidential.client_id).toMatch(/^[A-Za-z0-9_-]{24}$/);
      expect(confidential.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const pub = await register(alice, {
        name: 'Browser app',
        redirect_uris: ['http://127.0.0.1:8123/cb'],
        confidential: false,
      });
      expect(pub.client_secret).toBeUndefined();
      const listed = await t.http.get('/users/current/clients').set('Authorization', `Bearer ${alice.token}`);
      expect(listed.status).toBe(200);
      const mine = (listed.body.items as Record<string, unknown>[]).filter((item) =>
        [confidential.client_id, pub.client_id].includes(item.client_id as string),
      );
      expect(mine).toEqual([
        {
          client_id: confidential.client_id,
          name: 'Server app',
          redirect_uris: [CALLBACK],
          confidential: true,
          created: expect.any(String),
        },
        {
          client_id: pub.client_id,
          name: 'Browser app',
          redirect_uris: ['http://127.0.0.1:8123/cb'],
          confidential: false,
          created: expect.any(String),
        },
      ]);
      expect(JSON.stringify(listed.body)).not.toContain(confidential.client_secret);
      // Another person sees none of them, and cannot delete them.
      const others = await t.http.get('/users/current/clients').set('Authorization', `Bearer ${bob.token}`);
      expect(others.body.items).toEqual([]);
      await t.http
        .delete(`/users/current/clients/${pub.client_id}`)
        .set('Authorization', `Bearer ${bob.token}`)
        .expect(404);
    });

    it.each([
      [{ name: 'x', redirect_uris: ['http://app.example.org/cb'] }, 'redirect_uris[0]'],
      [{ name: 'x', redirect_uris: [`${CALLBACK}#frag`] }, 'redirect_uris[0]'],
      [{ name: 'x', redirect_uris: ['/relative'] }, 'redirect_uris[0]'],
      [{ name: 'x', redirect_uris: [] }, 'redirect_uris'],
      [{ name: 'x', redirect_uris: CALLBACK }, 'redirect_uris'],
      [{ redirect_uris: [CALLBACK] }, 'name'],
      [{ name: 'x', redirect_uris: [CALLBACK], confidential: 'yes' }, 'confidential'],
    ])('refuses %j with a 400 naming %s', async (body, field) => {
      const reply = await t.http
        .post('/users/current/clients')
        .set('Authorization', `Bearer ${alice.token}`)
        .send(body);
      expect(reply.status).toBe(400);
      expect(reply.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect((reply.body.errors as { field: string }[])[0].field).toBe(field);
    });

    it('answers 400 for a client id that cannot be one, 404 for one nobody has', async () => {
      const auth = { Authorization: `Bearer ${alice.token}` };
      await t.http.delete('/users/current/clients/not%20an%20id').set(auth).expect(400);
      await t.http.delete('/users/current/clients/AAAAAAAAAAAAAAAAAAAAAAAA').set(auth).expect(404);
    });
  });

  describe('the account page (/status/account)', () => {
    const post = (
      path: string,
      fields: Record<string, string>,
      headers: Record<string, string> = { origin: base },
    ) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: bob.cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fields).toString(),
      });

    it('sends a browser without a session to the sign-in form', async () => {
      const reply = await fetch(`${base}/status/account`, { redirect: 'manual' });
      expect(reply.status).toBe(303);
      expect(reply.headers.get('location')).toBe('/status/sign-in?next=%2Fstatus%2Faccount');
    });

    it('registers an application from its form (the secret shown once), lists it, and deletes it', async () => {
      const made = await post('/status/account/clients', {
        name: 'Notebook',
        redirect_uris: `${CALLBACK}\r\n\r\nhttp://localhost:8888/cb\r\n`,
        confidential: 'true',
      });
      expect(made.status).toBe(201);
      const page = await made.text();
      const clientId = /client id: <code>([A-Za-z0-9_-]+)<\/code>/.exec(page)?.[1] ?? '';
      expect(page).toMatch(/<code class="secret">[A-Za-z0-9_-]{43}<\/code>/);
      const listed = await t.http.get('/users/current/clients').set('Authorization', `Bearer ${bob.token}`);
      expect(listed.body.items).toContainEqual(
        expect.objectContaining({
          client_id: clientId,
          name: 'Notebook',
          redirect_uris: [CALLBACK, 'http://localhost:8888/cb'],
          confidential: true,
        }),
      );
      const account = await fetch(`${base}/status/account`, { headers: { cookie: bob.cookie } });
      expect(await account.text()).toContain(`<code>${clientId}</code>`);
      const refused = await post(
        `/status/account/clients/${clientId}/delete`,
        {},
        { origin: 'https://evil.example' },
      );
      expect(refused.status).toBe(403);
      const deleted = await post(`/status/account/clients/${clientId}/delete`, {});
      expect(deleted.status).toBe(303);
      expect(deleted.headers.get('location')).toBe('/status/account#applications');
      const after = await t.http.get('/users/current/clients').set('Authorization', `Bearer ${bob.token}`);
      expect((after.body.items as { client_id: string }[]).map((item) => item.client_id)).not.toContain(
        clientId,
      );
    });

    it('shows a refused registration as a page saying why, with a way back', async () => {
      const reply = await post('/status/account/clients', {
        name: 'Bad',
        redirect_uris: 'http://app.example.org/cb',
      });
      expect(reply.status).toBe(400);
      const page = await reply.text();
      expect(page).toContain('The application was not registered.');
      expect(page).toContain('must be https');
      expect(page).toContain('href="/status/account#applications"');
    });
  });

  describe('the authorization code flow with PKCE', () => {
    it('sends a browser without a session to the sign-in form, which comes back to the consent page', async () => {
      const client = await register(alice);
      const query = authorizeQuery(client, pkcePair());
      const first = await fetch(`${base}/oauth2/authorize?${query}`, { redirect: 'manual' });
      expect(first.status).toBe(302);
      const signIn = new URL(first.headers.get('location') ?? '', base);
      expect(signIn.pathname).toBe('/status/sign-in');
      const next = signIn.searchParams.get('next') ?? '';
      expect(next).toBe(`/oauth2/authorize?${query}`);
      const form = await fetch(`${base}${signIn.pathname}${signIn.search}`);
      expect(await form.text()).toContain(`name="next" value="${next.replace(/&/g, '&amp;')}"`);
      const signedIn = await fetch(`${base}/status/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username: 'bob', password: PASSWORD, next }).toString(),
      });
      expect(signedIn.status).toBe(303);
      expect(signedIn.headers.get('location')).toBe(next);
      const cookie = (
        signedIn.headers.getSetCookie().find((line) => line.startsWith('session=')) ?? ''
      ).split(';')[0];
      const page = await fetch(`${base}${next}`, { headers: { cookie }, redirect: 'manual' });
      expect(page.status).toBe(200);
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.headers.get('referrer-policy')).toBe('same-origin');
      // The form's redirect goes to the application: the page's form-action lets it (as a browser enforces).
      expect(page.headers.get('content-security-policy')).toContain(
        "form-action 'self' https://app.example.org;",
      );
      const html = await page.text();
      expect(html).toContain('<h1>Let <bdi>Dashboard</bdi> act for you?</h1>');
      expect(html).toContain('registered here by <bdi>alice</bdi>');
      expect(html).toContain('<code>workflow.read</code>');
      expect(html).not.toContain('registry.');
      expect(html).not.toMatch(/<script/i);
    });

    it('issues a code on approval, exchanged once with its PKCE verifier for tokens acting as the user within the scopes', async () => {
      const client = await register(alice, {
        name: 'Reader',
        redirect_uris: [CALLBACK],
        confidential: false,
      });
      const pkce = pkcePair();
      const query = authorizeQuery(client, pkce, {
        scope: 'workflow.read user.workflow.read',
        state: 'xyz 1/2',
      });
      const redirect = await consent(base, alice.cookie, query);
      expect(`${redirect.origin}${redirect.pathname}`).toBe(CALLBACK);
      expect(redirect.searchParams.get('state')).toBe('xyz 1/2');
      expect(redirect.searchParams.get('iss')).toBe(base);
      const code = redirect.searchParams.get('code') ?? '';
      expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const reply = await fetch(`${base}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: CALLBACK,
          code_verifier: pkce.verifier,
          client_id: client.client_id,
        }).toString(),
      });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('cache-control')).toBe('no-store');
      const tokens = (await reply.json()) as Record<string, unknown>;
      expect(tokens).toEqual({
        access_token: expect.stringMatching(/^wfa_[A-Za-z0-9_-]{43}$/),
        token_type: 'Bearer',
        expires_in: 3600,
        scope: 'workflow.read user.workflow.read',
        refresh_token: expect.stringMatching(/^wfar_[A-Za-z0-9_-]{43}$/),
      });
      const access = tokens.access_token as string;
      // Alice's private workflow, read as Alice.
      const read = await api(`/workflows/${privateWorkflow}`, access);
      expect(read.status).toBe(200);
      // Within the scopes only: no write, none of the account's own routes.
      const put = await fetch(`${base}/workflows/${privateWorkflow}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'taken over' }),
      });
      expect(put.status).toBe(403);
      expect(put.headers.get('www-authenticate')).toBe(
        'Bearer error="insufficient_scope", scope="workflow.write"',
      );
      for (const path of [
        '/users/current',
        '/users/current/clients',
        '/users/current/apikeys',
        '/status/account',
      ]) {
        expect({ path, status: (await api(path, access)).status }).toEqual({ path, status: 403 });
      }
      // Sent as the session cookie, it is not turned into a session of the person.
      const asCookie = await fetch(`${base}/workflows/${privateWorkflow}`, {
        headers: { cookie: `session=${access}` },
      });
      expect(asCookie.status).toBe(200);
      expect(asCookie.headers.getSetCookie()).toEqual([]);
      // The code was single use: the replay fails, and revokes what it gave.
      const replay = await tokenRequest(base, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: CALLBACK,
        code_verifier: pkce.verifier,
        client_id: client.client_id,
      });
      expect(replay).toEqual({
        status: 400,
        body: { error: 'invalid_grant', error_description: expect.stringContaining('used already') },
      });
      expect((await api(`/workflows/${privateWorkflow}`, access)).status).toBe(401);
      const refreshed = await tokenRequest(base, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token as string,
        client_id: client.client_id,
      });
      expect(refreshed.body.error).toBe('invalid_grant');
    });

    it("reads the person's own /users/current routes within user.profile and user.workflow.read, and writes none of them", async () => {
      const client = await register(alice);
      const profile = (await tokensFor(alice, client, 'user.profile')).access_token;
      const me = await api('/users/current', profile);
      expect(me.status).toBe(200);
      expect(await me.json()).toEqual({ id: expect.any(Number), username: 'alice', roles: ['user'] });
      expect((await api('/users/current/notifications', profile)).status).toBe(200);
      const noList = await api('/users/current/workflows', profile);
      expect(noList.status).toBe(403);
      expect(noList.headers.get('www-authenticate')).toBe(
        'Bearer error="insufficient_scope", scope="user.workflow.read"',
      );
      const lists = (await tokensFor(alice, client, 'user.workflow.read')).access_token;
      const mine = await api('/users/current/workflows', lists);
      expect(mine.status).toBe(200);
      expect(((await mine.json()) as { items: { uuid: string }[] }).items.map((item) => item.uuid)).toContain(
        privateWorkflow,
      );
      expect((await api('/users/current/subscriptions', lists)).status).toBe(200);
      const noProfile = await api('/users/current', lists);
      expect(noProfile.status).toBe(403);
      expect(noProfile.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(noProfile.headers.get('www-authenticate')).toBe(
        'Bearer error="insufficient_scope", scope="user.profile"',
      );
      // Writes: LifeMonitor's user.workflow.write is no scope a person grants here, so registering stays the account's.
      const everything = (await tokensFor(alice, client)).access_token;
      const register_ = await fetch(`${base}/users/current/workflows`, {
        method: 'POST',
        headers: { authorization: `Bearer ${everything}`, 'content-type': 'application/json' },
        body: JSON.stringify({ roc_link: 'http://127.0.0.1:9/x.zip', version: '9' }),
      });
      expect(register_.status).toBe(403);
      const markRead = await fetch(`${base}/users/current/notifications`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${everything}`, 'content-type': 'application/json' },
        body: JSON.stringify({ items: [] }),
      });
      expect(markRead.status).toBe(403);
    });

    it("acts as the person who approved: another person's token does not see Alice's private workflow", async () => {
      const client = await register(alice);
      const tokens = await tokensFor(bob, client, 'workflow.read');
      expect((await api(`/workflows/${privateWorkflow}`, tokens.access_token)).status).toBe(404);
    });

    it('rotates refresh tokens, and a refresh token used twice revokes every token of its grant', async () => {
      const client = await register(alice);
      const first = await tokensFor(alice, client);
      const second = await tokenRequest(base, {
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token,
        client_id: client.client_id,
        scope: 'workflow.read',
      });
      expect(second.status).toBe(200);
      expect(second.body.scope).toBe('workflow.read');
      expect(second.body.refresh_token).not.toBe(first.refresh_token);
      const third = await tokenRequest(base, {
        grant_type: 'refresh_token',
        refresh_token: second.body.refresh_token as string,
        client_id: client.client_id,
      });
      // A narrower access token does not narrow the grant: the next refresh has every scope approved.
      expect(third.body.scope).toBe(first.scope);
      const newest = third.body.access_token as string;
      expect((await api(`/workflows/${privateWorkflow}`, newest)).status).toBe(200);
      // The spent refresh token comes again (stolen, say): the whole family is revoked.
      const reused = await tokenRequest(base, {
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token,
        client_id: client.client_id,
      });
      expect(reused).toEqual({
        status: 400,
        body: {
          error: 'invalid_grant',
          error_description: expect.stringContaining('every token of its grant is revoked'),
        },
      });
      expect((await api(`/workflows/${privateWorkflow}`, newest)).status).toBe(401);
      expect((await api(`/workflows/${privateWorkflow}`, first.access_token)).status).toBe(401);
      const latest = await tokenRequest(base, {
        grant_type: 'refresh_token',
        refresh_token: third.body.refresh_token as string,
        client_id: client.client_id,
      });
      expect(latest.body.error).toBe('invalid_grant');
    });

    it('refuses a refresh asking for a scope beyond the grant', async () => {
      const client = await register(alice);
      const tokens = await tokensFor(alice, client, 'workflow.read');
      const wider = await tokenRequest(base, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: client.client_id,
        scope: 'workflow.read workflow.write',
      });
      expect(wider).toEqual({
        status: 400,
        body: { error: 'invalid_scope', error_description: expect.any(String) },
      });
    });

    it('authenticates a confidential client by its secret, in the body or by HTTP Basic, and counts a wrong one', async () => {
      const client = await register(alice, { name: 'Server', redirect_uris: [CALLBACK], confidential: true });
      const secret = client.client_secret ?? '';
      const redirect = await consent(base, alice.cookie, authorizeQuery(client, undefined));
      const code = redirect.searchParams.get('code') ?? '';
      const exchange = (headers: Record<string, string>, extra: Record<string, string>) =>
        tokenRequest(
          base,
          { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, ...extra },
          headers,
        );
      expect(await exchange({}, { client_id: client.client_id })).toEqual({
        status: 401,
        body: { error: 'invalid_client', error_description: expect.any(String) },
      });
      expect((await exchange({}, { client_id: client.client_id, client_secret: `${secret}x` })).status).toBe(
        401,
      );
      const basic = `Basic ${Buffer.from(`${client.client_id}:${secret}`).toString('base64')}`;
      // Without a code_challenge in the request, a verifier is refused (RFC 9700 2.1.1).
      expect(
        (await exchange({ authorization: basic }, { code_verifier: pkcePair().verifier })).body.error,
      ).toBe('invalid_grant');
      const good = await exchange({ authorization: basic }, {});
      expect(good.status).toBe(200);
      expect(JSON.stringify(good.body)).not.toContain(secret);
    });

    it('refuses a code with a redirect_uri that differs at all, another client, or a verifier that does not match', async () => {
      const client = await register(alice, {
        name: 'Two',
        redirect_uris: [CALLBACK, `${CALLBACK}/2`],
        confidential: false,
      });
      const other = await register(bob);
      const pkce = pkcePair();
      const redirect = await consent(base, alice.cookie, authorizeQuery(client, pkce));
      const code = redirect.searchParams.get('code') ?? '';
      const attempt = (fields: Record<string, string>) =>
        tokenRequest(base, {
          grant_type: 'authorization_code',
          code,
          redirect_uri: CALLBACK,
          code_verifier: pkce.verifier,
          client_id: client.client_id,
          ...fields,
        });
      const wrong: Record<string, string>[] = [
        { redirect_uri: `${CALLBACK}/` },
        { redirect_uri: `${CALLBACK}/2` },
        { redirect_uri: CALLBACK.toUpperCase() },
        { redirect_uri: CALLBACK.replace('/oauth/', '/OAuth/') },
        { client_id: other.client_id },
        { code_verifier: pkcePair().verifier },
        { code_verifier: 'short' },
        { code_verifier: '' },
      ];
      for (const fields of wrong) {
        const reply = await attempt(fields);
        expect({ fields, status: reply.status, error: reply.body.error }).toEqual({
          fields,
          status: 400,
          error: 'invalid_grant',
        });
      }
      // None of them spent the code.
      expect((await attempt({})).status).toBe(200);
    });

    it('answers an expired code (60 s) as invalid_grant', async () => {
      const client = await register(alice);
      const pkce = pkcePair();
      const redirect = await consent(base, alice.cookie, authorizeQuery(client, pkce));
      const dataSource = t.app.get(DataSource);
      // The code's clock, moved back rather than the test waiting a minute.
      await dataSource
        .getRepository(OAuthGrantEntity)
        .update({ codeUsedAt: IsNull() }, { expiresAt: new Date(Date.now() - 1000) });
      const reply = await tokenRequest(base, {
        grant_type: 'authorization_code',
        code: redirect.searchParams.get('code') ?? '',
        redirect_uri: CALLBACK,
        code_verifier: pkce.verifier,
        client_id: client.client_id,
      });
      expect(reply.body).toEqual({
        error: 'invalid_grant',
        error_description: expect.stringContaining('expired'),
      });
    });

    it('stops every token of an application at once when its owner deletes it', async () => {
      const client = await register(alice);
      const tokens = await tokensFor(bob, client, 'workflow.read');
      expect((await api('/workflows', tokens.access_token)).status).toBe(200);
      await t.http
        .delete(`/users/current/clients/${client.client_id}`)
        .set('Authorization', `Bearer ${alice.token}`)
        .expect(204);
      expect((await api('/workflows', tokens.access_token)).status).toBe(401);
      const refreshed = await tokenRequest(base, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: client.client_id,
      });
      expect(refreshed.status).toBe(401);
    });
  });

  describe('the approvals a person gave (/users/current/authorizations)', () => {
    const approvals = async (person: { token: string }) => {
      const reply = await t.http
        .get('/users/current/authorizations')
        .set('Authorization', `Bearer ${person.token}`);
      expect(reply.status).toBe(200);
      return reply.body.items as Record<string, unknown>[];
    };

    it("lists each application once with its scopes, and revoking stops its access and refresh tokens at once, not anyone else's", async () => {
      const client = await register(alice, {
        name: 'Lab notebook',
        redirect_uris: [CALLBACK],
        confidential: false,
      });
      const first = await tokensFor(bob, client, 'workflow.read');
      const second = await tokensFor(bob, client, 'user.profile');
      const alices = await tokensFor(alice, client, 'workflow.read');
      const listed = (await approvals(bob)).filter((item) => item.client_id === client.client_id);
      expect(listed).toEqual([
        {
          client_id: client.client_id,
          client_name: 'Lab notebook',
          scopes: ['workflow.read', 'user.profile'],
          granted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          last_used_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        },
      ]);
      // An application's token never reaches the account's approvals.
      expect((await api('/users/current/authorizations', first.access_token)).status).toBe(403);
      const revoked = await t.http
        .delete(`/users/current/authorizations/${client.client_id}`)
        .set('Authorization', `Bearer ${bob.token}`);
      expect(revoked.status).toBe(204);
      for (const tokens of [first, second]) {
        expect((await api('/workflows', tokens.access_token)).status).toBe(401);
        const refreshed = await tokenRequest(base, {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: client.client_id,
        });
        expect(refreshed.body.error).toBe('invalid_grant');
      }
      expect((await approvals(bob)).map((item) => item.client_id)).not.toContain(client.client_id);
      // Alice's approval of the same application is hers: untouched.
      expect((await api('/workflows', alices.access_token)).status).toBe(200);
      expect((await approvals(alice)).map((item) => item.client_id)).toContain(client.client_id);
      const again = await t.http
        .delete(`/users/current/authorizations/${client.client_id}`)
        .set('Authorization', `Bearer ${bob.token}`);
      expect(again.status).toBe(404);
      expect(again.headers['content-type']).toMatch(/^application\/problem\+json/);
      const bad = await t.http
        .delete('/users/current/authorizations/not%20one')
        .set('Authorization', `Bearer ${bob.token}`);
      expect(bad.status).toBe(400);
    });

    it('lists them on the account page, whose Revoke form (same origin only) revokes', async () => {
      const client = await register(alice, {
        name: 'Status board',
        redirect_uris: [CALLBACK],
        confidential: false,
      });
      const tokens = await tokensFor(bob, client, 'workflow.read');
      const page = await (await fetch(`${base}/status/account`, { headers: { cookie: bob.cookie } })).text();
      expect(page).toContain('Applications you let act for you');
      expect(page).toContain(`<code>${client.client_id}</code>`);
      const action = `/status/account/authorizations/${client.client_id}/revoke`;
      expect(page).toContain(`action="${action}"`);
      const send = (origin: string) =>
        fetch(`${base}${action}`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie: bob.cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
          body: '',
        });
      expect((await send('https://evil.example')).status).toBe(403);
      expect((await api('/workflows', tokens.access_token)).status).toBe(200);
      const done = await send(base);
      expect(done.status).toBe(303);
      expect(done.headers.get('location')).toBe('/status/account#authorizations');
      expect((await api('/workflows', tokens.access_token)).status).toBe(401);
    });
  });

  describe('the expiry janitor', () => {
    it('deletes expired codes, tokens, grants and sign-in states in bounded batches, by the expiry indexes, and nothing live', async () => {
      // REFRESH_INTERVAL_SECONDS=0 (the tests') keeps its timer off: the test sweeps at the time it chooses.
      expect(t.app.get(SchedulerRegistry).doesExist('interval', 'expiry-janitor')).toBe(false);
      const dataSource = t.app.get(DataSource);
      const client = await register(alice);
      const live = await tokensFor(bob, client, 'workflow.read');
      // A code never exchanged, and a grant whose refresh token's life has passed: their clocks moved back.
      const pkce = pkcePair();
      await consent(base, alice.cookie, authorizeQuery(client, pkce));
      const stale = await tokensFor(alice, client, 'workflow.read');
      const past = new Date(Date.now() - 60_000);
      const grants = dataSource.getRepository(OAuthGrantEntity);
      await grants.update({ codeUsedAt: IsNull() }, { expiresAt: past });
      const aliceId = (await t.http.get('/users/current').set('Authorization', `Bearer ${alice.token}`)).body
        .id as number;
      const staleGrant = await grants.findOneOrFail({
        where: { userId: aliceId, codeUsedAt: Not(IsNull()) },
        order: { id: 'DESC' },
      });
      await grants.update({ id: staleGrant.id }, { expiresAt: past });
      await dataSource
        .getRepository(OAuthTokenEntity)
        .update({ grantId: staleGrant.id }, { expiresAt: past });
      const flows = dataSource.getRepository(SignInFlowEntity);
      const expiredFlows = EXPIRY_BATCH + 3;
      for (let at = 0; at < expiredFlows; at += 100) {
        await flows.insert(
          Array.from({ length: Math.min(100, expiredFlows - at) }, (_, i) => ({
            stateHash: `e${at + i}`.padStart(64, '0'),
            provider: 'test',
            codeVerifier: 'v',
            nonce: 'n',
            next: '/status',
            linkUserId: null,
            expiresAt: past,
          })),
        );
      }
      // Live ones too, many: the plans of the deletes are read after them, on the rows they left,
      // where MariaDB's optimizer would scan a table of a handful of rows whatever its indexes.
      const liveFlows = 20_000;
      for (let at = 0; at < liveFlows; at += 100) {
        await flows.insert(
          Array.from({ length: 100 }, (_, i) => ({
            stateHash: `live-${at + i}-`.padEnd(64, 'x'),
            provider: 'test',
            codeVerifier: 'v',
            nonce: 'n',
            next: '/status',
            linkUserId: null,
            expiresAt: new Date(Date.now() + 600_000),
          })),
        );
      }
      await analyzeOnMariaDb(dataSource);
      let removed: Record<string, number> = {};
      const queries = await captureQueries(dataSource, async () => {
        removed = await t.app.get(ExpiryJanitor).sweep(new Date());
      });
      expect(removed['sign-in states']).toBe(expiredFlows);
      expect(removed['authorization codes, grants and tokens']).toBeGreaterThanOrEqual(4);
      expect(await flows.countBy({ expiresAt: LessThan(new Date()) })).toBe(0);
      expect(await flows.countBy({ stateHash: Like('live-%') })).toBe(liveFlows);
      expect(await grants.countBy({ expiresAt: LessThan(new Date()) })).toBe(0);
      expect((await api('/workflows', stale.access_token)).status).toBe(401);
      expect((await api('/workflows', live.access_token)).status).toBe(200);
      // Bounded: no statement deletes more than a batch.
      const deletes = queries.filter((query) => /^\s*DELETE/i.test(query.sql));
      expect(deletes.filter((query) => /sign_in_flows/.test(query.sql)).length).toBeGreaterThanOrEqual(2);
      expect(Math.max(...deletes.map((query) => query.parameters.length))).toBeLessThanOrEqual(
        EXPIRY_BATCH + 1,
      );
      const scans = [];
      for (const query of queries.filter((query) => isPlannable(query.sql))) {
        scans.push(...(await fullScansOf(dataSource, query)).map((scan) => ({ sql: query.sql, ...scan })));
      }
      expect(scans).toEqual([]);
    });
  });

  describe('requests that cannot be trusted', () => {
    it('shows an error page, never a redirect, for an unknown client or a redirect_uri not registered exactly', async () => {
      const client = await register(alice);
      const variants = [
        `${CALLBACK}/`,
        `${CALLBACK}/more`,
        CALLBACK.toUpperCase(),
        'https://evil.example/oauth/callback',
        `${CALLBACK}?x=1`,
      ];
      for (const redirect_uri of variants) {
        const reply = await fetch(
          `${base}/oauth2/authorize?${authorizeQuery(client, pkcePair(), { redirect_uri })}`,
          {
            headers: { cookie: alice.cookie },
            redirect: 'manual',
          },
        );
        expect({ redirect_uri, status: reply.status, location: reply.headers.get('location') }).toEqual({
          redirect_uri,
          status: 400,
          location: null,
        });
        expect(await reply.text()).toContain('redirect_uri is not one the application registered');
      }
      const unknown = await fetch(
        `${base}/oauth2/authorize?${authorizeQuery({ ...client, client_id: 'AAAAAAAAAAAAAAAAAAAAAAAA' }, pkcePair())}`,
        { headers: { cookie: alice.cookie }, redirect: 'manual' },
      );
      expect(unknown.status).toBe(400);
      expect(unknown.headers.get('location')).toBeNull();
    });

    it.each([
      ['no PKCE for a public client', 'invalid_request', { code_challenge: undefined }],
      ['the plain PKCE method', 'invalid_request', { code_challenge_method: 'plain' }],
      ['a registry scope', 'invalid_scope', { scope: 'registry.info' }],
      ['an unknown scope', 'invalid_scope', { scope: 'workflow.read admin' }],
      ['another response type', 'unsupported_response_type', { response_type: 'token' }],
    ])('sends %s back to the application as error=%s, with its state', async (_label, error, change) => {
      const client = await register(alice);
      const query = new URLSearchParams(authorizeQuery(client, pkcePair(), { state: 's-1' }));
      for (const [name, value] of Object.entries(change)) {
        if (value === undefined) {
          query.delete(name);
          query.delete('code_challenge_method');
        } else {
          query.set(name, value);
        }
      }
      const reply = await fetch(`${base}/oauth2/authorize?${query.toString()}`, {
        headers: { cookie: alice.cookie },
        redirect: 'manual',
      });
      expect(reply.status).toBe(302);
      const location = new URL(reply.headers.get('location') ?? '');
      expect(`${location.origin}${location.pathname}`).toBe(CALLBACK);
      expect(location.searchParams.get('error')).toBe(error);
      expect(location.searchParams.get('state')).toBe('s-1');
      expect(location.searchParams.get('code')).toBeNull();
    });

    it('sends a denial back as access_denied, with no code', async () => {
      const client = await register(alice);
      const redirect = await consent(base, bob.cookie, authorizeQuery(client, pkcePair()), 'deny');
      expect(redirect.searchParams.get('error')).toBe('access_denied');
      expect(redirect.searchParams.get('code')).toBeNull();
    });

    it("refuses the consent form from another site's page or without Origin and Referer (CSRF), issuing no code", async () => {
      const client = await register(alice);
      const page = await fetch(`${base}/oauth2/authorize?${authorizeQuery(client, pkcePair())}`, {
        headers: { cookie: alice.cookie },
      });
      const fields = consentFields(await page.text());
      fields.append('decision', 'approve');
      const dataSource = t.app.get(DataSource);
      const [{ n: before }] = await dataSource.query<{ n: number | string }[]>(
        'SELECT COUNT(*) AS n FROM oauth_grants',
      );
      const foreign: Record<string, string>[] = [
        { origin: 'https://evil.example' },
        { origin: 'null' },
        { referer: 'https://evil.example/x' },
        {},
      ];
      for (const headers of foreign) {
        const reply = await fetch(`${base}/oauth2/authorize`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie: alice.cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
          body: fields.toString(),
        });
        expect({ headers, status: reply.status, location: reply.headers.get('location') }).toEqual({
          headers,
          status: 403,
          location: null,
        });
      }
      const [{ n: after }] = await dataSource.query<{ n: number | string }[]>(
        'SELECT COUNT(*) AS n FROM oauth_grants',
      );
      expect(Number(after)).toBe(Number(before));
      // Without a session the form approves nothing either.
      const anonymous = await fetch(`${base}/oauth2/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' },
        body: fields.toString(),
      });
      expect(anonymous.status).toBe(401);
    });

    it('refuses a sign-in form from another site on the way to the consent page (login CSRF)', async () => {
      const client = await register(alice);
      const reply = await fetch(`${base}/status/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          username: 'bob',
          password: PASSWORD,
          next: `/oauth2/authorize?${authorizeQuery(client, pkcePair())}`,
        }).toString(),
      });
      expect(reply.status).toBe(403);
      expect(reply.headers.getSetCookie()).toEqual([]);
    });

    it('answers malformed token requests in RFC 6749 shape', async () => {
      expect(
        (
          await tokenRequest(base, {
            grant_type: 'authorization_code',
            client_id: 'AAAAAAAAAAAAAAAAAAAAAAAA',
            code: 'x',
            redirect_uri: CALLBACK,
          })
        ).body.error,
      ).toBe('invalid_client');
      const client = await register(alice);
      expect(
        (
          await tokenRequest(base, {
            grant_type: 'authorization_code',
            client_id: client.client_id,
            redirect_uri: CALLBACK,
          })
        ).body,
      ).toEqual({
        error: 'invalid_request',
        error_description: 'code is required',
      });
      expect(
        (
          await tokenRequest(base, {
            grant_type: 'authorization_code',
            client_id: client.client_id,
            code: 'nope',
            redirect_uri: CALLBACK,
            code_verifier: pkcePair().verifier,
          })
        ).body.error,
      ).toBe('invalid_grant');
      expect(
        (await tokenRequest(base, { grant_type: 'password', client_id: client.client_id })).body.error,
      ).toBe('unsupported_grant_type');
      expect((await api('/workflows', `wfa_${'A'.repeat(43)}`)).status).toBe(401);
    });
  });

  it('describes itself at /.well-known/oauth-authorization-server (RFC 8414)', async () => {
    const reply = await fetch(`${base}/.well-known/oauth-authorization-server`);
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual({
      issuer: base,
      authorization_endpoint: `${base}/oauth2/authorize`,
      token_endpoint: `${base}/oauth2/token`,
      scopes_supported: expect.arrayContaining(['workflow.read', 'registry.info']),
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['client_credentials', 'authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${base}/docs`,
    });
  });

  it('reads its tables by index: the consent, the exchange, a request with the token, a refresh, the approvals and their revocation', async () => {
    const dataSource = t.app.get(DataSource);
    const client = await register(alice);
    // Tokens of another grant, many: on a handful of rows MariaDB's optimizer scans whatever the indexes.
    await tokensFor(bob, await register(bob), 'workflow.read');
    const { grantId: otherGrant } = await dataSource
      .getRepository(OAuthTokenEntity)
      .findOneOrFail({ where: { kind: 'access' }, order: { id: 'DESC' } });
    for (let at = 0; at < 2000; at += 100) {
      await dataSource.getRepository(OAuthTokenEntity).insert(
        Array.from({ length: 100 }, (_, i) => ({
          grantId: otherGrant,
          kind: 'access' as const,
          tokenHash: `seeded-${at + i}-`.padEnd(64, 'x'),
          scopes: 'workflow.read',
          createdAt: new Date(),
          expiresAt: new Date(Date.now() + 3600_000),
          usedAt: null,
        })),
      );
    }
    // And Bob's approvals, many, beside Alice's few.
    const { oauthClientId, userId } = await dataSource
      .getRepository(OAuthGrantEntity)
      .findOneByOrFail({ id: otherGrant });
    for (let at = 0; at < 1000; at += 100) {
      await dataSource.getRepository(OAuthGrantEntity).insert(
        Array.from({ length: 100 }, (_, i) => ({
          oauthClientId,
          userId,
          scopes: 'workflow.read',
          redirectUri: CALLBACK,
          codeHash: `seeded-${at + i}-`.padEnd(64, 'x'),
          codeChallenge: null,
          codeUsedAt: new Date(),
          createdAt: new Date(),
          expiresAt: new Date(Date.now() + 3600_000),
        })),
      );
    }
    await analyzeOnMariaDb(dataSource);
    let tokens: { access_token: string; refresh_token: string } = { access_token: '', refresh_token: '' };
    const queries = await captureQueries(dataSource, async () => {
      tokens = await tokensFor(alice, client);
      await api('/workflows', tokens.access_token);
      await tokenRequest(base, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: client.client_id,
      });
      await t.http
        .get('/users/current/authorizations')
        .set('Authorization', `Bearer ${alice.token}`)
        .expect(200);
      await t.http
        .delete(`/users/current/authorizations/${client.client_id}`)
        .set('Authorization', `Bearer ${alice.token}`)
        .expect(204);
    });
    const ours = queries.filter((query) => isPlannable(query.sql) && /oauth_/.test(query.sql));
    expect(ours.length).toBeGreaterThan(5);
    const scans = [];
    for (const query of ours) {
      scans.push(...(await fullScansOf(dataSource, query)).map((scan) => ({ sql: query.sql, ...scan })));
    }
    expect(scans).toEqual([]);
  });
});
