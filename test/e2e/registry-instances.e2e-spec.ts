import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { countRows, crateMetadata, crateZip, snapshot, UUID } from '../support/registry.js';

interface InstanceReply {
  uuid: string;
  name: string | null;
  managed: boolean;
  resource: string;
  roc_instance: string | null;
  origin: 'crate' | 'api';
  service: { type: string; url: string; uuid: string };
}

/** Instances through the API and a version's crate metadata (API.md 7.3). */
describe(`test instances through the API, crate metadata (${testDatabase()})`, () => {
  let t: TestApp;
  let links: LinkServer;
  let github: GithubFake;
  let dataSource: DataSource;
  let scheduler: RefreshScheduler;
  let alice: string;
  let bob: string;
  let admin: string;
  let uuid: string;
  let suiteUuid: string;
  let crateInstance: InstanceReply;
  let metadata: object;

  const as = (token: string) => ({
    get: (path: string) => t.http.get(path).set('Authorization', `Bearer ${token}`),
    post: (path: string, body: object) =>
      t.http.post(path).set('Authorization', `Bearer ${token}`).send(body),
    put: (path: string, body: object) => t.http.put(path).set('Authorization', `Bearer ${token}`).send(body),
    delete: (path: string) => t.http.delete(path).set('Authorization', `Bearer ${token}`),
  });
  const newInstance = (repo: string, extra: object = {}) => ({
    name: `${repo} on GitHub`,
    service: { type: 'github', url: `${github.url}/` },
    resource: GithubFake.resource('octo', repo, 'ci.yml'),
    ...extra,
  });
  const add = async (token: string, body: object): Promise<InstanceReply> => {
    const response = await as(token).post(`/suites/${suiteUuid}/instances`, body);
    expect({ status: response.status, body: response.body as unknown }).toEqual({
      status: 201,
      body: expect.anything(),
    });
    return response.body as InstanceReply;
  };
  const instanceId = async (instance: string): Promise<number> => {
    const [row] = await dataSource.query<{ id: number | string }[]>(
      'SELECT id FROM test_instances WHERE uuid = ?',
      [instance],
    );
    return Number(row.id);
  };
  const latestBuilds = async (instance: string): Promise<string[]> => {
    const response = await as(alice).get(`/instances/${instance}/latest-builds`).expect(200);
    return (response.body as { items: { build_id: string }[] }).items.map((build) => build.build_id);
  };
  /** One refresh tick a little after now: every instance due by then is checked. */
  const refresh = () => scheduler.tick(new Date(Date.now() + 1000));

  beforeAll(async () => {
    t = await createTestApp();
    dataSource = t.app.get(DataSource);
    scheduler = t.app.get(RefreshScheduler);
    links = await LinkServer.start();
    github = new GithubFake();
    await github.start();
    alice = await t.userToken(['user']);
    bob = await t.userToken(['user']);
    admin = await t.login();
    const spec = {
      marker: randomUUID(),
      instances: [
        {
          id: '#crate_ci',
          name: 'from the crate',
          url: github.url,
          resource: GithubFake.resource('octo', 'crate', 'ci.yml'),
        },
      ],
    };
    metadata = crateMetadata(spec);
    const link = links.route('/crate.zip', { kind: 'bytes', body: crateZip(spec) });
    const registered = await as(alice).post('/users/current/workflows', { roc_link: link, version: '1.0' });
    expect(registered.status).toBe(201);
    uuid = registered.body.uuid;
    const suites = await as(alice).get(`/workflows/${uuid}/suites`).expect(200);
    suiteUuid = suites.body.items[0].uuid;
    crateInstance = suites.body.items[0].instances[0];
  });

  afterAll(async () => {
    await github.stop();
    await links.close();
    await t.close();
  });

  describe('GET /workflows/{wf_uuid}/rocrate/{wf_version}/metadata', () => {
    it("answers the crate's JSON-LD as application/ld+json, with an ETag", async () => {
      const response = await as(alice).get(`/workflows/${uuid}/rocrate/1.0/metadata`);
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/ld\+json/);
      expect(response.body).toEqual(metadata);
      const etag = response.headers.etag;
      expect(etag).toMatch(/^"[0-9a-f]{64}-metadata"$/);
      const again = await as(alice).get(`/workflows/${uuid}/rocrate/1.0/metadata`).set('If-None-Match', etag);
      expect(again.status).toBe(304);
      expect((await as(admin).get(`/workflows/${uuid}/rocrate/1.0/metadata`)).body).toEqual(metadata);
    });

    it('answers 404 for an unknown version, to another user or nobody, and for an unknown workflow', async () => {
      for (const [token, path] of [
        [alice, `/workflows/${uuid}/rocrate/2.0/metadata`],
        [bob, `/workflows/${uuid}/rocrate/1.0/metadata`],
        [alice, `/workflows/${randomUUID()}/rocrate/1.0/metadata`],
      ] as const) {
        const response = await as(token).get(path);
        expect({ path, status: response.status }).toEqual({ path, status: 404 });
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      }
      expect((await as(alice).get('/workflows/not-a-uuid/rocrate/1.0/metadata')).status).toBe(400);
      // Without a token: a private workflow does not exist (API.md 5.1).
      expect((await t.http.get(`/workflows/${uuid}/rocrate/1.0/metadata`)).status).toBe(404);
    });
  });

  describe('POST /suites/{suite_uuid}/instances', () => {
    it('adds an unmanaged instance on the shared service row, due for a check at once, and the refresh checks it', async () => {
      const added = await add(alice, newInstance('api'));
      expect(added).toEqual({
        uuid: expect.stringMatching(UUID),
        name: 'api on GitHub',
        managed: false,
        resource: 'repos/octo/api/actions/workflows/ci.yml',
        roc_instance: null,
        origin: 'api',
        // The trailing slash goes: the same (type, url) as the crate's instance, the same service row.
        service: crateInstance.service,
        last_check: null,
      });
      expect((await as(alice).get(`/instances/${added.uuid}`)).body).toEqual(added);
      const listed = await as(alice).get(`/suites/${suiteUuid}/instances`).expect(200);
      expect((listed.body as { items: InstanceReply[] }).items.map((item) => item.uuid)).toEqual([
        crateInstance.uuid,
        added.uuid,
      ]);
      const id = await instanceId(added.uuid);
      expect(
        await countRows(dataSource, 'SELECT COUNT(*) AS n FROM test_check_states WHERE instance_id = ?', [
          id,
        ]),
      ).toBe(1);

      github.addRun('octo', 'api', 'ci.yml', { id: 7001, startedAt: new Date(), conclusion: 'failure' });
      await refresh();
      expect(await latestBuilds(added.uuid)).toEqual(['7001_1']);
      // Checked by the refresh (per-version builds, API.md 7.2, may list the version's ref first).
      expect(github.count(GithubFake.runsPath('octo', 'api', 'ci.yml'))).toBeGreaterThan(0);
    });

    it('takes the resource in any form the crate may use, stored in its canonical form', async () => {
      const added = await add(
        alice,
        newInstance('full', { resource: `${github.url}/repos/octo/full/actions/workflows/ci.yml` }),
      );
      expect(added.resource).toBe('repos/octo/full/actions/workflows/ci.yml');
      expect(added.service.url).toBe(github.url);
    });

    it('lets an admin add to any suite, and an API key act for its owner', async () => {
      await add(admin, newInstance('by-admin'));
      const key = await as(alice).post('/users/current/apikeys', { name: 'instances' }).expect(201);
      const byKey = await t.http
        .post(`/suites/${suiteUuid}/instances`)
        .set('X-API-Key', (key.body as { key: string }).key)
        .send(newInstance('by-key'));
      expect(byKey.status).toBe(201);
    });

    it("refuses bad input with a clear 400, and someone else's suite with 404, storing nothing", async () => {
      const before = await snapshot(t, dataSource);
      const cases: [string, object, RegExp][] = [
        [
          'an unknown service type',
          newInstance('x', { service: { type: 'circleci', url: github.url } }),
          /circleci.*one of github/,
        ],
        ['no service', { name: 'x', resource: 'repos/o/r/actions/workflows/ci.yml' }, /service/],
        ['a service that is not an object', newInstance('x', { service: 'github' }), /service/],
        ['a service without a url', newInstance('x', { service: { type: 'github' } }), /url/],
        [
          'a service url that is not http(s)',
          newInstance('x', { service: { type: 'github', url: 'ftp://ci.example.org' } }),
          /http or https/,
        ],
        [
          'a resource GitHub cannot check',
          newInstance('x', { resource: 'repos/octo/x' }),
          /not a GitHub workflow/,
        ],
        [
          'a resource with ..',
          newInstance('x', { resource: 'repos/octo/../actions/workflows/ci.yml' }),
          /not a GitHub workflow/,
        ],
        ['no resource', { name: 'x', service: { type: 'github', url: github.url } }, /resource/],
        ['an empty resource', newInstance('x', { resource: '' }), /resource/],
        [
          'a resource that is too long',
          newInstance('x', { resource: `repos/o/r/actions/workflows/${'y'.repeat(1100)}` }),
          /resource/,
        ],
        [
          'no name',
          { service: { type: 'github', url: github.url }, resource: 'repos/o/r/actions/workflows/ci.yml' },
          /name/,
        ],
        ['a name that is not a string', newInstance('x', { name: 42 }), /name/],
        ['a managed instance', newInstance('x', { managed: true }), /managed must be false/],
      ];
      for (const [what, body, detail] of cases) {
        const response = await as(alice).post(`/suites/${suiteUuid}/instances`, body);
        expect({ what, status: response.status }).toEqual({ what, status: 400 });
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect({ what, detail: response.body.detail as string }).toEqual({
          what,
          detail: expect.stringMatching(detail),
        });
      }
      const notHis = await as(bob).post(`/suites/${suiteUuid}/instances`, newInstance('bob'));
      const unknown = await as(bob).post(`/suites/${randomUUID()}/instances`, newInstance('bob'));
      expect([notHis.status, unknown.status]).toEqual([404, 404]);
      expect(notHis.body).toEqual({ ...unknown.body, detail: expect.stringMatching(/^No test suite /) });
      expect((await as(alice).post('/suites/not-a-uuid/instances', newInstance('x'))).status).toBe(400);
      expect((await t.http.post(`/suites/${suiteUuid}/instances`).send(newInstance('x'))).status).toBe(401);
      expect(await snapshot(t, dataSource)).toEqual(before);
    });
  });

  it("answers 403 to a caller who may read a public workflow's suite but not change it", async () => {
    const link = links.route('/public.zip', { kind: 'bytes', body: crateZip({ marker: randomUUID() }) });
    const registered = await as(alice).post('/users/current/workflows', {
      roc_link: link,
      version: '1.0',
      public: true,
    });
    expect(registered.status).toBe(201);
    const suites = await as(bob).get(`/workflows/${registered.body.uuid}/suites`).expect(200);
    const publicSuite = suites.body.items[0].uuid as string;
    const before = await snapshot(t, dataSource);
    const refused = await as(bob).post(`/suites/${publicSuite}/instances`, newInstance('bob'));
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/Only the owner of the workflow .* or an admin may change it/);
    expect(
      (await t.http.post(`/suites/${publicSuite}/instances`).send(newInstance('anonymous'))).status,
    ).toBe(401);
    expect(await snapshot(t, dataSource)).toEqual(before);
  });

  describe('PUT and DELETE /instances/{uuid}', () => {
    it('renames an instance, and on a new resource forgets the old builds and checks the new one at once', async () => {
      const added = await add(alice, newInstance('old'));
      expect(
        await dataSource.query('SELECT workflow_key FROM github_workflow_instances WHERE instance_id = ?', [
          await instanceId(added.uuid),
        ]),
      ).toEqual([{ workflow_key: 'octo/old/ci.yml' }]);
      github.addRun('octo', 'old', 'ci.yml', { id: 8001, startedAt: new Date() });
      github.addRun('octo', 'new', 'ci.yml', { id: 9001, startedAt: new Date(), conclusion: 'failure' });
      await refresh();
      expect(await latestBuilds(added.uuid)).toEqual(['8001_1']);

      const renamed = await as(alice).put(`/instances/${added.uuid}`, { name: 'renamed' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toEqual({
        ...added,
        name: 'renamed',
        last_check: { at: expect.any(String), ok: true, error: null },
      });
      expect(await latestBuilds(added.uuid)).toEqual(['8001_1']);

      const moved = await as(alice).put(`/instances/${added.uuid}`, {
        resource: GithubFake.resource('octo', 'new', 'ci.yml'),
      });
      expect(moved.status).toBe(200);
      // What was learnt of the old resource goes, its last check too.
      expect(moved.body).toEqual({
        ...added,
        name: 'renamed',
        resource: 'repos/octo/new/actions/workflows/ci.yml',
        last_check: null,
      });
      expect(await latestBuilds(added.uuid)).toEqual([]);
      // The GitHub webhook (API.md 6.5) finds it by its new workflow.
      expect(
        await dataSource.query('SELECT workflow_key FROM github_workflow_instances WHERE instance_id = ?', [
          await instanceId(added.uuid),
        ]),
      ).toEqual([{ workflow_key: 'octo/new/ci.yml' }]);
      const [state] = await dataSource.query<Record<string, unknown>[]>(
        'SELECT etag, last_checked_at, failure_count, lease_owner FROM test_check_states WHERE instance_id = ?',
        [await instanceId(added.uuid)],
      );
      expect(state).toEqual({ etag: null, last_checked_at: null, failure_count: 0, lease_owner: null });
      await refresh();
      expect(await latestBuilds(added.uuid)).toEqual(['9001_1']);
    });

    it('deletes an instance with its builds and check state, and takes it out of monitoring', async () => {
      const added = await add(alice, newInstance('gone'));
      github.addRun('octo', 'gone', 'ci.yml', { id: 6001, startedAt: new Date() });
      await refresh();
      expect(await latestBuilds(added.uuid)).toEqual(['6001_1']);
      const id = await instanceId(added.uuid);

      expect((await as(alice).delete(`/instances/${added.uuid}`)).status).toBe(204);
      expect((await as(alice).get(`/instances/${added.uuid}`)).status).toBe(404);
      for (const table of ['builds', 'test_check_states']) {
        expect({
          table,
          n: await countRows(dataSource, `SELECT COUNT(*) AS n FROM ${table} WHERE instance_id = ?`, [id]),
        }).toEqual({ table, n: 0 });
      }
      const calls = github.count(GithubFake.runsPath('octo', 'gone', 'ci.yml'));
      await scheduler.tick(new Date(Date.now() + 3_600_000));
      expect(github.count(GithubFake.runsPath('octo', 'gone', 'ci.yml'))).toBe(calls);
      expect((await as(alice).delete(`/instances/${added.uuid}`)).status).toBe(404);
    });

    it("changes and deletes the crate's own instances too (API.md 7.3), which stay origin crate; others' are out of reach (404)", async () => {
      const added = await add(alice, newInstance('kept'));
      const stored = await as(alice).get(`/workflows/${uuid}/rocrate/1.0/metadata`).expect(200);
      const renamed = await as(alice).put(`/instances/${crateInstance.uuid}`, {
        name: 'renamed by its owner',
      });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toEqual({
        ...crateInstance,
        name: 'renamed by its owner',
        roc_instance: '#crate_ci',
        origin: 'crate',
        // Checked by earlier tests, against a workflow the fake does not have.
        last_check: {
          at: expect.any(String),
          ok: false,
          error: 'workflow octo/crate/ci.yml not found (404)',
        },
      });
      expect((await as(alice).get(`/instances/${crateInstance.uuid}`)).body).toEqual(renamed.body);
      // The stored crate stays as registered.
      expect((await as(alice).get(`/workflows/${uuid}/rocrate/1.0/metadata`)).body).toEqual(stored.body);
      const before = await snapshot(t, dataSource);
      for (const response of [
        await as(bob).put(`/instances/${added.uuid}`, { name: 'bob was here' }),
        await as(bob).delete(`/instances/${added.uuid}`),
        await as(alice).put(`/instances/${randomUUID()}`, { name: 'nobody' }),
      ]) {
        expect(response.status).toBe(404);
      }
      const bad: [object, RegExp][] = [
        [{ resource: 'job/a' }, /not a GitHub workflow/],
        [
          { resource: 'https://ghe.example.org/api/v3/repos/o/r/actions/workflows/ci.yml' },
          /another service/,
        ],
        [{ name: '' }, /name/],
        [{ name: 7 }, /name/],
      ];
      for (const [body, detail] of bad) {
        const response = await as(alice).put(`/instances/${added.uuid}`, body);
        expect({ body, status: response.status }).toEqual({ body, status: 400 });
        expect(response.body.detail).toMatch(detail);
      }
      expect(await snapshot(t, dataSource)).toEqual(before);
      expect((await as(alice).get(`/instances/${added.uuid}`)).body).toEqual(added);

      expect((await as(admin).delete(`/instances/${crateInstance.uuid}`)).status).toBe(204);
      expect((await as(alice).get(`/instances/${crateInstance.uuid}`)).status).toBe(404);
      const left = await as(alice).get(`/suites/${suiteUuid}/instances`).expect(200);
      expect((left.body as { items: InstanceReply[] }).items.map((item) => item.origin)).not.toContain(
        'crate',
      );
      expect((await as(alice).get(`/workflows/${uuid}/rocrate/1.0/metadata`)).body).toEqual(stored.body);
    });
  });
});
