import { randomUUID } from 'node:crypto';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { binaryBody, crateZip } from '../support/registry.js';

/** Visibility (owner and admins only, 404 for everybody else), tokens, base URLs and Swagger of the registry. */
describe('workflow registry access (API.md 2, 2.3, 2.9)', () => {
  let t: TestApp;
  let links: LinkServer;
  let alice: string;
  let bob: string;
  let admin: string;
  let uuid: string;
  let suiteUuid: string;
  let instanceUuid: string;

  beforeAll(async () => {
    t = await createTestApp();
    links = await LinkServer.start();
    alice = await t.userToken(['user']);
    bob = await t.userToken(['user']);
    admin = await t.login();
    const link = links.route('/crate.zip', { kind: 'bytes', body: crateZip({ marker: randomUUID() }) });
    const registered = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${alice}`)
      .send({ roc_link: link, version: '1.0' });
    expect(registered.status).toBe(201);
    uuid = registered.body.uuid;
    const suites = await t.http.get(`/workflows/${uuid}/suites`).set('Authorization', `Bearer ${alice}`);
    suiteUuid = suites.body.items[0].uuid;
    instanceUuid = suites.body.items[0].instances[0].uuid;
  });

  afterAll(async () => {
    await links.close();
    await t.close();
  });

  /** Every route of one workflow, as [method, path]. */
  const routes = (): [string, string][] => [
    ['GET', `/workflows/${uuid}`],
    ['GET', `/workflows/${uuid}?previous_versions=true&ro_crate=true`],
    ['GET', `/workflows/${uuid}/versions`],
    ['GET', `/workflows/${uuid}/versions/1.0`],
    ['GET', `/workflows/${uuid}/rocrate/1.0/download`],
    ['GET', `/workflows/${uuid}/suites`],
    ['GET', `/workflows/${uuid}/suites?version=1.0`],
    ['GET', `/suites/${suiteUuid}`],
    ['GET', `/suites/${suiteUuid}/instances`],
    ['GET', `/instances/${instanceUuid}`],
    ['DELETE', `/workflows/${uuid}/versions/1.0`],
  ];

  const call = (method: string, path: string) =>
    method === 'DELETE' ? t.http.delete(path) : t.http.get(path).buffer(true).parse(binaryBody);

  it('answers 404 to another user on every route, exactly as for a uuid that was never registered', async () => {
    for (const [method, path] of routes()) {
      const response = await call(method, path).set('Authorization', `Bearer ${bob}`);
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 404 });
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      const body = (
        Buffer.isBuffer(response.body) ? JSON.parse(response.body.toString('utf8')) : response.body
      ) as { detail: string };
      expect(body.detail).toMatch(/^No (workflow|test suite|test instance) [0-9a-f-]{36}$/);
    }
    const unknown = await t.http.get(`/workflows/${randomUUID()}`).set('Authorization', `Bearer ${bob}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toMatch(/^No workflow [0-9a-f-]{36}$/);
    // Bob's DELETE did nothing.
    expect((await t.http.get(`/workflows/${uuid}`).set('Authorization', `Bearer ${alice}`)).status).toBe(200);
  });

  it('shows the workflow to its owner and to admins on every read route', async () => {
    for (const token of [alice, admin]) {
      for (const [method, path] of routes().filter(([method]) => method === 'GET')) {
        const response = await call(method, path).set('Authorization', `Bearer ${token}`);
        expect({ path, status: response.status }).toEqual({ path, status: 200 });
      }
    }
  });

  it('answers 401 without a token on every route, registration and list included', async () => {
    const all: [string, string][] = [
      ['POST', '/users/current/workflows'],
      ['GET', '/users/current/workflows'],
      ...routes(),
    ];
    for (const [method, path] of all) {
      const request =
        method === 'POST'
          ? t.http.post(path).send({ roc_link: 'http://127.0.0.1:9/x.zip', version: '1' })
          : call(method, path);
      const response = await request;
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 401 });
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    const bad = await t.http.get(`/workflows/${uuid}`).set('Authorization', 'Bearer not-a-token');
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ type: 'about:blank', title: 'Unauthorized', status: 401 });
  });

  it('takes the token from X-Auth-Token too', async () => {
    const response = await t.http.get(`/workflows/${uuid}`).set('X-Auth-Token', alice);
    expect(response.status).toBe(200);
    expect(response.headers.vary).toMatch(/Authorization/);
  });

  it('answers 400 to a path uuid that is not a UUID', async () => {
    for (const path of ['/workflows/nope', '/suites/nope', '/instances/nope/', '/workflows/nope/versions']) {
      const response = await t.http.get(path).set('Authorization', `Bearer ${alice}`);
      expect({ path, status: response.status }).toEqual({ path, status: 400 });
      expect(response.body.errors[0].message).toMatch(/must be a UUID$/);
    }
  });

  it('builds base_url from the request host when PUBLIC_BASE_URL is unset, ignoring X-Forwarded-* without TRUST_PROXY', async () => {
    const response = await t.http
      .get(`/workflows/${uuid}`)
      .set('Authorization', `Bearer ${alice}`)
      .set('Host', 'registry.test:8443')
      .set('X-Forwarded-Proto', 'https')
      .set('X-Forwarded-Host', 'evil.example.com');
    expect(response.body.meta.base_url).toBe('http://registry.test:8443');
    expect(response.body.version.ro_crate.links.download).toBe(
      `http://registry.test:8443/workflows/${uuid}/rocrate/1.0/download`,
    );
  });

  it('documents every operation of the registry in the OpenAPI document', async () => {
    const document = (await t.http.get('/docs-json')).body as {
      paths: Record<
        string,
        Record<string, { operationId: string; responses: Record<string, unknown>; security?: unknown[] }>
      >;
    };
    const expected: [string, string, string][] = [
      ['post', '/users/current/workflows', 'user-workflows-post'],
      ['get', '/users/current/workflows', 'user-workflows-get'],
      ['get', '/workflows/{wf_uuid}', 'workflows-get-latest-version-by-id'],
      ['get', '/workflows/{wf_uuid}/versions', 'workflows-get-versions-by-id'],
      ['get', '/workflows/{wf_uuid}/versions/{wf_version}', 'workflows-get-version-by-id'],
      ['delete', '/workflows/{wf_uuid}/versions/{wf_version}', 'workflows-delete'],
      ['get', '/workflows/{wf_uuid}/rocrate/{wf_version}/download', 'workflows-rocrate-download'],
      ['get', '/workflows/{wf_uuid}/suites', 'workflows-get-suites'],
      ['get', '/suites/{suite_uuid}', 'suites-get-by-uuid'],
      ['get', '/suites/{suite_uuid}/instances', 'suites-get-instances'],
      ['get', '/instances/{instance_uuid}', 'instances-get-by-id'],
    ];
    for (const [method, path, operationId] of expected) {
      const operation = document.paths[path]?.[method];
      expect({ path, operationId: operation?.operationId }).toEqual({ path, operationId });
      expect(operation.security).toEqual([{ bearer: [] }]);
      expect(operation.responses['401']).toEqual(
        expect.objectContaining({
          content: {
            'application/problem+json': expect.objectContaining({
              schema: { $ref: '#/components/schemas/ProblemDto' },
              example: expect.objectContaining({ status: 401 }),
            }),
          },
        }),
      );
    }
    expect(document.paths['/users/current/workflows'].post.responses['409']).toBeDefined();
    expect(document.paths['/users/current/workflows'].post.responses['201']).toBeDefined();
  });
});
