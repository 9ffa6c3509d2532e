import { randomUUID } from 'node:crypto';
import type { AuthUser } from '../../src/auth/auth-user.js';
import { TestStatusService } from '../../src/test-monitoring/test-status.service.js';
import { WorkflowsService } from '../../src/workflows/workflows.service.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { binaryBody, crateZip, storedArchives } from '../support/registry.js';

type Caller = 'anonymous' | 'another user' | 'owner' | 'admin';
type Visibility = 'private' | 'public';

/** One registered workflow and the uuids of its first suite and instance. */
interface Registered {
  uuid: string;
  suiteUuid: string;
  instanceUuid: string;
}

/**
 * Visibility (API.md 2, 5.1: public workflows for anybody, private ones for the owner and admins
 * only, 404 for everybody else), tokens, base URLs and Swagger of the registry.
 */
describe('workflow registry access (API.md 2, 2.3, 2.9, 5.1)', () => {
  let t: TestApp;
  let links: LinkServer;
  let alice: string;
  let bob: string;
  let admin: string;
  let uuid: string;
  const workflows = {} as Record<Visibility, Registered>;

  const register = async (token: string, body: Record<string, unknown> = {}): Promise<Registered> => {
    const link = links.route(`/${randomUUID()}.zip`, {
      kind: 'bytes',
      body: crateZip({ marker: randomUUID() }),
    });
    const registered = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${token}`)
      .send({ roc_link: link, version: '1.0', ...body });
    expect(registered.status).toBe(201);
    const suites = await t.http
      .get(`/workflows/${registered.body.uuid}/suites`)
      .set('Authorization', `Bearer ${token}`);
    return {
      uuid: registered.body.uuid,
      suiteUuid: suites.body.items[0].uuid,
      instanceUuid: suites.body.items[0].instances[0].uuid,
    };
  };

  beforeAll(async () => {
    t = await createTestApp();
    links = await LinkServer.start();
    alice = await t.userToken(['user']);
    bob = await t.userToken(['user']);
    admin = await t.login();
    workflows.private = await register(alice);
    workflows.public = await register(alice, { public: true });
    ({ uuid } = workflows.private);
  });

  afterAll(async () => {
    await links.close();
    await t.close();
  });

  const tokenOf = (caller: Caller): string | undefined =>
    ({ anonymous: undefined, 'another user': bob, owner: alice, admin })[caller];

  const as = <R extends { set(name: string, value: string): R }>(request: R, caller: Caller): R => {
    const token = tokenOf(caller);
    return token ? request.set('Authorization', `Bearer ${token}`) : request;
  };

  /** Every read of one workflow (API.md 2.3–2.7), as paths. */
  const reads = (w: Registered): string[] => [
    `/workflows/${w.uuid}`,
    `/workflows/${w.uuid}?previous_versions=true&ro_crate=true`,
    `/workflows/${w.uuid}/versions`,
    `/workflows/${w.uuid}/versions/1.0`,
    `/workflows/${w.uuid}/rocrate/1.0/download`,
    `/workflows/${w.uuid}/rocrate/1.0/metadata`,
    `/workflows/${w.uuid}/suites`,
    `/workflows/${w.uuid}/suites?version=1.0`,
    `/workflows/${w.uuid}/status`,
    `/suites/${w.suiteUuid}`,
    `/suites/${w.suiteUuid}/instances`,
    `/suites/${w.suiteUuid}/status`,
    `/instances/${w.instanceUuid}`,
    `/instances/${w.instanceUuid}/latest-builds`,
    `/instances/${w.instanceUuid}/stats`,
    `/workflows/${w.uuid}/history?days=7`,
    `/workflows/${w.uuid}/badge.svg`,
    `/workflows/${w.uuid}/badge.json?label=ci`,
  ];

  /** The HTML status page of one workflow (API.md 5.4): the same rule, a 404 page. */
  const pages = (w: Registered): string[] => [`/status/${w.uuid}`];

  const get = (path: string) => t.http.get(path).buffer(true).parse(binaryBody);
  const bodyOf = (response: { body: unknown }): Record<string, unknown> =>
    (Buffer.isBuffer(response.body) ? JSON.parse(response.body.toString('utf8')) : response.body) as Record<
      string,
      unknown
    >;

  const callers: Caller[] = ['anonymous', 'another user', 'owner', 'admin'];
  const matrix = callers.flatMap((caller) =>
    (['private', 'public'] as const).map((visibility) => ({ caller, visibility })),
  );

  describe.each(matrix)('$caller × $visibility workflow', ({ caller, visibility }) => {
    const sees = visibility === 'public' || caller === 'owner' || caller === 'admin';

    it(
      sees ? 'reads it on every read route' : 'gets 404 on every read route, as for a uuid never registered',
      async () => {
        for (const path of reads(workflows[visibility])) {
          const response = await as(get(path), caller);
          expect({ path, status: response.status }).toEqual({ path, status: sees ? 200 : 404 });
          // Another origin's script may read what anybody may (an anonymous read, a public badge),
          // never what a credential opened, and never with credentials.
          const open =
            sees && (caller === 'anonymous' || (/\/badge\./.test(path) && visibility === 'public'));
          expect({ path, allowOrigin: response.headers['access-control-allow-origin'] }).toEqual({
            path,
            allowOrigin: open ? '*' : undefined,
          });
          expect(response.headers['access-control-allow-credentials']).toBeUndefined();
          if (!sees) {
            expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
            expect(bodyOf(response).detail).toMatch(/^No (workflow|test suite|test instance) [0-9a-f-]{36}$/);
          }
        }
      },
    );

    it(sees ? 'reads its status page' : 'gets the 404 page for its status page', async () => {
      for (const path of pages(workflows[visibility])) {
        const response = await as(t.http.get(path), caller);
        expect({ path, status: response.status }).toEqual({ path, status: sees ? 200 : 404 });
        expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(response.headers['access-control-allow-origin']).toBe(
          sees && caller === 'anonymous' ? '*' : undefined,
        );
      }
      const listed = (await as(t.http.get('/status'), caller)).text;
      expect(listed.includes(`/status/${workflows[visibility].uuid}`)).toBe(sees);
    });

    it(`${sees ? 'finds' : 'does not find'} it in GET /workflows`, async () => {
      const response = await as(t.http.get('/workflows?status=false'), caller);
      expect(response.status).toBe(200);
      const listed = (response.body.items as { uuid: string; public: boolean }[]).find(
        (item) => item.uuid === workflows[visibility].uuid,
      );
      expect(listed === undefined ? 'absent' : `public=${listed.public}`).toBe(
        sees ? `public=${visibility === 'public'}` : 'absent',
      );
    });

    const writeStatus = caller === 'anonymous' ? 401 : !sees ? 404 : caller === 'another user' ? 403 : 200;

    it(`answers ${writeStatus} to the badge token's GET and DELETE`, async () => {
      const path = `/workflows/${workflows[visibility].uuid}/badge-token`;
      expect((await as(t.http.get(path), caller)).status).toBe(writeStatus);
      if (writeStatus !== 200) {
        expect((await as(t.http.delete(path), caller)).status).toBe(writeStatus);
      }
    });

    it(`answers ${writeStatus} to a write (PUT, DELETE of the workflow or a version)${writeStatus === 200 ? ' (PUT shown; deletions below)' : ''}`, async () => {
      const w = workflows[visibility];
      const put = await as(t.http.put(`/workflows/${w.uuid}`), caller).send({
        public: visibility === 'public',
      });
      expect(put.status).toBe(writeStatus);
      expect(put.headers['content-type']).toMatch(
        writeStatus === 200 ? /^application\/json/ : /^application\/problem\+json/,
      );
      if (writeStatus !== 200) {
        for (const path of [`/workflows/${w.uuid}`, `/workflows/${w.uuid}/versions/1.0`]) {
          const deleted = await as(t.http.delete(path), caller);
          expect({ path, status: deleted.status }).toEqual({ path, status: writeStatus });
        }
      }
      // Still there, still as it was.
      const after = await t.http.get(`/workflows/${w.uuid}`).set('Authorization', `Bearer ${alice}`);
      expect(after.status).toBe(200);
      expect(after.body.public).toBe(visibility === 'public');
    });
  });

  it('lists every workflow to an admin, and only the public ones plus their own to others', async () => {
    const own = await register(bob);
    const uuids = async (caller: Caller) =>
      ((await as(t.http.get('/workflows?status=false'), caller)).body.items as { uuid: string }[]).map(
        (item) => item.uuid,
      );
    expect(await uuids('another user')).toEqual(expect.arrayContaining([own.uuid, workflows.public.uuid]));
    expect(await uuids('another user')).not.toContain(workflows.private.uuid);
    expect(await uuids('admin')).toEqual(
      expect.arrayContaining([own.uuid, workflows.public.uuid, workflows.private.uuid]),
    );
    expect(await uuids('anonymous')).not.toContain(own.uuid);
    // Newest first, paged as the caller's own list is.
    const paged = await as(t.http.get('/workflows?limit=1&offset=0&status=false'), 'admin');
    expect(paged.body.items.map((item: { uuid: string }) => item.uuid)).toEqual([own.uuid]);
    const withStatus = await t.http.get('/workflows?limit=1');
    expect(withStatus.body.items[0].status).toEqual({
      aggregate_test_status: 'not_available',
      latest_build: null,
    });
  });

  it('keeps callers apart when their identical-looking status, badge and list reads are asked for in one turn', async () => {
    // Through the app's own services, so that the reads certainly share a turn of the event loop
    // (identical reads of one turn share one computation; HTTP requests may arrive in several).
    const userOf = async (token: string): Promise<AuthUser> => {
      const me = (await t.http.get('/users/current').set('Authorization', `Bearer ${token}`)).body;
      return { id: me.id, username: me.username, roles: me.roles, jti: 'j', exp: 0, via: 'bearer' };
    };
    const [owner, stranger] = [await userOf(alice), await userOf(bob)];
    const status = t.app.get(TestStatusService);
    const registry = t.app.get(WorkflowsService);
    const hidden = workflows.private.uuid;
    const page = { limit: 100 };
    const settled = await Promise.allSettled([
      status.currentWorkflowStatus(hidden, undefined, owner),
      status.currentWorkflowStatus(hidden, undefined, stranger),
      status.currentWorkflowStatus(hidden, undefined, undefined),
      status.currentBadge(hidden, undefined, owner, undefined),
      status.currentBadge(hidden, undefined, stranger, undefined),
      registry.list(owner, page, true, t.baseUrl),
      registry.list(stranger, page, true, t.baseUrl),
      registry.listVisible(owner, page, true),
      registry.listVisible(stranger, page, true),
      registry.listVisible(undefined, page, true),
    ]);
    const outcome = settled.map((result) =>
      result.status === 'rejected'
        ? 'not found'
        : Array.isArray(result.value)
          ? result.value.some((item) => ('workflow' in item ? item.workflow.uuid : item.uuid) === hidden)
          : 'seen',
    );
    expect(outcome).toEqual([
      'seen',
      'not found',
      'not found',
      'seen',
      'not found',
      true,
      false,
      true,
      false,
      false,
    ]);
  });

  it('makes a workflow public and private again with PUT, and renames it', async () => {
    const w = await register(alice);
    expect((await t.http.get(`/workflows/${w.uuid}`)).status).toBe(404);
    const made = await t.http
      .put(`/workflows/${w.uuid}`)
      .set('Authorization', `Bearer ${alice}`)
      .send({ public: true, name: 'Renamed workflow', ignored: 'extra members are dropped' });
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({ uuid: w.uuid, name: 'Renamed workflow', public: true });
    expect(made.body.version).toMatchObject({ version: '1.0', is_latest: true });
    const anonymous = await t.http.get(`/workflows/${w.uuid}`);
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.name).toBe('Renamed workflow');
    const back = await t.http
      .put(`/workflows/${w.uuid}`)
      .set('Authorization', `Bearer ${admin}`)
      .send({ public: false });
    expect(back.body).toMatchObject({ name: 'Renamed workflow', public: false });
    expect((await t.http.get(`/workflows/${w.uuid}`)).status).toBe(404);
    const unchanged = await t.http
      .put(`/workflows/${w.uuid}`)
      .set('Authorization', `Bearer ${alice}`)
      .send({});
    expect(unchanged.body).toMatchObject({ name: 'Renamed workflow', public: false });
  });

  it('answers 400 to a public that is not a JSON boolean and to a bad name, at registration and in PUT', async () => {
    for (const value of ['true', 1, 'yes', {}]) {
      const registered = await t.http
        .post('/users/current/workflows')
        .set('Authorization', `Bearer ${alice}`)
        .send({ roc_link: 'http://127.0.0.1:9/never-fetched.zip', version: '1.0', public: value });
      expect({ value, status: registered.status }).toEqual({ value, status: 400 });
      expect(registered.body.errors[0].field).toBe('public');
    }
    for (const body of [
      { public: 'true' },
      { public: 0 },
      { name: '' },
      { name: 'x'.repeat(513) },
      { name: 7 },
    ]) {
      const response = await t.http
        .put(`/workflows/${uuid}`)
        .set('Authorization', `Bearer ${alice}`)
        .send(body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body.errors[0].field).toBe(Object.keys(body)[0]);
    }
    const notJson = await t.http
      .put(`/workflows/${uuid}`)
      .set('Authorization', `Bearer ${alice}`)
      .set('Content-Type', 'application/json')
      .send('{"public": tru');
    expect(notJson.status).toBe(400);
    for (const path of [
      '/workflows?limit=0',
      '/workflows?limit=1001',
      '/workflows?offset=-1',
      '/workflows?status=maybe',
    ]) {
      expect({ path, status: (await t.http.get(path)).status }).toEqual({ path, status: 400 });
    }
    const unknown = randomUUID();
    expect(
      (await t.http.put(`/workflows/${unknown}`).set('Authorization', `Bearer ${alice}`).send({})).status,
    ).toBe(404);
    expect(
      (await t.http.delete(`/workflows/${unknown}`).set('Authorization', `Bearer ${alice}`)).status,
    ).toBe(404);
    expect(
      (await t.http.put('/workflows/nope').set('Authorization', `Bearer ${alice}`).send({})).status,
    ).toBe(400);
  });

  it.each(['owner', 'admin'] as const)(
    'deletes a whole workflow with every version, its builds and archives when the %s asks',
    async (caller) => {
      const w = await register(alice, { public: true });
      const second = links.route(`/${randomUUID()}.zip`, {
        kind: 'bytes',
        body: crateZip({ marker: randomUUID() }),
      });
      expect(
        (
          await t.http
            .post('/users/current/workflows')
            .set('Authorization', `Bearer ${alice}`)
            .send({ roc_link: second, version: '2.0', uuid: w.uuid })
        ).status,
      ).toBe(201);
      const archivesBefore = storedArchives(t).length;
      const deleted = await as(t.http.delete(`/workflows/${w.uuid}`), caller);
      expect(deleted.status).toBe(204);
      // Both versions' archives (distinct bytes, used by no other workflow) are gone.
      expect(storedArchives(t).length).toBe(archivesBefore - 2);
      for (const path of [`/workflows/${w.uuid}`, `/suites/${w.suiteUuid}`, `/instances/${w.instanceUuid}`]) {
        expect({ path, status: (await as(t.http.get(path), caller)).status }).toEqual({ path, status: 404 });
      }
      expect((await as(t.http.delete(`/workflows/${w.uuid}`), caller)).status).toBe(404);
      const listed = (await t.http.get('/workflows?status=false')).body.items as { uuid: string }[];
      expect(listed.map((item) => item.uuid)).not.toContain(w.uuid);
    },
  );

  it('answers 401 without a token to every write, the registration and the own list; 404 to private reads', async () => {
    const writes: [string, string][] = [
      ['POST', '/users/current/workflows'],
      ['GET', '/users/current/workflows'],
      ['PUT', `/workflows/${uuid}`],
      ['DELETE', `/workflows/${uuid}`],
      ['DELETE', `/workflows/${uuid}/versions/1.0`],
    ];
    for (const [method, path] of writes) {
      const request =
        method === 'POST'
          ? t.http.post(path).send({ roc_link: 'http://127.0.0.1:9/x.zip', version: '1' })
          : method === 'PUT'
            ? t.http.put(path).send({ public: true })
            : method === 'DELETE'
              ? t.http.delete(path)
              : t.http.get(path);
      const response = await request;
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 401 });
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    const bad = await t.http.get(`/workflows/${uuid}`).set('Authorization', 'Bearer not-a-token');
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ type: 'about:blank', title: 'Unauthorized', status: 401 });
    // A bad token on an open read is refused too, never read as anonymous.
    const badOnPublic = await t.http.get(`/workflows/${workflows.public.uuid}`).set('X-Auth-Token', 'nope');
    expect(badOnPublic.status).toBe(401);
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
    // [method, path, operation id, token optional (reads of public workflows)]
    const expected: [string, string, string, boolean][] = [
      ['post', '/users/current/workflows', 'user-workflows-post', false],
      ['get', '/users/current/workflows', 'user-workflows-get', false],
      ['get', '/workflows', 'workflows-get', true],
      ['get', '/workflows/{wf_uuid}', 'workflows-get-latest-version-by-id', true],
      ['put', '/workflows/{wf_uuid}', 'workflows-put', false],
      ['delete', '/workflows/{wf_uuid}', 'workflows-delete-all', false],
      ['get', '/workflows/{wf_uuid}/versions', 'workflows-get-versions-by-id', true],
      ['get', '/workflows/{wf_uuid}/versions/{wf_version}', 'workflows-get-version-by-id', true],
      ['delete', '/workflows/{wf_uuid}/versions/{wf_version}', 'workflows-delete', false],
      ['get', '/workflows/{wf_uuid}/rocrate/{wf_version}/download', 'workflows-rocrate-download', true],
      ['get', '/workflows/{wf_uuid}/suites', 'workflows-get-suites', true],
      ['get', '/workflows/{wf_uuid}/status', 'workflows-get-status', true],
      ['get', '/suites/{suite_uuid}', 'suites-get-by-uuid', true],
      ['get', '/suites/{suite_uuid}/instances', 'suites-get-instances', true],
      ['get', '/suites/{suite_uuid}/status', 'suites-get-status', true],
      ['get', '/instances/{instance_uuid}', 'instances-get-by-id', true],
      ['get', '/instances/{instance_uuid}/latest-builds', 'instances-get-builds', true],
      ['get', '/instances/{instance_uuid}/stats', 'instances-get-stats', true],
      ['get', '/workflows/{wf_uuid}/history', 'workflows-get-history', true],
      ['get', '/workflows/{wf_uuid}/badge.svg', 'workflows-get-badge-svg', true],
      ['get', '/workflows/{wf_uuid}/badge.json', 'workflows-get-badge-json', true],
      ['get', '/workflows/{wf_uuid}/badge-token', 'workflows-get-badge-token', false],
      ['delete', '/workflows/{wf_uuid}/badge-token', 'workflows-delete-badge-token', false],
      ['get', '/status', 'status-page', true],
      ['get', '/status/{wf_uuid}', 'status-page-workflow', true],
    ];
    for (const [method, path, operationId, optional] of expected) {
      const operation = document.paths[path]?.[method];
      expect({ path, operationId: operation?.operationId }).toEqual({ path, operationId });
      expect({ path, security: operation.security }).toEqual({
        path,
        security: optional
          ? [{ bearer: [] }, { apiKey: [] }, { apiKeyHeader: [] }, {}]
          : [{ bearer: [] }, { apiKey: [] }, { apiKeyHeader: [] }],
      });
      if (method !== 'get') {
        expect({ path, forbidden: operation.responses['403'] !== undefined }).toEqual({
          path,
          forbidden: path !== '/users/current/workflows',
        });
      }
      // The status pages answer their errors as HTML pages.
      const errorType = path.startsWith('/status') ? 'text/html' : 'application/problem+json';
      expect(Object.keys((operation.responses['401'] as { content: object }).content)).toEqual([errorType]);
      if (errorType !== 'text/html')
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
