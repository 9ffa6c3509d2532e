import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { crateZip } from '../support/registry.js';

function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  const line = text
    .split('\n')
    .find(
      (candidate) => candidate.startsWith(`${name}{`) && wanted.every((label) => candidate.includes(label)),
    );
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('/metrics', () => {
  let t: TestApp;
  const token = 'metrics-token-of-sufficient-length';

  beforeAll(async () => {
    t = await createTestApp({ METRICS_TOKEN: token });
  });

  afterAll(async () => {
    await t.close();
  });

  it('needs the METRICS_TOKEN bearer token when it is set', async () => {
    const refused = await t.http.get('/metrics');
    expect(refused.status).toBe(401);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    await t.http.get('/metrics').set('Authorization', 'Bearer wrong-token-wrong-token').expect(401);
    await t.http.get('/metrics').set('Authorization', `Bearer ${token}`).expect(200);
  });

  it('counts requests by route pattern and status, with a latency histogram', async () => {
    const read = async (): Promise<string> =>
      (await t.http.get('/metrics').set('Authorization', `Bearer ${token}`)).text;
    const before =
      sample(await read(), 'http_requests_total', { route: '/api/v1/users/:id', status: '404' }) ?? 0;
    const admin = await t.login();
    await t.http.get('/api/v1/users/999999').set('Authorization', `Bearer ${admin}`).expect(404);
    await t.http.get('/api/v1/users/999998').set('Authorization', `Bearer ${admin}`).expect(404);
    const text = await read();
    expect(sample(text, 'http_requests_total', { route: '/api/v1/users/:id', status: '404' })).toBe(
      before + 2,
    );
    expect(
      sample(text, 'http_requests_total', { method: 'POST', route: '/api/v1/auth', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(
      /http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/v1\/users\/:id",status="404"\}/,
    );
    expect(text).toContain('process_resident_memory_bytes');
  });
});

describe('/metrics of the registry and the clouds', () => {
  it('counts registrations by result and failures by cause, and cloud calls by provider and result', async () => {
    const t = await createTestApp();
    const links = await LinkServer.start();
    try {
      const auth = { Authorization: `Bearer ${await t.login()}` };
      const good = links.route('/good.zip', { kind: 'bytes', body: crateZip({}) });
      const missing = links.url('/missing.zip');
      const notZip = links.route('/not-a-zip.zip', { kind: 'bytes', body: 'plain text' });
      await t.http
        .post('/users/current/workflows')
        .set(auth)
        .send({ roc_link: good, version: '1' })
        .expect(201);
      await t.http
        .post('/users/current/workflows')
        .set(auth)
        .send({ roc_link: missing, version: '1' })
        .expect(400);
      await t.http
        .post('/users/current/workflows')
        .set(auth)
        .send({ roc_link: notZip, version: '1' })
        .expect(400);
      await t.http.get('/api/v1/nodes').set(auth).expect(200);
      await t.http.put('/api/v1/vm/stop').set(auth).send({ node: '999' }).expect(404);

      const text = (await t.http.get('/metrics')).text;
      expect(sample(text, 'crate_registrations_total', { result: 'created' })).toBe(1);
      expect(sample(text, 'crate_registrations_total', { result: 'failed' })).toBe(2);
      expect(sample(text, 'crate_registration_failures_total', { cause: 'download' })).toBe(1);
      expect(sample(text, 'crate_registration_failures_total', { cause: 'archive' })).toBe(1);
      expect(
        sample(text, 'cloud_calls_total', { provider: 'dummy', operation: 'list_nodes', result: 'ok' }),
      ).toBe(1);
      expect(
        sample(text, 'cloud_calls_total', {
          provider: 'dummy',
          operation: 'destroy_node',
          result: 'refused',
        }),
      ).toBe(1);
    } finally {
      await links.close();
      await t.close();
    }
  });
});
