import { DataSource } from 'typeorm';
import { createTestApp, type TestApp } from '../support/create-test-app.js';

describe('conventions of every area', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t.close();
  });

  it('echoes a caller X-Request-Id and makes one up otherwise', async () => {
    const echoed = await t.http.get('/health/live').set('X-Request-Id', 'trace-123');
    expect(echoed.headers['x-request-id']).toBe('trace-123');
    const generated = await t.http.get('/health/live');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends the security headers of helmet', async () => {
    const response = await t.http.get('/health/live');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['content-security-policy']).toContain("default-src 'self'");
    expect(response.headers['x-powered-by']).toBeUndefined();
  });

  it('asks browsers to upgrade every subresource to https only when it knows it is served over HTTPS', async () => {
    const policy = async (app: TestApp): Promise<string> =>
      (await app.http.get('/docs/')).headers['content-security-policy'];
    // Over plain HTTP under a LAN name, an upgrade would leave /docs and /status without scripts, styles and images.
    expect(await policy(t)).toContain("default-src 'self'");
    expect(await policy(t)).not.toContain('upgrade-insecure-requests');
    for (const [env, upgrades] of [
      [{ COOKIE_SECURE: 'true' }, true],
      [{ PUBLIC_BASE_URL: 'https://registry.example.org/' }, true],
      [{ PUBLIC_BASE_URL: 'http://registry.lan:3000' }, false],
    ] as const) {
      const other = await createTestApp(env);
      try {
        expect({ env, upgrades: (await policy(other)).includes('upgrade-insecure-requests') }).toEqual({
          env,
          upgrades,
        });
      } finally {
        await other.close();
      }
    }
  });

  describe('unknown routes answer in the shape of their area', () => {
    it('area A: 404 with the error object', async () => {
      const response = await t.http.get('/api/v1/auth/nothing-here');
      expect(response.status).toBe(404);
      expect(response.body).toEqual({
        error: { code: 404, title: 'Not Found', message: expect.any(String) },
      });
      const users = await t.http.put('/api/v1/users');
      expect(users.status).toBe(404);
      expect(users.body.error.code).toBe(404);
    });

    it('area C: the 500 envelope, before any token check', async () => {
      const response = await t.http.get('/api/v1/no-such-operation');
      expect(response.status).toBe(500);
      expect(response.body).toEqual({
        status: 'error',
        message: expect.stringContaining('the path is wrong'),
        status_code: 500,
        status_long_message: 'Server got itself in trouble',
        status_short_message: 'Internal Server Error',
      });
    });

    it('area B: a 404 problem document', async () => {
      const response = await t.http.get('/no/such/thing');
      expect(response.status).toBe(404);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toEqual({
        type: 'about:blank',
        title: 'Not Found',
        status: 404,
        detail: expect.any(String),
      });
    });
  });

  describe('a body over 1 MiB answers 413 in the shape of its area, with the request id', () => {
    const big = JSON.stringify({ username: 'x'.repeat(1024 * 1024 + 10), password: 'y' });

    it('area A', async () => {
      const response = await t.http.post('/api/v1/auth').set('Content-Type', 'application/json').send(big);
      expect(response.status).toBe(413);
      expect(response.body).toEqual({
        error: { code: 413, title: 'Payload Too Large', message: 'The request body is larger than 1 MiB' },
      });
      expect(response.headers['x-request-id']).toBeDefined();
    });

    it('area B', async () => {
      const response = await t.http
        .post('/users/current/workflows')
        .set('Content-Type', 'application/json')
        .send(big);
      expect(response.status).toBe(413);
      expect(response.body).toMatchObject({ status: 413, title: 'Payload Too Large' });
    });

    it('area C', async () => {
      const response = await t.http
        .post('/api/v1/vm/start')
        .set('Content-Type', 'application/json')
        .send(big);
      expect(response.status).toBe(413);
      expect(response.body).toEqual({
        status: 'error',
        message: 'The request body is larger than 1 MiB',
        status_code: 413,
        status_long_message: 'Entity is too large',
        status_short_message: 'Payload Too Large',
      });
    });
  });

  describe('health', () => {
    it('answers 503 on /health/ready while a migration is pending', async () => {
      const pending = await createTestApp();
      try {
        await pending.app.get(DataSource).undoLastMigration();
        const ready = await pending.http.get('/health/ready');
        expect(ready.status).toBe(503);
        expect(ready.body.details.migrations).toEqual({ status: 'down', message: 'migrations are pending' });
        await pending.http.get('/health/live').expect(200);
      } finally {
        await pending.close();
      }
    });

    it('answers live and ready without a token', async () => {
      await t.http.get('/health/live').expect(200);
      const ready = await t.http.get('/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body.details).toEqual({
        database: expect.objectContaining({ status: 'up' }),
        migrations: { status: 'up' },
      });
    });
  });

  describe('OpenAPI document', () => {
    it('serves /docs-json with the bearer, API key (both carriers), metrics, registry client, GitHub signature and GitLab token schemes and an operation id on every operation', async () => {
      const response = await t.http.get('/docs-json');
      expect(response.status).toBe(200);
      const document = response.body as {
        components: { securitySchemes: Record<string, unknown> };
        paths: Record<string, Record<string, { operationId?: string; responses: Record<string, unknown> }>>;
      };
      expect(document.components.securitySchemes).toEqual({
        bearer: expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }),
        apiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'Authorization' }),
        apiKeyHeader: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
        metrics: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
        'registry-client': expect.objectContaining({
          type: 'oauth2',
          flows: { clientCredentials: expect.objectContaining({ tokenUrl: '/oauth2/token' }) },
        }),
        'github-signature': expect.objectContaining({
          type: 'apiKey',
          in: 'header',
          name: 'X-Hub-Signature-256',
        }),
        'gitlab-token': expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Gitlab-Token' }),
      });
      const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
      expect(operations.length).toBeGreaterThan(8);
      for (const operation of operations) {
        expect(operation.operationId).toMatch(/^[a-z]+(-[a-z]+)*$/);
        expect(Object.keys(operation.responses).length).toBeGreaterThan(0);
      }
      const ids = operations.map((operation) => operation.operationId);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toEqual(expect.arrayContaining(['auth-post', 'auth-delete', 'users-get-current']));
    });

    it('serves the Swagger UI at /docs', async () => {
      const response = await t.http.get('/docs/');
      expect(response.status).toBe(200);
      expect(response.text).toContain('swagger-ui');
    });
  });
});
