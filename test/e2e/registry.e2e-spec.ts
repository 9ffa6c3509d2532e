import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, startApp, type TestApp } from '../support/create-test-app.js';
import {
  binaryBody,
  countRows,
  crateZip,
  FIXTURE_CRATES,
  ISO_UTC,
  storedArchives,
  UUID,
  type CrateSpec,
} from '../support/registry.js';

/** What API.md 2.5 shows for a suite of the fixtures, uuids aside. */
interface ExpectedSuite {
  roc_suite: string;
  name: string | null;
  definition: { test_engine: { type: string | null; version: string | null }; path: string | null };
  instances: {
    name: string | null;
    resource: string;
    roc_instance: string;
    service: { type: string; url: string };
  }[];
}

const TRAVIS_SUITE: ExpectedSuite = {
  roc_suite: '#test1',
  name: 'test1',
  definition: {
    test_engine: { type: 'planemo', version: '>=0.70' },
    path: 'test/test1/sort-and-change-case-test.yml',
  },
  instances: [
    {
      name: 'test1_1',
      resource: 'repo/1002447',
      roc_instance: '#test1_1',
      service: { type: 'travis', url: 'https://api.travis-ci.org' },
    },
  ],
};

const cwlSuite = (n: number): ExpectedSuite => ({
  roc_suite: `#test${n}`,
  name: `test${n}`,
  definition: {
    test_engine: { type: 'planemo', version: '>=0.70' },
    path: `test/test${n}/base_freq_sum_tests.yml`,
  },
  instances: [],
});

