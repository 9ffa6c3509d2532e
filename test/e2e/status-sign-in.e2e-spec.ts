import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';

const PASSWORD = 'a-test-password';

/** The status pages' sign-in and sign-out forms: the API's session, limits and revocation, and no CSRF. */
describe(`signing in on the status pages (${testDatabase()})`, () => {
  let t: TestApp;
  let origin: string;
  let address = 0;

  beforeEach(() => {
    address += 1;
  });

  beforeAll(async () => {
    // Each test comes from its own address (X-Forwarded-For from the trusted loopback), so that the
    // per-address limit of one test's failures does not reach the next.
    t = await createTestApp({ AUTH_RATE_LIMIT: '3', TRUST_PROXY: 'loopback' });
    origin = t.baseUrl;
    const admin = await t.login();
    for (const username of ['carol', 'dave', 'erin']) {
      await t.http
        .post('/api/v1/users')
        .set('Authorization', `Bearer ${admin}`)
        .send({ username, password: PASSWORD, roles: ['user'] })
        .expect(201);
    }
  });

  afterAll(async () => {
    await t.close();
  });

  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  const signIn = (fields: Record<string, string>, headers: Record<string, string> = { Origin: origin }) =>
    t.http
      .post('/status/sign-in')
      .set('X-Forwarded-For', `192.0.2.${address}`)
      .set(headers)
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send(form(fields));
  const sessionOf = (setCookie: string[] | string | undefined): string | undefined => {
    const cookies = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
    return /^session=([^;]*)/.exec(cookies.find((cookie) => cookie.startsWith('session=')) ?? '')?.[1];
  };

  it('shows a form posting username and password, open even with an expired session', async () => {
    const response = await t.http
      .get('/status/sign-in?next=%2Fstatus%3Fpage%3D2')
      .set('Cookie', 'session=stale');
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.text).toContain('<form class="sign-in" method="post" action="/status/sign-in">');
    expect(response.text).toContain('<input type="hidden" name="next" value="/status?page=2">');
    expect(response.text).toMatch(/<input id="username" name="username" autocomplete="username"/);
    expect(response.text).toMatch(/<input id="password" name="password" type="password"/);
    expect(response.text).not.toMatch(/<script/i);
    const anonymous = await t.http.get('/status');
    expect(anonymous.text).toContain('<a href="/status/sign-in?next=%2Fstatus">Sign in</a>');
  });

  it("signs in with the API's session cookie and goes back to the page asked for", async () => {
    const response = await signIn({ username: 'carol', password: PASSWORD, next: '/status?page=2' });
    expect(response.status).toBe(303);
    expect(response.headers.location).toBe('/status?page=2');
    const cookie = (response.headers['set-cookie'] as unknown as string[]).find((line) =>
      line.startsWith('session='),
    );
    expect(cookie).toMatch(/; Max-Age=3600; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Strict$/);
    const token = sessionOf(response.headers['set-cookie']);
    // The token is the API's: it works as a Bearer token too.
    const me = await t.http.get('/users/current').set('Authorization', `Bearer ${token}`);
    expect(me.body).toMatchObject({ username: 'carol' });
    const page = await t.http.get('/status').set('Cookie', `session=${token}`);
    expect(page.text).toContain('Signed in as <strong><bdi>carol</bdi></strong>');
    expect(page.text).toContain('<form method="post" action="/status/sign-out">');
  });

  it('never sends the browser to another site after signing in', async () => {
    for (const next of [
      'https://evil.example/',
      '//evil.example/status',
      '/status/../docs',
      '/\\evil.example',
    ]) {
      const response = await signIn({ username: 'carol', password: PASSWORD, next });
      expect({ next, location: response.headers.location }).toEqual({ next, location: '/status' });
    }
  });

  it('refuses a form from another site, or without Origin and Referer, and sets no cookie (CSRF)', async () => {
    const good = { username: 'carol', password: PASSWORD };
    const refused: Record<string, string>[] = [
      { Origin: 'https://evil.example' },
      { Origin: 'null' },
      { Referer: 'https://evil.example/page' },
      { Origin: `http://127.0.0.2:${new URL(origin).port}` },
      {},
    ];
    for (const headers of refused) {
      const response = await signIn(good, headers);
      expect({ headers, status: response.status }).toEqual({ headers, status: 403 });
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.text).toContain('<h1>403 Forbidden</h1>');
      expect(sessionOf(response.headers['set-cookie'])).toBeUndefined();
    }
    // A Referer of this service's own page is enough when a browser sends no Origin.
    const referred = await signIn(good, { Referer: `${origin}/status/sign-in` });
    expect(referred.status).toBe(303);
  });

  it('answers wrong credentials with the form again (403), a missing field with 400, any other body type 400', async () => {
    const wrong = await signIn({ username: 'dave', password: 'not-the-password' });
    expect(wrong.status).toBe(403);
    expect(wrong.text).toContain('Wrong username or password');
    expect(wrong.text).toContain('value="dave"');
    expect(sessionOf(wrong.headers['set-cookie'])).toBeUndefined();
    const missing = await signIn({ username: 'dave' });
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('Enter a username and a password');
    const json = await t.http
      .post('/status/sign-in')
      .set('Origin', origin)
      .send({ username: 'dave', password: PASSWORD });
    expect(json.status).toBe(400);
    expect(json.text).toContain('application/x-www-form-urlencoded');
  });

  it('limits failed sign-ins exactly as logins: the same counter, 429 with Retry-After, even for the right password', async () => {
    // AUTH_RATE_LIMIT=3 here: one failure through the API, two through the form.
    const login = (password: string) =>
      t.http
        .post('/api/v1/auth')
        .set('X-Forwarded-For', `192.0.2.${address}`)
        .send({ username: 'erin', password });
    await login('wrong-1').expect(403);
    expect((await signIn({ username: 'erin', password: 'wrong-2' })).status).toBe(403);
    expect((await signIn({ username: 'erin', password: 'wrong-3' })).status).toBe(403);
    const limited = await signIn({ username: 'erin', password: PASSWORD });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.text).toContain('Too many failed sign-ins');
    expect(sessionOf(limited.headers['set-cookie'])).toBeUndefined();
    // And the API sees the form's failures.
    await login(PASSWORD).expect(429);
  });

  it('signs out: the token revoked, the cookie cleared, back to /status; only from a page of this service', async () => {
    const token = sessionOf((await signIn({ username: 'carol', password: PASSWORD })).headers['set-cookie']);
    const forged = await t.http
      .post('/status/sign-out')
      .set('Cookie', `session=${token}`)
      .set('Origin', 'https://evil.example');
    expect(forged.status).toBe(403);
    await t.http.get('/users/current').set('Authorization', `Bearer ${token}`).expect(200);

    const response = await t.http
      .post('/status/sign-out')
      .set('Cookie', `session=${token}`)
      .set('Origin', origin);
    expect(response.status).toBe(303);
    expect(response.headers.location).toBe('/status');
    expect(response.headers['set-cookie']).toEqual([
      expect.stringMatching(/^session=; Path=\/; Expires=Thu, 01 Jan 1970/),
    ]);
    await t.http.get('/users/current').set('Authorization', `Bearer ${token}`).expect(401);
    // Signing out without a session is no error.
    expect((await t.http.post('/status/sign-out').set('Origin', origin)).status).toBe(303);
  });
});
