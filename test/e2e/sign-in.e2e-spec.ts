import { DataSource } from 'typeorm';
import { GithubOAuthFake } from '../fakes/github-oauth-fake.js';
import { OidcOp, signInAtOp } from '../fakes/oidc-op.js';
import { SeekFake } from '../fakes/seek-fake.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { freePort } from '../support/mariadb-server.mjs';
import { crateZip } from '../support/registry.js';
import {
  cookieOf,
  finishSignIn,
  followAtProvider,
  landingOf,
  startSignIn,
  writeProvidersFile,
} from '../support/sign-in.js';

const OP_CLIENT = { client_id: 'workflow-service', client_secret: 'op-secret-of-the-service-0123456789' };
const GITHUB_CLIENT = { id: 'Iv1.gh-client', secret: 'gh-secret-of-the-service' };
const SEEK_CLIENT = { id: 'seek-app-uid', secret: 'seek-app-secret' };

/**
 * Sign-in with identity providers (API.md 15) against a real OpenID Provider (oidc-provider on
 * loopback, its login and consent pages driven over HTTP) and loopback fakes of GitHub's and
 * SEEK's OAuth2, on the e2e database.
 */
describe(`sign-in with identity providers (${testDatabase()})`, () => {
  let t: TestApp;
  let op: OidcOp;
  let github: GithubOAuthFake;
  let seek: SeekFake;
  let file: { path: string; remove(): void };
  let address = 0;

  beforeAll(async () => {
    const opPort = await freePort();
    github = new GithubOAuthFake();
    github.clients.set(GITHUB_CLIENT.id, GITHUB_CLIENT.secret);
    await github.start();
    seek = new SeekFake();
    seek.oauthApplications.set(SEEK_CLIENT.id, SEEK_CLIENT.secret);
    await seek.start();
    file = writeProvidersFile(`providers:
  op:
    type: oidc
    label: Test OP
    issuer: http://127.0.0.1:${opPort}
    client_id: ${OP_CLIENT.client_id}
    client_secret: \${OP_SECRET}
    timeout_seconds: 2
  gh:
    type: github
    label: GitHub
    url: ${github.url}
    client_id: ${GITHUB_CLIENT.id}
    client_secret: ${GITHUB_CLIENT.secret}
  wfh:
    type: seek
    label: WorkflowHub
    url: ${seek.url}
    client_id: ${SEEK_CLIENT.id}
    client_secret: ${SEEK_CLIENT.secret}
`);
    t = await createTestApp({
      IDENTITY_PROVIDERS_FILE: file.path,
      OP_SECRET: OP_CLIENT.client_secret,
      TRUST_PROXY: 'loopback',
      AUTH_RATE_LIMIT: '4',
    });
    op = new OidcOp();
    await op.start({ ...OP_CLIENT, redirect_uris: [`${t.baseUrl}/oauth2/authorized/op`] }, opPort);
  });

  afterAll(async () => {
    await t.close();
    await op.stop();
    await github.stop();
    await seek.stop();
    file.remove();
  });

  beforeEach(() => {
    // Each test from its own address: one test's failed attempts do not reach the next's limit.
    address += 1;
    op.tamper = undefined;
    op.tokenDelayMs = 0;
  });

  const from = () => `198.51.100.${address}`;
  const http = () => t.http;

  /** Signs in at the OP as `login` through the service; the service's answer to the redirect back. */
  const viaOp = async (login: string, query = '', cookie?: string) => {
    const started = await startSignIn(http(), 'op', query, cookie);
    const callback = await signInAtOp(started.location.toString(), login);
    return finishSignIn(http(), callback, started.state).set('X-Forwarded-For', from());
  };
  const sessionOf = (reply: { headers: Record<string, unknown> }) =>
    cookieOf(reply.headers['set-cookie'] as string[] | undefined, 'session')?.value;
  const me = async (session: string) =>
    (await t.http.get('/users/current').set('Authorization', `Bearer ${session}`)).body as {
      id: number;
      username: string;
      roles: string[];
    };
  const identitiesOf = async (session: string) =>
    (await t.http.get('/users/current/identities').set('Authorization', `Bearer ${session}`)).body as {
      items: { provider: string; subject: string; username: string | null; email: string | null }[];
    };
  const userCount = async () =>
    t.app.get(DataSource).query<{ n: number }[]>('SELECT COUNT(*) AS n FROM users');

  describe('the providers', () => {
    it('lists them for anybody, with their login URLs', async () => {
      const reply = await t.http.get('/oauth2/providers').expect(200);
      expect(reply.body).toEqual({
        items: [
          { name: 'op', label: 'Test OP', type: 'oidc', login_url: `${t.baseUrl}/oauth2/login/op` },
          { name: 'gh', label: 'GitHub', type: 'github', login_url: `${t.baseUrl}/oauth2/login/gh` },
          { name: 'wfh', label: 'WorkflowHub', type: 'seek', login_url: `${t.baseUrl}/oauth2/login/wfh` },
        ],
      });
    });

    it('offers each on the sign-in form', async () => {
      const page = await t.http.get('/status/sign-in?next=%2Fstatus%2Faccount').expect(200);
      expect(page.text).toContain(
        '<a class="provider" href="/oauth2/login/op?next=%2Fstatus%2Faccount">Sign in with <bdi>Test OP</bdi></a>',
      );
      expect(page.text).toContain('Sign in with <bdi>GitHub</bdi>');
      expect(page.text).toContain('Sign in with <bdi>WorkflowHub</bdi>');
    });

    it('answers an unknown provider with a page, not a redirect', async () => {
      const reply = await t.http.get('/oauth2/login/nope').expect(404);
      expect(reply.headers['content-type']).toMatch(/^text\/html/);
      expect(reply.text).toContain('There is no sign-in provider &#39;nope&#39;');
    });
  });

  describe('with OpenID Connect', () => {
    it('sends the browser to the provider with state, PKCE S256 and a nonce, the state in a cookie', async () => {
      const reply = await t.http.get('/oauth2/login/op?next=%2Fstatus%2Faccount').expect(302);
      const location = new URL(String(reply.headers.location));
      expect(location.origin).toBe(op.issuer);
      expect(location.searchParams.get('redirect_uri')).toBe(`${t.baseUrl}/oauth2/authorized/op`);
      expect(location.searchParams.get('code_challenge_method')).toBe('S256');
      expect(location.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(location.searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
      expect(location.searchParams.get('scope')).toBe('openid profile email');
      const state = cookieOf(reply.headers['set-cookie'], 'oauth2_state');
      expect(state?.value).toBe(location.searchParams.get('state'));
      expect(state?.line).toMatch(/HttpOnly/);
      expect(state?.line).toMatch(/SameSite=Lax/);
      expect(state?.line).toMatch(/Path=\/oauth2\/authorized\/op/);
      expect(state?.line).toMatch(/Max-Age=600/);
    });

    it('makes an account on first sign-in, finds it the next time, and sets the session', async () => {
      op.people.set('op-alice', {
        preferred_username: 'alice',
        email: 'alice@op.example',
        email_verified: true,
      });
      const first = await viaOp('op-alice', '?next=%2Fstatus%2Faccount');
      // A page, not a redirect: a chain of redirects from the provider's site would not carry the
      // Strict session cookie to next (test/browser/sign-in-cross-site).
      expect(first.status).toBe(200);
      expect(first.headers['content-type']).toMatch(/^text\/html/);
      expect(first.headers['cache-control']).toBe('no-store');
      expect(first.headers['referrer-policy']).toBe('no-referrer');
      expect(landingOf(first)).toBe('/status/account');
      const session = cookieOf(first.headers['set-cookie'], 'session');
      expect(session?.line).toMatch(/HttpOnly/);
      expect(session?.line).toMatch(/SameSite=Strict/);
      const account = await me(session?.value ?? '');
      expect(account).toMatchObject({ username: 'alice', roles: ['user'] });
      expect(await identitiesOf(session?.value ?? '')).toMatchObject({
        items: [{ provider: 'op', subject: 'op-alice', username: 'alice', email: 'alice@op.example' }],
      });
      const again = await viaOp('op-alice');
      expect(landingOf(again)).toBe('/status');
      expect((await me(sessionOf(again) ?? '')).id).toBe(account.id);
      // No password: the password sign-in cannot be used for the account.
      await t.http.post('/api/v1/auth').send({ username: 'alice', password: '' }).expect(400);
    });

    it('keeps an unverified e-mail out, and never matches an account by e-mail', async () => {
      const admin = await t.login();
      await t.http
        .post('/api/v1/users')
        .set('Authorization', `Bearer ${admin}`)
        .send({ username: 'mallory-target', password: 'a-test-password' })
        .expect(201);
      op.people.set('op-mallory', {
        preferred_username: 'mallory-target',
        email: 'mallory-target@example.org',
        email_verified: false,
      });
      const reply = await viaOp('op-mallory');
      const account = await me(sessionOf(reply) ?? '');
      expect(account.username).toBe('mallory-target-2');
      expect((await identitiesOf(sessionOf(reply) ?? '')).items[0].email).toBeNull();
      const target = await t.login('mallory-target', 'a-test-password');
      expect((await identitiesOf(target)).items).toEqual([]);
    });

    it.each([
      ['a protocol-relative next', '?next=%2F%2Fevil.example%2Fstatus', '/status'],
      ['an absolute next', '?next=https%3A%2F%2Fevil.example%2F', '/status'],
      ['a backslash next', '?next=%2F%5Cevil.example', '/status'],
      ['a next with a tab', '?next=%2F%09%2Fevil.example', '/status'],
      ['an encoded next that stays a path here', '?next=%2F%252F%252Fevil.example', '/%2F%2Fevil.example'],
      [
        'a next with a quote and two parameters',
        "?next=%2Fstatus%2Fit's%3Fa%3D1%26b%3D2",
        "/status/it's?a=1&b=2",
      ],
    ])('goes to a path of this service only: %s', async (_what, query, location) => {
      op.people.set('op-bob', {});
      const reply = await viaOp('op-bob', query);
      expect(landingOf(reply)).toBe(location);
    });

    const refusedWith = (
      reply: { status: number; text: string; headers: Record<string, unknown> },
      status: number,
      text: RegExp,
    ): void => {
      expect(reply.status).toBe(status);
      expect(String(reply.headers['content-type'])).toMatch(/^text\/html/);
      expect(reply.text).toMatch(text);
      expect(reply.text).toContain('no account was made or changed');
      expect(cookieOf(reply.headers['set-cookie'] as string[] | undefined, 'session')).toBeUndefined();
    };

    it.each([
      ['foreign-key', /Test OP gave an answer that did not pass the checks: .*signature/],
      ['alg-none', /Test OP gave an answer that did not pass the checks: .*alg/],
      ['hs256', /Test OP gave an answer that did not pass the checks: .*alg/],
      ['other-issuer', /Test OP gave an answer that did not pass the checks: .*iss/],
      ['other-audience', /Test OP gave an answer that did not pass the checks: .*aud/],
      ['expired', /Test OP gave an answer that did not pass the checks: .*exp/],
      ['other-nonce', /Test OP gave an answer that did not pass the checks: .*nonce/],
      ['garbage', /Test OP gave an answer that did not pass the checks/],
    ] as const)('refuses an ID token spoilt as %s, making no account', async (tamper, message) => {
      const before = await userCount();
      op.tamper = tamper;
      refusedWith(await viaOp(`op-victim-${tamper}`), 502, message);
      expect(await userCount()).toEqual(before);
    });

    it('refuses a redirect without the state cookie (login CSRF) and with a state of another browser', async () => {
      const attackers = await startSignIn(t.http, 'op');
      const callback = await signInAtOp(attackers.location.toString(), 'op-attacker');
      // The victim's browser, sent the attacker's redirect, holds no state or its own.
      refusedWith(
        await finishSignIn(t.http, callback).set('X-Forwarded-For', from()),
        400,
        /holds no sign-in with Test OP started here/,
      );
      const victims = await startSignIn(t.http, 'op');
      refusedWith(
        await finishSignIn(t.http, callback, victims.state).set('X-Forwarded-For', from()),
        400,
        /belongs to another sign-in than the one this browser started/,
      );
    });

    it('takes a state once, and the provider takes a code once', async () => {
      const started = await startSignIn(t.http, 'op');
      const callback = await signInAtOp(started.location.toString(), 'op-carol');
      expect((await finishSignIn(t.http, callback, started.state)).status).toBe(200);
      refusedWith(
        await finishSignIn(t.http, callback, started.state).set('X-Forwarded-For', from()),
        400,
        /was finished already or has expired/,
      );
      // The used code under a fresh state of this browser: the provider refuses it.
      const fresh = await startSignIn(t.http, 'op');
      const replay = new URL(callback);
      replay.searchParams.set('state', fresh.state);
      refusedWith(
        await finishSignIn(t.http, replay, fresh.state).set('X-Forwarded-For', from()),
        403,
        /Test OP refused the sign-in: invalid_grant/,
      );
    });

    it('says so when the person declines at the provider', async () => {
      const started = await startSignIn(t.http, 'op');
      const callback = await signInAtOp(started.location.toString(), 'op-dave', { abort: true });
      expect(callback.searchParams.get('error')).toBe('access_denied');
      refusedWith(
        await finishSignIn(t.http, callback, started.state).set('X-Forwarded-For', from()),
        403,
        /Test OP refused the sign-in: access_denied \(End-User aborted interaction\)/,
      );
    });

    it('says so when the provider is too slow, and when it is down', async () => {
      const started = await startSignIn(t.http, 'op');
      const callback = await signInAtOp(started.location.toString(), 'op-erin');
      op.tokenDelayMs = 4000;
      const slow = await finishSignIn(t.http, callback, started.state).set('X-Forwarded-For', from());
      refusedWith(
        slow,
        503,
        /Test OP did not answer in time|Test OP could not be reached: .*did not answer within 2 s/,
      );
      expect(slow.headers['retry-after']).toBe('30');
      op.tokenDelayMs = 0;
      const again = await startSignIn(t.http, 'op');
      const back = await signInAtOp(again.location.toString(), 'op-erin');
      await op.stop();
      try {
        refusedWith(
          await finishSignIn(t.http, back, again.state).set('X-Forwarded-For', from()),
          503,
          /Test OP could not be reached: .*unreachable/,
        );
      } finally {
        await op.start(
          { ...OP_CLIENT, redirect_uris: [`${t.baseUrl}/oauth2/authorized/op`] },
          Number(new URL(op.issuer).port),
        );
      }
    });

    it('refuses a disabled account', async () => {
      const session = sessionOf(await viaOp('op-frank')) ?? '';
      const { id } = await me(session);
      const admin = await t.login();
      await t.http
        .patch(`/api/v1/users/${id}`)
        .set('Authorization', `Bearer ${admin}`)
        .send({ active: false })
        .expect(200);
      refusedWith(await viaOp('op-frank'), 403, /This account is disabled/);
    });

    it('counts failed sign-ins in the login limiter, per address', async () => {
      const callback = new URL(`${t.baseUrl}/oauth2/authorized/op?code=x&state=y`);
      for (let attempt = 0; attempt < 4; attempt++) {
        expect((await finishSignIn(t.http, callback, 'z').set('X-Forwarded-For', from())).status).toBe(400);
      }
      const limited = await finishSignIn(t.http, callback, 'z').set('X-Forwarded-For', from());
      expect(limited.status).toBe(429);
      expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    });
  });

  describe('linked identities', () => {
    it('links another provider to a signed-in account, lists and unlinks it, never the last way in', async () => {
      op.people.set('op-grace', { preferred_username: 'grace' });
      const session = sessionOf(await viaOp('op-grace')) ?? '';
      github.signedIn = {
        id: 5501,
        login: 'grace-gh',
        emails: [{ email: 'grace@gh.example', primary: true, verified: true }],
      };
      const started = await startSignIn(
        t.http,
        'gh',
        '?link=true&next=%2Fstatus%2Faccount',
        `session=${session}`,
      );
      const linked = await finishSignIn(t.http, await followAtProvider(started.location), started.state);
      expect(landingOf(linked)).toBe('/status/account');
      expect(
        (await identitiesOf(session)).items.map((item) => [
          item.provider,
          item.subject,
          item.username,
          item.email,
        ]),
      ).toEqual([
        ['op', 'op-grace', 'grace', 'op-grace@op.example'],
        ['gh', '5501', 'grace-gh', 'grace@gh.example'],
      ]);
      // Signing in with GitHub now reaches the same account.
      const viaGithub = await startSignIn(t.http, 'gh');
      const signedIn = await finishSignIn(
        t.http,
        await followAtProvider(viaGithub.location),
        viaGithub.state,
      );
      expect((await me(sessionOf(signedIn) ?? '')).username).toBe('grace');
      const page = await t.http.get('/status/account').set('Cookie', `session=${session}`).expect(200);
      expect(page.text).toContain('action="/status/account/identities/op/unlink"');
      await t.http
        .delete('/users/current/identities/op')
        .set('Authorization', `Bearer ${session}`)
        .expect(204);
      const last = await t.http
        .delete('/users/current/identities/gh')
        .set('Authorization', `Bearer ${session}`);
      expect(last.status).toBe(409);
      expect(last.body.detail).toMatch(/only way to sign in/);
      expect((await identitiesOf(session)).items.map((item) => item.provider)).toEqual(['gh']);
      await t.http
        .delete('/users/current/identities/op')
        .set('Authorization', `Bearer ${session}`)
        .expect(404);
    });

    it('refuses to link an identity that is on another account, moving nothing', async () => {
      github.signedIn = { id: 5502, login: 'henry', emails: [] };
      const henry = await startSignIn(t.http, 'gh');
      const henrys =
        sessionOf(await finishSignIn(t.http, await followAtProvider(henry.location), henry.state)) ?? '';
      const other = await t.userToken();
      const started = await startSignIn(t.http, 'gh', '?link=true', `session=${other}`);
      const refused = await finishSignIn(t.http, await followAtProvider(started.location), started.state);
      expect(refused.status).toBe(409);
      expect(refused.text).toContain('is linked to another account of this service: nothing was changed');
      expect((await identitiesOf(other)).items).toEqual([]);
      expect((await identitiesOf(henrys)).items.map((item) => item.subject)).toEqual(['5502']);
    });

    it('links only for a signed-in caller', async () => {
      const reply = await t.http.get('/oauth2/login/gh?link=true').set('Cookie', 'session=stale');
      expect(reply.status).toBe(401);
      expect(reply.text).toContain('Sign in first to link a GitHub account to yours');
    });

    it('unlinks through the account page with a same-origin form only', async () => {
      const session = await t.userToken();
      github.signedIn = { id: 5503, login: 'ivy', emails: [] };
      const started = await startSignIn(t.http, 'gh', '?link=true', `session=${session}`);
      await finishSignIn(t.http, await followAtProvider(started.location), started.state).expect(200);
      await t.http
        .post('/status/account/identities/gh/unlink')
        .set('Cookie', `session=${session}`)
        .set('Origin', 'https://evil.example')
        .expect(403);
      const done = await t.http
        .post('/status/account/identities/gh/unlink')
        .set('Cookie', `session=${session}`)
        .set('Origin', t.baseUrl);
      expect(done.status).toBe(303);
      expect(done.headers.location).toBe('/status/account');
      expect((await identitiesOf(session)).items).toEqual([]);
    });
  });

  describe('with GitHub', () => {
    it('takes the numeric id as the subject, the login as the username, and a verified primary e-mail', async () => {
      github.signedIn = {
        id: 7701,
        login: 'octo',
        emails: [
          { email: 'old@gh.example', primary: false, verified: true },
          { email: 'octo@gh.example', primary: true, verified: true },
        ],
      };
      const started = await startSignIn(t.http, 'gh');
      expect(started.location.pathname).toBe('/login/oauth/authorize');
      expect(started.location.searchParams.get('code_challenge_method')).toBe('S256');
      const reply = await finishSignIn(t.http, await followAtProvider(started.location), started.state);
      const session = sessionOf(reply) ?? '';
      expect((await me(session)).username).toBe('octo');
      expect((await identitiesOf(session)).items).toMatchObject([
        { provider: 'gh', subject: '7701', email: 'octo@gh.example' },
      ]);
    });

    it("shows GitHub's refusal of a used code (its 200 with an error)", async () => {
      github.signedIn = { id: 7702, login: 'octo2', emails: [] };
      const started = await startSignIn(t.http, 'gh');
      const callback = await followAtProvider(started.location);
      await finishSignIn(t.http, callback, started.state).expect(200);
      const fresh = await startSignIn(t.http, 'gh');
      const replay = new URL(callback);
      replay.searchParams.set('state', fresh.state);
      const reply = await finishSignIn(t.http, replay, fresh.state).set('X-Forwarded-For', from());
      expect(reply.status).toBe(403);
      expect(reply.text).toContain('GitHub refused the sign-in: bad_verification_code');
    });
  });

  describe('with SEEK (WorkflowHub)', () => {
    it("is the registry of the same installation: the registry's user and the person are one account", async () => {
      const admin = await t.login();
      const created = await t.http
        .post('/registries')
        .set('Authorization', `Bearer ${admin}`)
        .send({ name: 'workflowhub', type: 'seek', uri: `${seek.url}/` })
        .expect(201);
      const token = (
        await t.http
          .post('/oauth2/token')
          .type('form')
          .send(
            new URLSearchParams({
              grant_type: 'client_credentials',
              client_id: created.body.client_id,
              client_secret: created.body.client_secret,
            }).toString(),
          )
          .expect(200)
      ).body.access_token as string;
      const crate = (id: string, title: string) =>
        seek.add({
          id,
          uuid: `86da0a30-d2cd-013a-a07d-${id.padStart(12, '0')}`,
          title,
          crates: new Map([[1, crateZip({ name: title, marker: id })]]),
          public: true,
        });
      const submitted = crate('301', 'Submitted before the sign-in');
      await t.http
        .post('/users/12/workflows')
        .set('Authorization', `Bearer ${token}`)
        .send({ identifier: submitted.id, version: '1' })
        .expect(201);

      seek.signedIn = { id: '12', title: 'Jane Doe', first_name: 'Jane', last_name: 'Doe' };
      const started = await startSignIn(t.http, 'wfh');
      expect(started.location.pathname).toBe('/oauth/authorize');
      expect(started.location.searchParams.get('scope')).toBe('read');
      const reply = await finishSignIn(t.http, await followAtProvider(started.location), started.state);
      expect(reply.status).toBe(200);
      const session = sessionOf(reply) ?? '';
      const mine = async () =>
        (
          (await t.http.get('/users/current/workflows').set('Authorization', `Bearer ${session}`).expect(200))
            .body as {
            items: { uuid: string }[];
          }
        ).items.map((item) => item.uuid);
      expect(await mine()).toEqual([submitted.uuid]);
      expect((await identitiesOf(session)).items).toMatchObject([
        { provider: 'wfh', subject: '12', username: 'Jane Doe', email: null },
      ]);

      // A person who signed in first: what the registry then submits for them is theirs.
      seek.signedIn = { id: '13', title: 'Kim Lee', first_name: 'Kim', last_name: 'Lee' };
      const kim = await startSignIn(t.http, 'wfh');
      const kims =
        sessionOf(await finishSignIn(t.http, await followAtProvider(kim.location), kim.state)) ?? '';
      const later = crate('302', 'Submitted after the sign-in');
      await t.http
        .post('/users/13/workflows')
        .set('Authorization', `Bearer ${token}`)
        .send({ identifier: later.id, version: '1' })
        .expect(201);
      const kimsWorkflows = (
        await t.http.get('/users/current/workflows').set('Authorization', `Bearer ${kims}`)
      ).body as {
        items: { uuid: string }[];
      };
      expect(kimsWorkflows.items.map((item) => item.uuid)).toEqual([later.uuid]);
      expect((await me(kims)).username).toBe('Kim-Lee');
    });
  });
});