/** What the repository checks (API.md 12) find in each fixture: the ids and severities of its issues. */
const FIXTURES: { file: string; name: string; suites: ExpectedSuite[]; issues: [string, string][] }[] = [
  {
    file: FIXTURE_CRATES.lifemonitorExample,
    name: 'galaxy-workflow-example-with-tests',
    suites: [TRAVIS_SUITE],
    issues: [],
  },
  {
    file: FIXTURE_CRATES.galaxySortChangeCase,
    name: 'galaxy-workflow-example-with-tests',
    suites: [TRAVIS_SUITE],
    issues: [],
  },
  {
    file: FIXTURE_CRATES.cwlBaseFreqSum,
    name: 'basefreqsum',
    suites: [cwlSuite(1), cwlSuite(2)],
    // Its suites have definitions only: the profile allows that, monitoring has nothing to watch.
    issues: [['testing.TestSuiteWithoutInstances', 'warning']],
  },
  {
    file: FIXTURE_CRATES.galaxyWfRepo,
    name: 'test-galaxy-wf-repo',
    suites: [],
    issues: [
      ['wftest.RootDataEntityMentions', 'error'],
      ['testing.MissingTestSuite', 'error'],
    ],
  },
];

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe('workflow registry (API.md 2.1–2.5, 2.7)', () => {
  let t: TestApp;
  let links: LinkServer;
  let alice: string;
  let aliceId: number;
  let aliceName: string;
  let served = 0;

  beforeAll(async () => {
    t = await createTestApp();
    links = await LinkServer.start();
    alice = await t.userToken(['user']);
    const me = await t.http.get('/users/current').set('Authorization', `Bearer ${alice}`);
    aliceId = me.body.id;
    aliceName = me.body.username;
  });

  afterAll(async () => {
    await links.close();
    await t.close();
  });

  /** Serves bytes at a fresh path of the link server and returns the link. */
  const serve = (body: Buffer): string => links.route(`/crate-${++served}.zip`, { kind: 'bytes', body });

  const register = (token: string, body: Record<string, unknown>) =>
    t.http.post('/users/current/workflows').set('Authorization', `Bearer ${token}`).send(body);

  const get = (token: string, path: string) => t.http.get(path).set('Authorization', `Bearer ${token}`);

  const download = (token: string, path: string) =>
    t.http.get(path).set('Authorization', `Bearer ${token}`).buffer(true).parse(binaryBody);

  /** Registers a small generated crate and returns the reply body. */
  const registerCrate = async (
    token: string,
    version: string,
    spec: CrateSpec = {},
    extra: Record<string, unknown> = {},
  ): Promise<{ uuid: string; name: string; wf_version: string }> => {
    const response = await register(token, { roc_link: serve(crateZip(spec)), version, ...extra });
    expect(response.status).toBe(201);
    return response.body;
  };

  const suiteShape = (suite: ExpectedSuite) => ({
    uuid: expect.stringMatching(UUID),
    roc_suite: suite.roc_suite,
    name: suite.name,
    definition: suite.definition,
    instances: suite.instances.map((instance) => ({
      uuid: expect.stringMatching(UUID),
      name: instance.name,
      managed: false,
      resource: instance.resource,
      roc_instance: instance.roc_instance,
      origin: 'crate',
      service: { ...instance.service, uuid: expect.stringMatching(UUID) },
      // Not checked yet (API.md 11).
      last_check: null,
    })),
  });

  describe.each(FIXTURES)('the fixture crate $file', (fixture) => {
    const bytes = readFileSync(fixture.file);
    let uuid: string;
    let link: string;

    beforeAll(async () => {
      link = serve(bytes);
      const response = await register(alice, { roc_link: link, version: '1.0' });
      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        name: fixture.name,
        uuid: expect.stringMatching(UUID),
        wf_version: '1.0',
      });
      uuid = response.body.uuid;
    });

    it('reads back as the workflow at its latest version (2.3)', async () => {
      const response = await get(alice, `/workflows/${uuid}`);
      expect(response.status).toBe(200);
      const base = t.baseUrl;
      expect(response.body).toEqual({
        uuid,
        name: fixture.name,
        public: false,
        // Not registered from a repository (API.md 12): nothing followed.
        follow: null,
        // Re-run after the service default (API.md 11).
        rerun_interval_days: null,
        meta: {
          base_url: base,
          resource: `/workflows/${uuid}`,
          created: expect.stringMatching(ISO_UTC),
          modified: expect.stringMatching(ISO_UTC),
        },
        version: {
          uuid: expect.stringMatching(UUID),
          version: '1.0',
          is_latest: true,
          name: fixture.name,
          submitter: { id: aliceId, username: aliceName },
          ro_crate: {
            links: {
              download: `${base}/workflows/${uuid}/rocrate/1.0/download`,
              external: link,
              metadata: `${base}/workflows/${uuid}/rocrate/1.0/metadata`,
            },
            source: null,
          },
          issues: fixture.issues.map(([id, severity]) => ({
            id,
            name: expect.any(String),
            description: expect.any(String),
            severity,
          })),
        },
      });
      expect(response.body.meta.created).toBe(response.body.meta.modified);
    });

    it('gives its crate metadata with ro_crate=true, read back from the stored archive', async () => {
      const response = await get(alice, `/workflows/${uuid}?ro_crate=true&previous_versions=true`);
      expect(response.status).toBe(200);
      expect(response.body.version.ro_crate.metadata).toEqual(
        JSON.parse(await unzipMetadata(fixture.file)) as object,
      );
      expect(response.body.previous_versions).toEqual([]);
    });

    it('lists its versions and reads one version (2.4)', async () => {
      const versions = await get(alice, `/workflows/${uuid}/versions`);
      expect(versions.status).toBe(200);
      const resource = `/workflows/${uuid}/versions`;
      expect(versions.body).toEqual({
        workflow: { uuid, name: fixture.name, links: { self: `${t.baseUrl}${resource}` } },
        versions: [expect.objectContaining({ version: '1.0', is_latest: true })],
        links: { self: `${t.baseUrl}${resource}` },
        meta: {
          api_version: '0.15.0',
          base_url: t.baseUrl,
          resource,
          created: expect.stringMatching(ISO_UTC),
          modified: expect.stringMatching(ISO_UTC),
        },
      });
      const one = await get(alice, `/workflows/${uuid}/versions/1.0`);
      expect(one.status).toBe(200);
      const latest = await get(alice, `/workflows/${uuid}`);
      expect(one.body).toEqual(latest.body);
      expect(versions.body.versions[0]).toEqual(latest.body.version);
    });

    it('has the suites, definitions and instances of its crate (2.5, 2.7)', async () => {
      const suites = await get(alice, `/workflows/${uuid}/suites`);
      expect(suites.status).toBe(200);
      expect(suites.body).toEqual({ items: fixture.suites.map(suiteShape) });
      expect((await get(alice, `/workflows/${uuid}/suites?version=1.0`)).body).toEqual(suites.body);
      for (const suite of suites.body.items) {
        const one = await get(alice, `/suites/${suite.uuid}`);
        expect(one.status).toBe(200);
        expect(one.body).toEqual(suite);
        const instances = await get(alice, `/suites/${suite.uuid}/instances`);
        expect(instances.status).toBe(200);
        expect(instances.body).toEqual({ items: suite.instances });
        for (const instance of suite.instances) {
          const read = await get(alice, `/instances/${instance.uuid}`);
          expect(read.status).toBe(200);
          expect(read.body).toEqual(instance);
        }
      }
    });

    it('downloads byte for byte as registered, with its type, name and ETag', async () => {
      const response = await download(alice, `/workflows/${uuid}/rocrate/1.0/download`);
      expect(response.status).toBe(200);
      expect(Buffer.compare(response.body as Buffer, bytes)).toBe(0);
      expect(response.headers['content-type']).toBe('application/zip');
      expect(response.headers['content-length']).toBe(String(bytes.length));
      expect(response.headers['content-disposition']).toMatch(
        new RegExp(`^attachment; filename="?${uuid}_1\\.0\\.crate\\.zip"?$`),
      );
      expect(response.headers.etag).toBe(`"${sha256(bytes)}"`);
    });

    it('is in the list of its owner (2.2)', async () => {
      const response = await get(alice, '/users/current/workflows');
      expect(response.status).toBe(200);
      expect(response.body.items).toContainEqual({
        uuid,
        name: fixture.name,
        latest_version: '1.0',
        versions: ['1.0'],
        public: false,
        status: { aggregate_test_status: 'not_available', latest_build: null },
      });
    });
  });

  it('keeps one test service per (type, url), shared by the instances of different workflows', async () => {
    const first = await registerCrate(alice, '1', { marker: randomUUID() });
    const second = await registerCrate(alice, '1', { marker: randomUUID() });
    const [a] = (await get(alice, `/workflows/${first.uuid}/suites`)).body.items;
    const [b] = (await get(alice, `/workflows/${second.uuid}/suites`)).body.items;
    expect(a.instances[0].service).toEqual(b.instances[0].service);
    expect(a.instances[0].uuid).not.toBe(b.instances[0].uuid);
  });

  it('stores versions with the same bytes once and answers 304 to a matching If-None-Match', async () => {
    const bytes = crateZip({ marker: randomUUID() });
    const link = serve(bytes);
    const before = storedArchives(t).length;
    const one = await register(alice, { roc_link: link, version: 'a' });
    const two = await register(alice, { roc_link: link, version: 'b', uuid: one.body.uuid });
    const other = await register(alice, { roc_link: link, version: 'a' });
    expect([one.status, two.status, other.status]).toEqual([201, 201, 201]);
    expect(storedArchives(t).length).toBe(before + 1);

    const path = `/workflows/${one.body.uuid}/rocrate/b/download`;
    const etag = `"${sha256(bytes)}"`;
    const notModified = await get(alice, path).set('If-None-Match', etag);
    expect(notModified.status).toBe(304);
    expect(notModified.headers.etag).toBe(etag);
    expect(notModified.text).toBeFalsy();
    const listed = await get(alice, path).set('If-None-Match', `"other", ${etag}`);
    expect(listed.status).toBe(304);
    // fetch() sends no-cache with every If-None-Match of its own; the origin still answers 304.
    const fromFetch = await get(alice, path).set('If-None-Match', etag).set('Cache-Control', 'no-cache');
    expect(fromFetch.status).toBe(304);
    const changed = await download(alice, path).set('If-None-Match', '"something-else"');
    expect(changed.status).toBe(200);
    expect(Buffer.compare(changed.body as Buffer, bytes)).toBe(0);
  });

  it('answers 404 without the ETag when the archive went away after the version was looked up', async () => {
    const bytes = crateZip({ marker: randomUUID() });
    const { uuid } = await registerCrate(alice, '1', { marker: randomUUID() });
    const reply = await register(alice, { roc_link: serve(bytes), version: '2', uuid });
    expect(reply.status).toBe(201);
    // What a concurrent deletion leaves between the lookup of the version and the read of its file.
    const digest = sha256(bytes);
    rmSync(join(t.dataDir, 'crates', digest.slice(0, 2), `${digest}.zip`));

    const read = await get(alice, `/workflows/${uuid}?ro_crate=true`);
    const fetched = await get(alice, `/workflows/${uuid}/rocrate/2/download`);
    for (const response of [read, fetched]) {
      expect({ status: response.status, etag: response.headers.etag }).toEqual({
        status: 404,
        etag: undefined,
      });
      expect(response.body.detail).toBe(`The workflow ${uuid} has no version '2'`);
    }
  });

  describe('the name', () => {
    it("is the body's name first", async () => {
      const reply = await registerCrate(alice, '1', { name: 'root name' }, { name: 'body name' });
      expect(reply.name).toBe('body name');
      expect((await get(alice, `/workflows/${reply.uuid}`)).body.name).toBe('body name');
    });

    it("is the root dataset's name without one in the body", async () => {
      expect((await registerCrate(alice, '1', { name: 'root name', mainName: 'main name' })).name).toBe(
        'root name',
      );
    });

    it("is the main workflow's name when the root dataset has none", async () => {
      expect((await registerCrate(alice, '1', { name: null, mainName: 'main name' })).name).toBe('main name');
    });
  });

  it('reads a crate whose files sit under one top-level folder', async () => {
    const reply = await registerCrate(alice, '1', { folder: 'my-repo-main', name: 'in a folder' });
    expect(reply.name).toBe('in a folder');
    const suites = await get(alice, `/workflows/${reply.uuid}/suites`);
    expect(suites.body.items).toHaveLength(1);
  });

  it('makes up a uuid when none is given, and keeps the one given', async () => {
    const given = randomUUID();
    expect((await registerCrate(alice, '1', {}, { uuid: given })).uuid).toBe(given);
    const made = await registerCrate(alice, '1');
    expect(made.uuid).toMatch(UUID);
    expect(made.uuid).not.toBe(given);
  });

  it("keeps a registry's uuid of any version, and every path that names it finds it", async () => {
    // WorkflowHub (SEEK) mints version-0 uuids; the variant nibble is not RFC 4122's either.
    for (const given of ['86da0a30-d2cd-013a-a07d-000c29a94011', '00000000-0000-0000-c000-0000000000ff']) {
      expect((await registerCrate(alice, '1', {}, { uuid: given })).uuid).toBe(given);
      for (const path of ['', '/versions', '/versions/1', '/suites', '/status']) {
        expect((await get(alice, `/workflows/${given}${path}`)).status).toBe(200);
      }
    }
  });

  it('schedules an immediate first check of the new instances', async () => {
    const before = Date.now();
    const reply = await registerCrate(alice, '1', { marker: randomUUID() });
    const [suite] = (await get(alice, `/workflows/${reply.uuid}/suites`)).body.items;
    const rows = await t.app
      .get(DataSource)
      .query<
        { next_check_at: string | Date; lease_owner: null; failure_count: number; last_checked_at: null }[]
      >(
        `SELECT c.next_check_at, c.lease_owner, c.failure_count, c.last_checked_at
         FROM test_check_states c INNER JOIN test_instances i ON i.id = c.instance_id WHERE i.uuid = ?`,
        [suite.instances[0].uuid],
      );
    expect(rows).toHaveLength(1);
    const due = new Date(
      rows[0].next_check_at instanceof Date
        ? rows[0].next_check_at
        : `${rows[0].next_check_at.replace(' ', 'T')}Z`,
    ).getTime();
    // MariaDB keeps whole seconds.
    expect(due).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(due).toBeLessThanOrEqual(Date.now());
    expect(rows[0]).toMatchObject({ lease_owner: null, last_checked_at: null });
    expect(Number(rows[0].failure_count)).toBe(0);
  });

  describe('versions', () => {
    it('treats version labels that differ only in case as two versions, on every database', async () => {
      const first = await registerCrate(alice, '1.0-RC', { marker: randomUUID() });
      const second = await registerCrate(alice, '1.0-rc', { marker: randomUUID() }, { uuid: first.uuid });
      expect(second.wf_version).toBe('1.0-rc');
      const upper = await get(alice, `/workflows/${first.uuid}/versions/1.0-RC`);
      expect(upper.body.version.version).toBe('1.0-RC');
      await get(alice, `/workflows/${first.uuid}/versions/1.0-Rc`).expect(404);
    });

    it('a new version by the owner becomes the latest; the older ones stay, older first', async () => {
      const first = await registerCrate(alice, '1.0', { name: 'first name', marker: randomUUID() });
      const second = await registerCrate(
        alice,
        '1.1',
        { name: 'second name', marker: randomUUID() },
        { uuid: first.uuid },
      );
      expect(second).toEqual({ uuid: first.uuid, name: 'second name', wf_version: '1.1' });

      const latest = await get(alice, `/workflows/${first.uuid}?previous_versions=true`);
      expect(latest.body.name).toBe('second name');
      expect(latest.body.version).toMatchObject({ version: '1.1', is_latest: true });
      expect(latest.body.previous_versions).toEqual([
        expect.objectContaining({ version: '1.0', is_latest: false }),
      ]);
      expect(Date.parse(latest.body.meta.modified)).toBeGreaterThanOrEqual(
        Date.parse(latest.body.meta.created),
      );

      const older = await get(alice, `/workflows/${first.uuid}/versions/1.0?previous_versions=true`);
      expect(older.body.name).toBe('first name');
      expect(older.body.version).toMatchObject({ version: '1.0', is_latest: false });
      expect(older.body.previous_versions).toEqual([]);
      expect(older.body.meta).toEqual(latest.body.meta);

      const versions = await get(alice, `/workflows/${first.uuid}/versions`);
      expect(versions.body.workflow).toEqual({
        uuid: first.uuid,
        name: 'second name',
        links: { self: `${t.baseUrl}/workflows/${first.uuid}/versions` },
      });
      expect(versions.body.versions.map((v: { version: string }) => v.version)).toEqual(['1.0', '1.1']);

      const suites = await get(alice, `/workflows/${first.uuid}/suites?version=1.0`);
      expect(suites.status).toBe(200);
      expect(suites.body.items[0].uuid).not.toBe(
        (await get(alice, `/workflows/${first.uuid}/suites`)).body.items[0].uuid,
      );
    });

    it('answers 404 for a version the workflow does not have', async () => {
      const reply = await registerCrate(alice, '1.0');
      for (const path of [
        `/workflows/${reply.uuid}/versions/2.0`,
        `/workflows/${reply.uuid}/suites?version=2.0`,
        `/workflows/${reply.uuid}/rocrate/2.0/download`,
      ]) {
        const response = await get(alice, path);
        expect(response.status).toBe(404);
        expect(response.body.detail).toBe(`The workflow ${reply.uuid} has no version '2.0'`);
      }
      const gone = await t.http
        .delete(`/workflows/${reply.uuid}/versions/2.0`)
        .set('Authorization', `Bearer ${alice}`);
      expect(gone.status).toBe(404);
    });

    it('keeps versions whose labels need escaping in a URL', async () => {
      const label = 'v 1.0+rc#1?ü';
      const reply = await registerCrate(alice, label);
      const read = await get(alice, `/workflows/${reply.uuid}/versions/${encodeURIComponent(label)}`);
      expect(read.status).toBe(200);
      const link: string = read.body.version.ro_crate.links.download;
      expect(link).toBe(`${t.baseUrl}/workflows/${reply.uuid}/rocrate/${encodeURIComponent(label)}/download`);
      const downloaded = await download(alice, link.slice(t.baseUrl.length));
      expect(downloaded.status).toBe(200);
      expect(downloaded.headers['content-disposition']).toMatch(
        /^attachment; filename="[^"]+"; filename\*=UTF-8''/,
      );
    });
  });

  describe('the list (2.2)', () => {
    let bob: string;
    const order: string[] = [];

    beforeAll(async () => {
      bob = await t.userToken(['user']);
      for (const version of ['1', '2', '3']) {
        order.push((await registerCrate(bob, version, { name: `bob ${version}` })).uuid);
      }
      // A new version moves the first workflow to the top.
      await registerCrate(bob, '1.1', { name: 'bob 1 again' }, { uuid: order[0] });
    });

    it("shows the caller's own workflows, the one whose latest version was registered last first", async () => {
      const response = await get(bob, '/users/current/workflows');
      expect(response.status).toBe(200);
      expect(response.body.items.map((item: { uuid: string }) => item.uuid)).toEqual([
        order[0],
        order[2],
        order[1],
      ]);
      expect(response.body.items[0]).toEqual({
        uuid: order[0],
        name: 'bob 1 again',
        latest_version: '1.1',
        versions: ['1', '1.1'],
        public: false,
        status: { aggregate_test_status: 'not_available', latest_build: null },
      });
    });

    it('leaves the status out with status=false', async () => {
      const response = await get(bob, '/users/current/workflows?status=false');
      expect(response.body.items[0]).toEqual({
        uuid: order[0],
        name: 'bob 1 again',
        latest_version: '1.1',
        versions: ['1', '1.1'],
        public: false,
      });
    });

    it('pages with limit and offset', async () => {
      const page = await get(bob, '/users/current/workflows?limit=1&offset=1&status=false');
      expect(page.status).toBe(200);
      expect(page.body.items.map((item: { uuid: string }) => item.uuid)).toEqual([order[2]]);
      const rest = await get(bob, '/users/current/workflows?offset=2');
      expect(rest.body.items.map((item: { uuid: string }) => item.uuid)).toEqual([order[1]]);
      const past = await get(bob, '/users/current/workflows?offset=10&limit=1000');
      expect(past.body).toEqual({ items: [] });
    });

    it.each([
      ['limit=0', 'limit must be an integer from 1 to 1000'],
      ['limit=1001', 'limit must be an integer from 1 to 1000'],
      ['limit=ten', 'limit must be an integer from 1 to 1000'],
      ['offset=-1', `offset must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}`],
      ['status=maybe', 'status must be true or false'],
    ])('answers 400 to %s', async (query, detail) => {
      const response = await get(bob, `/users/current/workflows?${query}`);
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toEqual({
        type: 'about:blank',
        title: 'Bad Request',
        status: 400,
        detail,
        errors: [{ field: query.split('=')[0], message: detail }],
      });
    });

    it("does not show other users' workflows, not even to an admin", async () => {
      const admin = await t.login();
      const mine = await get(admin, '/users/current/workflows');
      expect(mine.body.items.map((item: { uuid: string }) => item.uuid)).not.toContain(order[0]);
    });

    // Last of this block: it changes bob's list.
    it('puts a workflow back where its remaining latest version belongs when its latest is deleted', async () => {
      await t.http
        .delete(`/workflows/${order[0]}/versions/1.1`)
        .set('Authorization', `Bearer ${bob}`)
        .expect(204);
      const listed = await get(bob, '/users/current/workflows?status=false');
      expect(listed.body.items).toEqual([
        expect.objectContaining({ uuid: order[2] }),
        expect.objectContaining({ uuid: order[1] }),
        { uuid: order[0], name: 'bob 1', latest_version: '1', versions: ['1'], public: false },
      ]);
      const page = await get(bob, '/users/current/workflows?limit=1&offset=2&status=false');
      expect(page.body.items.map((item: { uuid: string }) => item.uuid)).toEqual([order[0]]);
    });
  });

  describe('deletion', () => {
    const database = () => t.app.get(DataSource);

    const rowsOf = async (uuid: string): Promise<Record<string, number>> => {
      const count = (sql: string): Promise<number> => countRows(database(), sql, [uuid]);
      return {
        workflows: await count('SELECT COUNT(*) AS n FROM workflows WHERE uuid = ?'),
        versions: await count(
          'SELECT COUNT(*) AS n FROM workflow_versions v JOIN workflows w ON w.id = v.workflow_id WHERE w.uuid = ?',
        ),
        suites: await count(
          'SELECT COUNT(*) AS n FROM test_suites s JOIN workflow_versions v ON v.id = s.version_id ' +
            'JOIN workflows w ON w.id = v.workflow_id WHERE w.uuid = ?',
        ),
        instances: await count(
          'SELECT COUNT(*) AS n FROM test_instances i JOIN test_suites s ON s.id = i.suite_id ' +
            'JOIN workflow_versions v ON v.id = s.version_id JOIN workflows w ON w.id = v.workflow_id WHERE w.uuid = ?',
        ),
      };
    };

    const archiveExists = (bytes: Buffer): boolean => {
      const digest = sha256(bytes);
      return existsSync(join(t.dataDir, 'crates', digest.slice(0, 2), `${digest}.zip`));
    };

    const permutations = (items: string[]): string[][] =>
      items.length <= 1
        ? [items]
        : items.flatMap((item) =>
            permutations(items.filter((other) => other !== item)).map((rest) => [item, ...rest]),
          );

    it.each(permutations(['1', '2', '3']).map((order) => [order.join(' then ')]))(
      'deleting %s keeps exactly one latest version while any remain, then removes the workflow',
      async (label) => {
        const order = label.split(' then ');
        const shared = crateZip({ marker: randomUUID() });
        const own = crateZip({ marker: randomUUID() });
        // Versions 1 and 2 share one archive; version 3 has its own.
        const bytesOf: Record<string, Buffer> = { '1': shared, '2': shared, '3': own };
        let uuid: string | undefined;
        for (const version of ['1', '2', '3']) {
          const response = await register(alice, {
            roc_link: serve(bytesOf[version]),
            version,
            ...(uuid ? { uuid } : {}),
          });
          expect(response.status).toBe(201);
          uuid = response.body.uuid;
        }
        const remaining = ['1', '2', '3'];
        for (const version of order) {
          const deleted = await t.http
            .delete(`/workflows/${uuid}/versions/${version}`)
            .set('Authorization', `Bearer ${alice}`);
          expect(deleted.status).toBe(204);
          remaining.splice(remaining.indexOf(version), 1);

          const rows = await rowsOf(uuid!);
          expect(rows.versions).toBe(remaining.length);
          expect(rows.suites).toBe(remaining.length);
          expect(rows.instances).toBe(remaining.length);
          expect(archiveExists(shared)).toBe(remaining.includes('1') || remaining.includes('2'));
          expect(archiveExists(own)).toBe(remaining.includes('3'));

          if (remaining.length === 0) {
            expect(rows.workflows).toBe(0);
            expect((await get(alice, `/workflows/${uuid}`)).status).toBe(404);
            expect((await get(alice, `/workflows/${uuid}/versions`)).status).toBe(404);
            continue;
          }
          const versions = await get(alice, `/workflows/${uuid}/versions`);
          expect(versions.body.versions.map((v: { version: string }) => v.version)).toEqual(remaining);
          const latest = versions.body.versions.filter((v: { is_latest: boolean }) => v.is_latest);
          expect(latest).toHaveLength(1);
          expect(latest[0].version).toBe(remaining[remaining.length - 1]);
          const read = await get(alice, `/workflows/${uuid}`);
          expect(read.body.version.version).toBe(remaining[remaining.length - 1]);
          const listed = await get(alice, '/users/current/workflows?status=false');
          expect(listed.body.items).toContainEqual(
            expect.objectContaining({
              uuid,
              latest_version: remaining[remaining.length - 1],
              versions: remaining,
            }),
          );
        }
      },
    );

    it("removes the version's builds with it, and keeps the shared test services", async () => {
      const first = await registerCrate(alice, '1', { marker: randomUUID() });
      await registerCrate(alice, '2', { marker: randomUUID() }, { uuid: first.uuid });
      const [suite] = (await get(alice, `/workflows/${first.uuid}/suites?version=1`)).body.items;
      const instance = suite.instances[0];
      const db = database();
      const [{ id }] = await db.query<{ id: number }[]>('SELECT id FROM test_instances WHERE uuid = ?', [
        instance.uuid,
      ]);
      await db.query(
        'INSERT INTO builds (instance_id, build_id, status, started_at, duration_seconds, url) VALUES (?, ?, ?, ?, ?, ?)',
        [id, '42_1', 'passed', '2024-01-01 00:00:00', 12, 'https://github.com/o/r/actions/runs/42'],
      );
      const services = await countRows(db, 'SELECT COUNT(*) AS n FROM test_services');

      const deleted = await t.http
        .delete(`/workflows/${first.uuid}/versions/1`)
        .set('Authorization', `Bearer ${alice}`);
      expect(deleted.status).toBe(204);
      expect(await countRows(db, 'SELECT COUNT(*) AS n FROM builds WHERE instance_id = ?', [id])).toBe(0);
      expect((await get(alice, `/instances/${instance.uuid}`)).status).toBe(404);
      expect((await get(alice, `/suites/${suite.uuid}`)).status).toBe(404);
      expect(await countRows(db, 'SELECT COUNT(*) AS n FROM test_services')).toBe(services);
    });
  });

  it('twenty concurrent registrations of one uuid and version: one 201, nineteen 409, one set of rows, one file', async () => {
    const uuid = randomUUID();
    const bytes = crateZip({ marker: randomUUID() });
    const link = serve(bytes);
    const archivesBefore = storedArchives(t);
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => register(alice, { roc_link: link, version: '1.0', uuid })),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([201, ...Array<number>(19).fill(409)]);
    for (const response of responses.filter((r) => r.status === 409)) {
      expect(response.body.detail).toBe(`The workflow ${uuid} already has a version '1.0'`);
    }
    const db = t.app.get(DataSource);
    const count = (sql: string): Promise<number> => countRows(db, sql, [uuid]);
    expect(await count('SELECT COUNT(*) AS n FROM workflows WHERE uuid = ?')).toBe(1);
    expect(
      await count(
        'SELECT COUNT(*) AS n FROM workflow_versions v JOIN workflows w ON w.id = v.workflow_id WHERE w.uuid = ?',
      ),
    ).toBe(1);
    expect(
      await count(
        'SELECT COUNT(*) AS n FROM test_suites s JOIN workflow_versions v ON v.id = s.version_id ' +
          'JOIN workflows w ON w.id = v.workflow_id WHERE w.uuid = ?',
      ),
    ).toBe(1);
    expect(
      await count(
        'SELECT COUNT(*) AS n FROM test_instances i JOIN test_suites s ON s.id = i.suite_id ' +
          'JOIN workflow_versions v ON v.id = s.version_id JOIN workflows w ON w.id = v.workflow_id WHERE w.uuid = ?',
      ),
    ).toBe(1);
    expect(storedArchives(t)).toEqual(
      [...archivesBefore, `crates/${sha256(bytes).slice(0, 2)}/${sha256(bytes)}.zip`].sort(),
    );
  });

  it('twenty concurrent registrations with different archives leave only the winner’s archive', async () => {
    const uuid = randomUUID();
    const crates = Array.from({ length: 20 }, () => crateZip({ marker: randomUUID() }));
    const archivesBefore = storedArchives(t);
    const responses = await Promise.all(
      crates.map((bytes) => register(alice, { roc_link: serve(bytes), version: '1.0', uuid })),
    );
    const winners = crates.filter((_bytes, index) => responses[index].status === 201);
    expect(winners).toHaveLength(1);
    expect(responses.filter((response) => response.status === 409)).toHaveLength(19);
    const digest = sha256(winners[0]);
    expect(storedArchives(t)).toEqual(
      [...archivesBefore, `crates/${digest.slice(0, 2)}/${digest}.zip`].sort(),
    );
    const downloaded = await download(alice, `/workflows/${uuid}/rocrate/1.0/download`);
    expect(Buffer.compare(downloaded.body as Buffer, winners[0])).toBe(0);
  });

  describe('the authorization of a link', () => {
    let elsewhere: LinkServer;

    beforeAll(async () => {
      elsewhere = await LinkServer.start();
    });

    afterAll(async () => {
      await elsewhere.close();
    });

    it('reaches the link origin, also after a same-origin redirect, and never another origin', async () => {
      const bytes = crateZip({ marker: randomUUID() });
      const target = elsewhere.route('/moved.zip', { kind: 'bytes', body: bytes });
      links.route('/auth/start', { kind: 'redirect', location: '/auth/same-origin' });
      links.route('/auth/same-origin', { kind: 'redirect', location: target });
      const response = await register(alice, {
        roc_link: links.url('/auth/start'),
        version: '1',
        authorization: 'Bearer upstream-secret',
      });
      expect(response.status).toBe(201);
      expect(links.requestsTo('/auth/start')[0].headers.authorization).toBe('Bearer upstream-secret');
      expect(links.requestsTo('/auth/same-origin')[0].headers.authorization).toBe('Bearer upstream-secret');
      const moved = elsewhere.requestsTo('/moved.zip');
      expect(moved).toHaveLength(1);
      expect(moved[0].headers.authorization).toBeUndefined();
      // The token is not kept either.
      const read = await get(alice, `/workflows/${response.body.uuid}?ro_crate=true`);
      expect(JSON.stringify(read.body)).not.toContain('upstream-secret');
    });
  });

  it('removes stale temporary downloads when the service starts', async () => {
    const tmp = join(t.dataDir, 'tmp');
    mkdirSync(tmp, { recursive: true });
    const stale = join(tmp, 'download-crashed.zip.part');
    const fresh = join(tmp, 'download-in-progress.zip.part');
    writeFileSync(stale, 'left by a crash');
    writeFileSync(fresh, 'still downloading');
    const longAgo = new Date(Date.now() - 3 * 60 * 60 * 1000);
    utimesSync(stale, longAgo, longAgo);
    // A second copy of the service on the same database and DATA_DIR.
    const second = await startApp(t.env);
    try {
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(fresh)).toBe(true);
    } finally {
      await second.close();
    }
  });
});

/** The metadata file of a fixture, as the crate has it. */
async function unzipMetadata(file: string): Promise<string> {
  const { default: unzipper } = await import('unzipper');
  const directory = await unzipper.Open.file(file);
  const entry = directory.files.find((candidate) => candidate.path === 'ro-crate-metadata.json');
  if (!entry) {
    throw new Error(`${file} has no ro-crate-metadata.json`);
  }
  return (await entry.buffer()).toString('utf8');
}
