import { JwtService } from '@nestjs/jwt';
import { DataSource } from 'typeorm';
import { ADMIN, createTestApp, type TestApp } from '../support/create-test-app.js';

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
}

function sessionCookie(setCookie: string | string[] | undefined): string {
  const cookies = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
  const found = cookies.find((cookie) => cookie.startsWith('session='));
  if (!found) {
    throw new Error(`no session cookie in ${JSON.stringify(setCookie)}`);
  }
  return found;
}

describe('area A: authentication', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ AUTH_RATE_LIMIT: '1000' });
  });

  afterAll(async () => {
    await t.close();
  });

  describe('POST /api/v1/auth', () => {
    it('answers 200 with a token, its type, lifetime and the user', async () => {
      const response = await t.http.post('/api/v1/auth').send(ADMIN);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        status: 'ok',
        token: expect.any(String),
        token_type: 'Bearer',
        expires_in: 3600,
        user: { id: expect.any(Number), username: 'admin', roles: ['admin'] },
      });
      const claims = claimsOf(response.body.token);
      expect(claims).toEqual({
        sub: String(response.body.user.id),
        username: 'admin',
        roles: ['admin'],
        iat: expect.any(Number),
        exp: expect.any(Number),
        jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
      expect((claims.exp as number) - (claims.iat as number)).toBe(3600);
      expect(JSON.parse(Buffer.from(response.body.token.split('.')[0], 'base64url').toString()).alg).toBe(
        'HS256',
      );
    });

    it('sets the session cookie HttpOnly, Path=/, SameSite=Strict with Max-Age, and varies on X-Auth-Token', async () => {
      const response = await t.http.post('/api/v1/auth').send(ADMIN);
      const cookie = sessionCookie(response.headers['set-cookie']);
      expect(cookie).toContain(`session=${response.body.token}`);
      expect(cookie).toMatch(/; HttpOnly/);
      expect(cookie).toMatch(/; Path=\//);
      expect(cookie).toMatch(/; SameSite=Strict/);
      expect(cookie).toMatch(/; Max-Age=3600/);
      expect(cookie).not.toMatch(/Secure/);
      expect(response.headers.vary).toMatch(/X-Auth-Token/);
    });

    it('accepts GET with the same JSON body', async () => {
      const response = await t.http
        .get('/api/v1/auth')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(ADMIN));
      expect(response.status).toBe(200);
      expect(response.body.token_type).toBe('Bearer');
    });

    it.each([
      ['no body', undefined],
      ['a missing password', { username: 'admin' }],
      ['a missing username', { password: 'x' }],
      ['a non-string password', { username: 'admin', password: 12345678 }],
      ['an empty username', { username: '', password: 'x' }],
      ['a username over 256 characters', { username: 'a'.repeat(257), password: 'x' }],
    ])('answers 400 in the area A shape for %s', async (_case, body) => {
      const response = await t.http.post('/api/v1/auth').send(body);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        error: { code: 400, title: 'Bad Request', message: expect.any(String) },
      });
    });

    it('answers 400 for a body that is not JSON', async () => {
      const response = await t.http
        .post('/api/v1/auth')
        .set('Content-Type', 'application/json')
        .send('{"username": "admin", ');
      expect(response.status).toBe(400);
      expect(response.body.error).toEqual({
        code: 400,
        title: 'Bad Request',
        message: 'The request body is not valid JSON',
      });
    });

    it('answers 403 with one message for a wrong password, an unknown user and a disabled user', async () => {
      const token = await t.login();
      await t.http
        .post('/api/v1/users')
        .set('Authorization', `Bearer ${token}`)
        .send({ username: 'sleeper', password: 'sleeper-password' })
        .expect(201);
      const users = await t.http.get('/api/v1/users').set('Authorization', `Bearer ${token}`);
      const sleeper = (users.body.items as { id: number; username: string }[]).find(
        (u) => u.username === 'sleeper',
      );
      await t.http
        .patch(`/api/v1/users/${sleeper?.id}`)
        .set('Authorization', `Bearer ${token}`)
        .send({ active: false })
        .expect(200);

      const answers = await Promise.all([
        t.http.post('/api/v1/auth').send({ username: 'admin', password: 'wrong-password' }),
        t.http.post('/api/v1/auth').send({ username: 'nobody-at-all', password: 'whatever-password' }),
        t.http.post('/api/v1/auth').send({ username: 'sleeper', password: 'sleeper-password' }),
      ]);
      for (const answer of answers) {
        expect(answer.status).toBe(403);
        expect(answer.body).toEqual({
          error: {
            code: 403,
            title: 'Forbidden',
            message: 'Wrong username or password, or the account is disabled',
          },
        });
      }
    });
  });

  describe('rate limit of failed logins', () => {
    it('answers 429 with Retry-After once the failures of one username pass AUTH_RATE_LIMIT, and 400s do not count', async () => {
      const limited = await createTestApp({ AUTH_RATE_LIMIT: '3' });
      try {
        for (let i = 0; i < 5; i++) {
          await limited.http.post('/api/v1/auth').send({ username: 'target' }).expect(400);
        }
        for (let i = 0; i < 3; i++) {
          await limited.http
            .post('/api/v1/auth')
            .send({ username: 'target', password: 'bad-password' })
            .expect(403);
        }
        const refused = await limited.http
          .post('/api/v1/auth')
          .send({ username: 'target', password: 'bad-password' });
        expect(refused.status).toBe(429);
        expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
        expect(refused.body.error).toEqual({
          code: 429,
          title: 'Too Many Requests',
          message: expect.any(String),
        });
        // The address is over the limit too, so even right credentials wait: that is what slows a guesser.
        const admin = await limited.http.post('/api/v1/auth').send(ADMIN);
        expect(admin.status).toBe(429);
      } finally {
        await limited.close();
      }
    });
    it('checks parallel wrong guesses no more often than the limit: AUTH_RATE_LIMIT answer 403, the rest 429', async () => {
      const limited = await createTestApp({ AUTH_RATE_LIMIT: '3' });
      try {
        const responses = await Promise.all(
          Array.from({ length: 3 + 5 }, () =>
            limited.http.post('/api/v1/auth').send({ username: 'target', password: 'bad-password' }),
          ),
        );
        const statuses = responses.map((response) => response.status);
        expect(statuses.filter((status) => status === 403).length).toBe(3);
        expect(statuses.filter((status) => status === 429).length).toBe(5);
      } finally {
        await limited.close();
      }
    });

    it('answers 200 to twelve simultaneous right logins from one address: only failures count (API.md 1.3)', async () => {
      // The default limit (10) is below twelve: checks in flight must not be counted as failures.
      const limited = await createTestApp({});
      try {
        const responses = await Promise.all(
          Array.from({ length: 12 }, () => limited.http.post('/api/v1/auth').send(ADMIN)),
        );
        expect(responses.map((response) => response.status)).toEqual(Array(12).fill(200));
      } finally {
        await limited.close();
      }
    });

    it('lets right logins in parallel wait for a free check, not refuse them, while failures stay under the limit', async () => {
      const limited = await createTestApp({ AUTH_RATE_LIMIT: '3' });
      try {
        for (let i = 0; i < 2; i++) {
          await limited.http
            .post('/api/v1/auth')
            .send({ ...ADMIN, password: 'bad-password' })
            .expect(403);
        }
        // One failure left: the twelve are checked one at a time, and each succeeds.
        const responses = await Promise.all(
          Array.from({ length: 12 }, () => limited.http.post('/api/v1/auth').send(ADMIN)),
        );
        expect(responses.map((response) => response.status)).toEqual(Array(12).fill(200));
        await limited.http
          .post('/api/v1/auth')
          .send({ ...ADMIN, password: 'bad-password' })
          .expect(403);
        await limited.http.post('/api/v1/auth').send(ADMIN).expect(429);
      } finally {
        await limited.close();
      }
    });

    it('keeps right logins and wrong guesses in one burst within the limit of failures', async () => {
      const limited = await createTestApp({ AUTH_RATE_LIMIT: '3' });
      try {
        const guesses = Array.from({ length: 8 }, () =>
          limited.http.post('/api/v1/auth').send({ ...ADMIN, password: 'bad-password' }),
        );
        const rights = Array.from({ length: 4 }, () => limited.http.post('/api/v1/auth').send(ADMIN));
        const [guessed, logged] = await Promise.all([Promise.all(guesses), Promise.all(rights)]);
        const guessStatuses = guessed.map((response) => response.status);
        expect(guessStatuses.filter((status) => status === 403).length).toBe(3);
        expect(guessStatuses.filter((status) => status === 429).length).toBe(5);
        // A right login is refused only once the three failures were counted before its check.
        expect(logged.map((response) => response.status).filter((s) => s !== 200 && s !== 429)).toEqual([]);
      } finally {
        await limited.close();
      }
    });

    it('counts no success: right logins in a row past the limit all answer 200', async () => {
      const limited = await createTestApp({ AUTH_RATE_LIMIT: '2' });
      try {
        for (let i = 0; i < 4; i++) {
          await limited.http.post('/api/v1/auth').send(ADMIN).expect(200);
        }
      } finally {
        await limited.close();
      }
    });
  });

  describe('token carriers', () => {
    it('accepts the token as Bearer, as X-Auth-Token and as the session cookie, and varies on all three', async () => {
      const token = await t.login();
      const answers = await Promise.all([
        t.http.get('/users/current').set('Authorization', `Bearer ${token}`),
        t.http.get('/users/current').set('X-Auth-Token', token),
        t.http.get('/users/current').set('Cookie', `session=${token}`),
      ]);
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual({ id: expect.any(Number), username: 'admin', roles: ['admin'] });
        expect(answer.headers.vary).toBe('Authorization, X-Auth-Token, Cookie, X-API-Key');
      }
    });

    it('renews the session cookie on a reply to a cookie-authenticated request', async () => {
      const token = await t.login();
      const answer = await t.http.get('/users/current').set('Cookie', `session=${token}`);
      const cookie = sessionCookie(answer.headers['set-cookie']);
      expect(cookie).toMatch(/^session=eyJ/);
      expect(cookie).not.toContain(token);
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/SameSite=Strict/);
      const bearer = await t.http.get('/users/current').set('Authorization', `Bearer ${token}`);
      expect(bearer.headers['set-cookie']).toBeUndefined();
    });

    it.each([
      ['no token', {}],
      ['a malformed token', { Authorization: 'Bearer not-a-jwt' }],
      [
        'a token signed with another secret',
        {
          Authorization:
            'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIiwidXNlcm5hbWUiOiJhZG1pbiIsInJvbGVzIjpbImFkbWluIl0sImp0aSI6IngiLCJleHAiOjQxMDAwMDAwMDB9.2XfO8vBDjDbBoMJfDrYeTfDXHc1GQs4d2_e6Aq0bP0Y',
        },
      ],
    ])('answers 401 with %s, as a problem document on /users/current', async (_case, headers) => {
      const response = await t.http.get('/users/current').set(headers);
      expect(response.status).toBe(401);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toEqual({
        type: 'about:blank',
        title: 'Unauthorized',
        status: 401,
        detail: expect.any(String),
      });
    });

    it('answers 401 in the area A shape on /api/v1/users', async () => {
      const response = await t.http.get('/api/v1/users');
      expect(response.status).toBe(401);
      expect(response.body).toEqual({
        error: { code: 401, title: 'Unauthorized', message: expect.any(String) },
      });
    });
  });

  describe('tokens that are not acceptable', () => {
    const b64 = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
    const claims = (exp: number): object => ({
      sub: '1',
      username: 'admin',
      roles: ['admin'],
      jti: '00000000-0000-4000-8000-000000000000',
      iat: exp - 3600,
      exp,
    });

    it('answers 401 to an expired token signed with the right secret', async () => {
      const expired = new JwtService({ secret: t.config.auth.jwtSecret }).sign(
        claims(Math.floor(Date.now() / 1000) - 60),
      );
      const response = await t.http.get('/users/current').set('Authorization', `Bearer ${expired}`);
      expect(response.status).toBe(401);
      expect(response.body.detail).toBe('The token has expired');
    });

    it('answers 401 to an unsigned token (alg: none)', async () => {
      const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims(Math.floor(Date.now() / 1000) + 600))}.`;
      const response = await t.http.get('/users/current').set('Authorization', `Bearer ${unsigned}`);
      expect(response.status).toBe(401);
      expect(response.body.detail).toBe('The token is not valid');
    });
  });

  describe('DELETE /api/v1/auth', () => {
    it('revokes the token and clears the cookie', async () => {
      const token = await t.login();
      await t.http.get('/users/current').set('Authorization', `Bearer ${token}`).expect(200);
      const response = await t.http.delete('/api/v1/auth').set('Authorization', `Bearer ${token}`);
      expect(response.status).toBe(204);
      expect(sessionCookie(response.headers['set-cookie'])).toMatch(/^session=;.*Expires=Thu, 01 Jan 1970/);
      const after = await t.http.get('/users/current').set('Authorization', `Bearer ${token}`);
      expect(after.status).toBe(401);
      expect(after.body.detail).toBe('The token has been revoked');
    });

    it('answers 204 without a token too', async () => {
      await t.http.delete('/api/v1/auth').expect(204);
    });
  });

  describe('user management', () => {
    it('creates, lists, reads, updates and deletes users; never returns a password', async () => {
      const admin = await t.login();
      const auth = { Authorization: `Bearer ${admin}` };
      const created = await t.http
        .post('/api/v1/users')
        .set(auth)
        .send({ username: 'carol', password: 'carol-password', roles: ['agent'] });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(Number),
        username: 'carol',
        roles: ['agent'],
        active: true,
      });

      const defaulted = await t.http
        .post('/api/v1/users')
        .set(auth)
        .send({ username: 'dave', password: 'dave-password' });
      expect(defaulted.body.roles).toEqual(['user']);

      const list = await t.http.get('/api/v1/users').set(auth);
      expect(list.status).toBe(200);
      expect(list.body.items.map((u: { username: string }) => u.username)).toEqual(
        expect.arrayContaining(['admin', 'carol', 'dave']),
      );
      expect(JSON.stringify(list.body)).not.toMatch(/password|scrypt/);

      const one = await t.http.get(`/api/v1/users/${created.body.id}`).set(auth);
      expect(one.body).toEqual(created.body);

      const patched = await t.http
        .patch(`/api/v1/users/${created.body.id}`)
        .set(auth)
        .send({ roles: ['user', 'agent'], password: 'carol-new-password' });
      expect(patched.status).toBe(200);
      expect(patched.body.roles).toEqual(['user', 'agent']);
      await t.login('carol', 'carol-new-password');

      await t.http.delete(`/api/v1/users/${defaulted.body.id}`).set(auth).expect(204);
      await t.http.get(`/api/v1/users/${defaulted.body.id}`).set(auth).expect(404);
      await t.http.delete(`/api/v1/users/${defaulted.body.id}`).set(auth).expect(404);
    });

    it('stores passwords only as a salted scrypt hash', async () => {
      const dataSource = t.app.get(DataSource);
      const rows = await dataSource.query<{ password_hash: string }[]>(
        "SELECT password_hash FROM users WHERE username = 'admin'",
      );
      expect(rows[0].password_hash).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
      expect(rows[0].password_hash).not.toContain(ADMIN.password);
    });

    it('answers 409 for a taken username and 400 for a short password or unknown role', async () => {
      const auth = { Authorization: `Bearer ${await t.login()}` };
      const taken = await t.http
        .post('/api/v1/users')
        .set(auth)
        .send({ username: 'admin', password: 'another-password' });
      expect(taken.status).toBe(409);
      expect(taken.body.error.code).toBe(409);
      await t.http.post('/api/v1/users').set(auth).send({ username: 'eve', password: 'short' }).expect(400);
      await t.http
        .post('/api/v1/users')
        .set(auth)
        .send({ username: 'eve', password: 'long-enough', roles: ['root'] })
        .expect(400);
      await t.http.get('/api/v1/users/abc').set(auth).expect(400);
    });

    it.each(['user', 'agent'])(
      'refuses every user-management operation to the %s role with 403',
      async (role) => {
        const token = await t.userToken([role]);
        const as = { Authorization: `Bearer ${token}` };
        const me = (await t.http.get('/users/current').set(as)).body as { id: number };
        const answers = await Promise.all([
          t.http
            .post('/api/v1/users')
            .set(as)
            .send({ username: `x-${role}`, password: 'long-enough-password' }),
          t.http.get('/api/v1/users').set(as),
          t.http.get(`/api/v1/users/${me.id}`).set(as),
          t.http
            .patch(`/api/v1/users/${me.id}`)
            .set(as)
            .send({ roles: ['admin'] }),
          t.http.delete(`/api/v1/users/${me.id}`).set(as),
        ]);
        for (const answer of answers) {
          expect(answer.status).toBe(403);
          expect(answer.body).toEqual({
            error: { code: 403, title: 'Forbidden', message: 'This operation needs the role admin' },
          });
        }
      },
    );

    it('stops the tokens of a disabled or deleted user, and applies role changes to existing tokens', async () => {
      const admin = { Authorization: `Bearer ${await t.login()}` };
      const created = await t.http
        .post('/api/v1/users')
        .set(admin)
        .send({ username: 'frank', password: 'frank-password', roles: ['user'] });
      const token = await t.login('frank', 'frank-password');
      const asFrank = { Authorization: `Bearer ${token}` };
      await t.http.get('/users/current').set(asFrank).expect(200);

      await t.http
        .patch(`/api/v1/users/${created.body.id}`)
        .set(admin)
        .send({ roles: ['admin'] })
        .expect(200);
      const promoted = await t.http.get('/users/current').set(asFrank);
      expect(promoted.body.roles).toEqual(['admin']);
      await t.http
        .patch(`/api/v1/users/${created.body.id}`)
        .set(admin)
        .send({ roles: ['user'] })
        .expect(200);

      await t.http.patch(`/api/v1/users/${created.body.id}`).set(admin).send({ active: false }).expect(200);
      await t.http.get('/users/current').set(asFrank).expect(401);
      await t.http.patch(`/api/v1/users/${created.body.id}`).set(admin).send({ active: true }).expect(200);
      await t.http.get('/users/current').set(asFrank).expect(200);
      await t.http.delete(`/api/v1/users/${created.body.id}`).set(admin).expect(204);
      await t.http.get('/users/current').set(asFrank).expect(401);
    });

    it('does not let an admin disable, demote or delete their own account', async () => {
      const admin = { Authorization: `Bearer ${await t.login()}` };
      const me = await t.http.get('/users/current').set(admin);
      await t.http.patch(`/api/v1/users/${me.body.id}`).set(admin).send({ active: false }).expect(409);
      await t.http
        .patch(`/api/v1/users/${me.body.id}`)
        .set(admin)
        .send({ roles: ['user'] })
        .expect(409);
      await t.http.delete(`/api/v1/users/${me.body.id}`).set(admin).expect(409);
    });
  });
});
