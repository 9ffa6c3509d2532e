import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { DEFAULT_REFRESH_INTERVAL_MS } from '../../src/test-monitoring/refresh-schedule.js';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateZip } from '../support/registry.js';

const TEST = 'https://w3id.org/ro/terms/test#';
const START = Date.UTC(2024, 0, 1, 10, 0, 0);

/**
 * The stored test status the wall orders by (API.md 5.4): each version's and its workflow's latest
 * version's, kept in the transactions that change it, and always what the status read computes.
 */
describe(`the stored test status (${testDatabase()})`, () => {
  let t: TestApp;
  let links: LinkServer;
  let github: GithubFake;
  let scheduler: RefreshScheduler;
  let dataSource: DataSource;
  let alice: string;
  let clock = Date.now();
  const key = `stored${randomUUID().slice(0, 8)}`;
  let uuid: string;

  async function tick(): Promise<void> {
    clock = Math.max(clock, Date.now()) + 2 * DEFAULT_REFRESH_INTERVAL_MS;
    await scheduler.tick(new Date(clock));
  }

  async function register(version: string): Promise<void> {
    const path = `/${key}-${version}-${randomUUID()}.crate.zip`;
    links.route(path, {
      kind: 'bytes',
      body: crateZip({
        name: `workflow ${key}`,
        marker: path,
        instances: ['a', 'b'].map((name) => ({
          id: `#${name}`,
          name: `${key}-${name}`,
          runsOn: `${TEST}GithubService`,
          url: github.url,
          resource: GithubFake.resource('octo', key, `${name}.yml`),
        })),
      }),
    });
    const response = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${alice}`)
      .send({ roc_link: links.url(path), version, uuid });
    expect(response.status).toBe(201);
    uuid = (response.body as { uuid: string }).uuid;
  }

  /** The stored status of the workflow and of each of its versions, and what GET .../status computes. */
  async function statuses(): Promise<{
    workflow: string;
    versions: Record<string, string>;
    computed: string;
  }> {
    const [workflow] = await dataSource.query<{ test_status: string }[]>(
      'SELECT test_status FROM workflows WHERE uuid = ?',
      [uuid],
    );
    const versions = await dataSource.query<{ version: string; test_status: string }[]>(
      `SELECT v.version AS version, v.test_status AS test_status FROM workflow_versions v
       INNER JOIN workflows w ON w.id = v.workflow_id WHERE w.uuid = ? ORDER BY v.id`,
      [uuid],
    );
    const status = await t.http.get(`/workflows/${uuid}/status`).set('Authorization', `Bearer ${alice}`);
    expect(status.status).toBe(200);
    return {
      workflow: workflow.test_status,
      versions: Object.fromEntries(versions.map((row) => [row.version, row.test_status])),
      computed: (status.body as { aggregate_test_status: string }).aggregate_test_status,
    };
  }

  async function instanceUuid(version: string, name: string): Promise<string> {
    const [row] = await dataSource.query<{ uuid: string }[]>(
      `SELECT i.uuid AS uuid FROM test_instances i
       INNER JOIN test_suites s ON s.id = i.suite_id
       INNER JOIN workflow_versions v ON v.id = s.version_id
       INNER JOIN workflows w ON w.id = v.workflow_id
       WHERE w.uuid = ? AND v.version = ? AND i.name = ?`,
      [uuid, version, `${key}-${name}`],
    );
    return row.uuid;
  }

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
    links = await LinkServer.start();
    t = await createTestApp();
    scheduler = t.app.get(RefreshScheduler);
    dataSource = t.app.get(DataSource);
    alice = await t.userToken(['user'], `alice_${randomUUID().slice(0, 8)}`);
    github.setRuns('octo', key, 'a.yml', [{ id: 1, conclusion: 'success', startedAt: new Date(START) }]);
    github.setRuns('octo', key, 'b.yml', [{ id: 2, conclusion: 'failure', startedAt: new Date(START) }]);
    github.setRuns('octo', key, 'c.yml', [{ id: 3, conclusion: 'failure', startedAt: new Date(START) }]);
    uuid = randomUUID();
  });

  afterAll(async () => {
    await t?.close();
    await links?.close();
    await github?.stop();
  });

  it('is not_available for a version registered, before any build', async () => {
    await register('1.0');
    await expect(statuses()).resolves.toEqual({
      workflow: 'not_available',
      versions: { '1.0': 'not_available' },
      computed: 'not_available',
    });
  });

  it('follows the builds a check records', async () => {
    await tick();
    await expect(statuses()).resolves.toEqual({
      workflow: 'some_passing',
      versions: { '1.0': 'some_passing' },
      computed: 'some_passing',
    });
  });

  it('follows an instance deleted: its builds no longer count', async () => {
    const deleted = await t.http
      .delete(`/instances/${await instanceUuid('1.0', 'b')}`)
      .set('Authorization', `Bearer ${alice}`);
    expect(deleted.status).toBe(204);
    await expect(statuses()).resolves.toEqual({
      workflow: 'all_passing',
      versions: { '1.0': 'all_passing' },
      computed: 'all_passing',
    });
  });

  it('follows an instance pointed at another resource: its old builds are forgotten, the new ones count', async () => {
    const moved = await t.http
      .put(`/instances/${await instanceUuid('1.0', 'a')}`)
      .set('Authorization', `Bearer ${alice}`)
      .send({ resource: GithubFake.resource('octo', key, 'c.yml') });
    expect(moved.status).toBe(200);
    await expect(statuses()).resolves.toEqual({
      workflow: 'not_available',
      versions: { '1.0': 'not_available' },
      computed: 'not_available',
    });
    await tick();
    await expect(statuses()).resolves.toEqual({
      workflow: 'all_failing',
      versions: { '1.0': 'all_failing' },
      computed: 'all_failing',
    });
  });

  it('is not_available for the workflow once a new version is registered, the earlier one keeping its own', async () => {
    await register('2.0');
    await expect(statuses()).resolves.toEqual({
      workflow: 'not_available',
      versions: { '1.0': 'all_failing', '2.0': 'not_available' },
      computed: 'not_available',
    });
  });

  it('is the previous version’s again once the latest is deleted', async () => {
    const deleted = await t.http
      .delete(`/workflows/${uuid}/versions/2.0`)
      .set('Authorization', `Bearer ${alice}`);
    expect(deleted.status).toBe(204);
    await expect(statuses()).resolves.toEqual({
      workflow: 'all_failing',
      versions: { '1.0': 'all_failing' },
      computed: 'all_failing',
    });
  });

  it('puts the workflow on its owner’s wall among the failing ones, counted once', async () => {
    const wall = await t.http.get('/status/wall').set('Authorization', `Bearer ${alice}`);
    expect(wall.status).toBe(200);
    expect(wall.text).toContain(`/status/${uuid}`);
    expect([...wall.text.matchAll(/<li class="tile (\w+)">/g)].map((match) => match[1])).toEqual([
      'all_failing',
    ]);
    expect(wall.text).toContain('1 workflow: 1 failing');
  });
});
