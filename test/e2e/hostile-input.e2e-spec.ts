import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { expectEnvelope } from '../support/orchestration.js';

/** `{"a":{"a":…}}` nested `depth` deep, as text (JSON.stringify would recurse as deep). */
function nested(depth: number, leaf = '1'): string {
  return '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
}

describe(`hostile input and a newcomer's first requests (${testDatabase()})`, () => {
  let t: TestApp;
  let admin: string;

  beforeAll(async () => {
    t = await createTestApp();
    admin = await t.login();
  });

  afterAll(async () => {
    await t.close();
  });

  describe('a JSON body nested deeper than 64 levels', () => {
    const deep = nested(10_000);

    it('is a 400 in area A shape on POST /api/v1/auth', async () => {
      const response = await t.http.post('/api/v1/auth').set('Content-Type', 'application/json').send(deep);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        error: { code: 400, title: 'Bad Request', message: 'The JSON body is nested deeper than 64 levels' },
      });
    });

    it('is a 400 problem on POST /users/current/workflows', async () => {
      const response = await t.http
        .post('/users/current/workflows')
        .set('Authorization', `Bearer ${admin}`)
        .set('Content-Type', 'application/json')
        .send(deep);
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toEqual(
        expect.objectContaining({ status: 400, detail: 'The JSON body is nested deeper than 64 levels' }),
      );
    });

    it('is a 400 envelope on POST /api/v1/vm/start/default, before the token is looked at', async () => {
      const response = await t.http
        .post('/api/v1/vm/start/default')
        .set('Content-Type', 'application/json')
        .send(deep);
      expectEnvelope(response, 400, 'The JSON body is nested deeper than 64 levels');
    });

    it('lets 64 levels through to the usual validation', async () => {
      // The outer object is level 1: `extra` adds 63 more, then 64.
      const body = `{"username":"admin","password":"x","extra":${nested(63)}}`;
      const response = await t.http.post('/api/v1/auth').set('Content-Type', 'application/json').send(body);
      expect(response.status).toBe(403);
      const deeper = `{"username":"admin","password":"x","extra":${nested(64)}}`;
      const refused = await t.http.post('/api/v1/auth').set('Content-Type', 'application/json').send(deeper);
      expect(refused.status).toBe(400);
    });

    it('counts arrays as levels too', async () => {
      const body = '['.repeat(100) + ']'.repeat(100);
      const response = await t.http.post('/api/v1/auth').set('Content-Type', 'application/json').send(body);
      expect(response.status).toBe(400);
      expect(response.body.error.message).toBe('The JSON body is nested deeper than 64 levels');
    });
  });

  describe('a cloud segment outside [A-Za-z0-9_-]{1,64}', () => {
    it.each([
      ['GET', '/api/v1/nodes/bad!cloud', 'bad!cloud'],
      ['GET', '/api/v1/images/has%20space', 'has%20space'],
      ['GET', `/api/v1/sizes/${'c'.repeat(65)}`, `${'c'.repeat(64)}…`],
      ['POST', '/api/v1/vm/start/bad$cloud', 'bad$cloud'],
      ['PUT', '/api/v1/vm/stop/a.b', 'a.b'],
    ])('%s %s is the 500 envelope without a token', async (method, path, shown) => {
      const response = await t.http[method.toLowerCase() as 'get'](path);
      expectEnvelope(response, 500, `Cloud '${shown}' is not valid or the path is wrong`);
    });

    it('is the same 500 with a valid token', async () => {
      const response = await t.http.get('/api/v1/nodes/bad!cloud').set('Authorization', `Bearer ${admin}`);
      expectEnvelope(response, 500, "Cloud 'bad!cloud' is not valid or the path is wrong");
    });

    it('leaves a good cloud to the token check, with or without .json or a trailing slash', async () => {
      for (const path of [
        '/api/v1/nodes/default',
        '/api/v1/nodes/default.json',
        '/api/v1/nodes/',
        '/api/v1',
      ]) {
        const response = await t.http.get(path);
        expect({ path, status: response.status }).toEqual({ path, status: 401 });
      }
      const ok = await t.http.get('/api/v1/nodes/default.json').set('Authorization', `Bearer ${admin}`);
      expect(ok.status).toBe(200);
    });
  });

  it('redirects GET / to the status page (API.md 5.4)', async () => {
    const response = await t.http.get('/');
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe('/status');
  });
});
