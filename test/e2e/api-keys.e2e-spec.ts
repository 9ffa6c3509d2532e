import { DataSource } from 'typeorm';
import { AuthModule } from '../../src/auth/auth.module.js';
import { Clock } from '../../src/common/clock.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { expectEnvelope, writeCloudsFile } from '../support/orchestration.js';

interface CreatedKey {
  id: number;
  name: string;
  prefix: string;
  key: string;
  created: string;
  expires_at: string | null;
}

const NOT_VALID = 'The API key is not valid';

describe(`API keys (API.md 7.3, ${testDatabase()})`, () => {
  let t: TestApp;
  let clouds: { path: string; remove(): void };
  let clock: Clock;
  let admin: string;
  let userToken: string;
  let userId: number;
  const username = 'key-owner';

  const keyRows = () => t.app.get(DataSource).query<Record<string, unknown>[]>('SELECT * FROM api_keys');
  const make = async (token: string, body: object): Promise<CreatedKey> => {
    const response = await t.http
      .post('/users/current/apikeys')
      .set('Authorization', `Bearer ${token}`)
      .send(body);
    expect(response.status).toBe(201);
    return response.body as CreatedKey;
  };
  const asKey = (path: string, key: string) => t.http.get(path).set('Authorization', `ApiKey ${key}`);

  beforeAll(async () => {
    clouds = writeCloudsFile('clouds:\n  default: {type: dummy}\n');
    t = await createTestApp({ CLOUDS_FILE: clouds.path, AUTH_RATE_LIMIT: '1000' });
    clock = t.app.select(AuthModule).get(Clock, { strict: true });
    admin = await t.login();
    userToken = await t.userToken(['user'], username);
    userId = (await t.http.get('/users/current').set('Authorization', `Bearer ${userToken}`)).body
      .id as number;
  });

  afterAll(async () => {
    await t.close();
    clouds.remove();
  });

  it('shows a new key once, then lists it by prefix only; the database holds a hash, not the key', async () => {
    const created = await make(userToken, { name: 'ci-nightly' });
    expect(created).toEqual({
      id: expect.any(Number),
      name: 'ci-nightly',
      prefix: created.key.slice(0, 12),
      key: expect.stringMatching(/^wfk_[A-Za-z0-9_-]{43}$/),
      created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/),
      expires_at: null,
    });
    const listed = await t.http.get('/users/current/apikeys').set('Authorization', `Bearer ${userToken}`);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ items: [{ ...created, key: undefined }] });
    expect(JSON.stringify(listed.body)).not.toContain(created.key);
    const stored = (await keyRows()).find((row) => Number(row.id) === created.id);
    expect(stored).toMatchObject({
      prefix: created.prefix,
      key_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(JSON.stringify(stored)).not.toContain(created.key);
  });

  it('authenticates as its owner from Authorization: ApiKey and from X-API-Key, in every area', async () => {
    const { key } = await make(userToken, { name: 'both-headers' });
    const viaAuthorization = await asKey('/users/current', key);
    expect(viaAuthorization.status).toBe(200);
    expect(viaAuthorization.body).toEqual({ id: userId, username, roles: ['user'] });
    expect(viaAuthorization.headers.vary).toContain('X-API-Key');
    const viaHeader = await t.http.get('/users/current').set('X-API-Key', key);
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.body.username).toBe(username);

    // Area C takes keys too (its agents are scripts); this owner is no agent yet.
    const nodes = await asKey('/api/v1/nodes', key);
    expectEnvelope(nodes, 403);
  });

  it("acts with the owner's current roles, changed at once", async () => {
    const { key } = await make(userToken, { name: 'roles' });
    expect((await asKey('/api/v1/users', key)).status).toBe(403);
    const promote = await t.http
      .patch(`/api/v1/users/${userId}`)
      .set('Authorization', `Bearer ${admin}`)
      .send({ roles: ['agent'] });
    expect(promote.status).toBe(200);
    expect((await asKey('/users/current', key)).body.roles).toEqual(['agent']);
    expect((await asKey('/api/v1/nodes', key)).status).toBe(200);
    await t.http
      .patch(`/api/v1/users/${userId}`)
      .set('Authorization', `Bearer ${admin}`)
      .send({ roles: ['user'] })
      .expect(200);
  });

  it('answers one 401 for a wrong, revoked or expired key, or one of a disabled owner, in the area of the route', async () => {
    const revoked = await make(userToken, { name: 'to-revoke' });
    expect((await asKey('/users/current', revoked.key)).status).toBe(200);
    const deleted = await t.http
      .delete(`/users/current/apikeys/${revoked.id}`)
      .set('Authorization', `Bearer ${userToken}`);
    expect(deleted.status).toBe(204);

    const now = Date.now();
    const expiring = await make(userToken, {
      name: 'expiring',
      expires_at: new Date(now + 3_600_000).toISOString(),
    });
    expect(expiring.expires_at).toBe(new Date(Math.floor((now + 3_600_000) / 1000) * 1000).toISOString());
    expect((await asKey('/users/current', expiring.key)).status).toBe(200);

    const live = await make(userToken, { name: 'live' });
    const wrong = `wfk_${'A'.repeat(43)}`;
    // The prefix of a live key with other secret characters: found by prefix, refused by the hash.
    const forged = `${live.prefix}${'B'.repeat(35)}`;
    // The auth module's clock, an hour and a millisecond on: the expiring key has expired.
    clock.nowMs = () => now + 3_600_001;
    try {
      for (const key of [revoked.key, expiring.key, wrong, forged, 'not-a-key']) {
        const problem = await asKey('/users/current', key);
        expect({ key, status: problem.status }).toEqual({ key, status: 401 });
        expect(problem.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(problem.body).toEqual({
          type: 'about:blank',
          title: 'Unauthorized',
          status: 401,
          detail: NOT_VALID,
        });
        const areaA = await asKey('/api/v1/users', key);
        expect(areaA.status).toBe(401);
        expect(areaA.body).toEqual({ error: { code: 401, title: 'Unauthorized', message: NOT_VALID } });
        expectEnvelope(await asKey('/api/v1/nodes', key), 401, NOT_VALID);
      }
    } finally {
      clock.nowMs = Clock.prototype.nowMs;
    }
    expect((await asKey('/users/current', live.key)).status).toBe(200);

    const { key } = await make(userToken, { name: 'owner-disabled' });
    await t.http
      .patch(`/api/v1/users/${userId}`)
      .set('Authorization', `Bearer ${admin}`)
      .send({ active: false });
    try {
      const disabled = await asKey('/users/current', key);
      expect(disabled.status).toBe(401);
      expect(disabled.body.detail).toBe(NOT_VALID);
    } finally {
      await t.http
        .patch(`/api/v1/users/${userId}`)
        .set('Authorization', `Bearer ${admin}`)
        .send({ active: true })
        .expect(200);
    }
    expect((await asKey('/users/current', key)).status).toBe(200);
  });

  it('decides a request carrying a key by the key alone, whatever token comes with it', async () => {
    const { key, id } = await make(userToken, { name: 'precedence' });
    await t.http
      .delete(`/users/current/apikeys/${id}`)
      .set('Authorization', `Bearer ${userToken}`)
      .expect(204);
    const withToken = await t.http.get('/users/current').set('X-Auth-Token', admin).set('X-API-Key', key);
    expect(withToken.status).toBe(401);
    expect(withToken.body.detail).toBe(NOT_VALID);
  });

  it('answers a clear 401 for a key in the wrong header form', async () => {
    const { key } = await make(userToken, { name: 'forms' });
    const cases: [string, string, RegExp][] = [
      ['Authorization', `Bearer ${key}`, /not a Bearer token.*ApiKey <key>.*X-API-Key/],
      ['Authorization', 'ApiKey', /ApiKey needs exactly one key/],
      ['Authorization', `ApiKey ${key} extra`, /ApiKey needs exactly one key/],
      ['X-API-Key', `Bearer ${key}`, /X-API-Key takes the key alone/],
      ['X-API-Key', `ApiKey ${key}`, /X-API-Key takes the key alone/],
      ['X-Auth-Token', key, /not an X-Auth-Token/],
    ];
    for (const [header, value, reason] of cases) {
      const response = await t.http.get('/users/current').set(header, value);
      expect({ header, value, status: response.status }).toEqual({ header, value, status: 401 });
      expect(response.body.detail).toMatch(reason);
    }
    const two = await t.http
      .get('/users/current')
      .set('Authorization', `ApiKey ${key}`)
      .set('X-API-Key', `wfk_${'C'.repeat(43)}`);
    expect(two.status).toBe(401);
    expect(two.body.detail).toMatch(/Two different API keys/);
  });

  it('refuses bad input and a key making a key, storing nothing', async () => {
    const { key } = await make(userToken, { name: 'no-minting' });
    const before = (await keyRows()).length;
    const byKey = await t.http
      .post('/users/current/apikeys')
      .set('Authorization', `ApiKey ${key}`)
      .send({ name: 'x' });
    expect(byKey.status).toBe(403);
    expect(byKey.body.detail).toMatch(/not with another API key/);
    const bodies: object[] = [
      {},
      { name: '' },
      { name: 7 },
      { name: 'n'.repeat(129) },
      { name: 'n', expires_at: 1893456000 },
      { name: 'n', expires_at: 'tomorrow' },
      { name: 'n', expires_at: '2030-01-01T00:00:00' },
      { name: 'n', expires_at: '2001-01-01T00:00:00Z' },
    ];
    for (const body of bodies) {
      const response = await t.http
        .post('/users/current/apikeys')
        .set('Authorization', `Bearer ${userToken}`)
        .send(body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    expect(await keyRows()).toHaveLength(before);

    const other = await t.userToken();
    const notMine = await t.http.delete(`/users/current/apikeys/1`).set('Authorization', `Bearer ${other}`);
    expect(notMine.status).toBe(404);
    const badId = await t.http
      .delete('/users/current/apikeys/abc')
      .set('Authorization', `Bearer ${userToken}`);
    expect(badId.status).toBe(400);
    expect(await keyRows()).toHaveLength(before);
    expect((await asKey('/users/current', key)).status).toBe(200);
  });
});
