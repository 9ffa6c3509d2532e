import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import * as realGuard from '../../src/common/net/address-guard.js';
import { GitlabFake } from '../fakes/gitlab-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import type { TestApp } from '../support/create-test-app.js';
import { crateMetadata, crateZip, snapshot, TEST_TERMS } from '../support/registry.js';

/**
 * A self-hosted GitLab on a private address (API.md 2.1, 18), with ALLOW_PRIVATE_NETWORK_LINKS
 * false (the production default) and then true. As in registry-private-links.e2e-spec.ts, the
 * tests can only reach loopback, so 127.0.0.1 stands for the public internet (crates are served
 * from there) and the instance is the GitLab fake behind a relay on 127.0.0.2, a private address
 * as in production, counting what reaches it.
 */
jest.unstable_mockModule('../../src/common/net/address-guard.js', () => ({
  ...realGuard,
  isPublicAddress: (ip: string): boolean => ip === '127.0.0.1' || realGuard.isPublicAddress(ip),
}));

const TOKEN = 'glpat-private-links';
const PROJECT = 'science/on-premises';

describe('a self-hosted GitLab on a private address (API.md 2.1, 18)', () => {
  let gitlab: GitlabFake;
  let links: LinkServer;
  let dir: string;
  /** Forwards every request to the fake; listens on 127.0.0.2. */
  let relay: Server;
  /** The private instance: `http://127.0.0.2:{port}`. */
  let privateUrl: string;
  /** The paths of the requests that reached the private instance. */
  const relayed: string[] = [];

  /** A crate whose one test instance is the project's CI on the GitLab at `url`. */
  const crate = (url: string) =>
    crateMetadata({
      name: 'on premises',
      instances: [{ id: '#gitlab', runsOn: `${TEST_TERMS}GitLabService`, url, resource: PROJECT }],
    });

  /** An app with the private instance configured in TESTING_SERVICES_FILE (with its token). */
  async function appWith(allowPrivate: boolean): Promise<TestApp> {
    const { createTestApp } = await import('../support/create-test-app.js');
    const services = join(dir, `services-${String(allowPrivate)}.yaml`);
    writeFileSync(services, `services:\n  - {type: gitlab, url: "${privateUrl}", token: "${TOKEN}"}\n`);
    return createTestApp({
      TESTING_SERVICES_FILE: services,
      ALLOW_PRIVATE_NETWORK_LINKS: String(allowPrivate),
      DOWNLOAD_TIMEOUT_SECONDS: '2',
      UPSTREAM_TIMEOUT_SECONDS: '2',
    });
  }

  beforeAll(async () => {
    gitlab = new GitlabFake();
    await gitlab.start();
    const target = new URL(gitlab.url);
    relay = createServer((incoming, answer) => {
      relayed.push(incoming.url ?? '');
      const forwarded = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: incoming.method,
          path: incoming.url,
          headers: incoming.headers,
        },
        (reply) => {
          answer.writeHead(reply.statusCode ?? 502, reply.headers);
          reply.pipe(answer);
        },
      );
      incoming.pipe(forwarded);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.2', resolve));
    privateUrl = `http://127.0.0.2:${(relay.address() as AddressInfo).port}`;
    gitlab.addProject(PROJECT, { token: TOKEN });
    gitlab.push(PROJECT, {
      branch: 'main',
      files: { 'ro-crate-metadata.json': JSON.stringify(crate(privateUrl)) },
    });
    gitlab.setPipelines(PROJECT, [{ id: 7, status: 'success' }]);
    links = await LinkServer.start();
    dir = mkdtempSync(join(tmpdir(), 'gitlab-private-'));
  });

  afterAll(async () => {
    await links?.close();
    await new Promise<void>((resolve) => relay.close(() => resolve()));
    await gitlab?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('with ALLOW_PRIVATE_NETWORK_LINKS=false', () => {
    let t: TestApp;
    let alice: string;
    let database: DataSource;

    beforeAll(async () => {
      t = await appWith(false);
      alice = await t.userToken();
      database = t.app.get(DataSource);
    });

    afterAll(async () => {
      await t?.close();
    });

    /**
     * Registers `body`, expecting a 400 problem with `detail` and nothing stored; answers the paths
     * of the requests that reached the private instance meanwhile.
     */
    async function expectRefused(body: Record<string, unknown>, detail: string): Promise<string[]> {
      const before = await snapshot(t, database);
      const asked = relayed.length;
      const response = await t.http
        .post('/users/current/workflows')
        .set('Authorization', `Bearer ${alice}`)
        .send(body);
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400, detail });
      expect(await snapshot(t, database)).toEqual(before);
      return relayed.slice(asked);
    }

    it('refuses a crate whose GitLab test instance is on the private instance', async () => {
      const link = links.route(`/${randomUUID()}.zip`, {
        kind: 'bytes',
        body: crateZip({
          instances: [
            { id: '#gitlab', runsOn: `${TEST_TERMS}GitLabService`, url: privateUrl, resource: PROJECT },
          ],
        }),
      });
      const reached = await expectRefused(
        { roc_link: link, version: '1' },
        "the test instance '#gitlab' has a url on a private or reserved address (127.0.0.2), which this service does not call",
      );
      expect(reached).toEqual([]);
    });

    it('refuses a project link on the private instance', async () => {
      // The instance is configured, so trusted: its API names the commit (API.md 2.8, 18). The
      // archive is a download as any link's, and that one is refused before it is asked for.
      const reached = await expectRefused(
        { roc_link: `${privateUrl}/${PROJECT}`, version: '1' },
        'the link resolves to a private or reserved address (127.0.0.2); set ALLOW_PRIVATE_NETWORK_LINKS=true to allow links on this network',
      );
      expect(reached.length).toBeGreaterThan(0);
      expect(reached.filter((path) => path.includes('/repository/archive.zip'))).toEqual([]);
    });
    it('refuses a GitLab instance on the private instance added through the API', async () => {
      const registered = await t.http
        .post('/users/current/workflows')
        .set('Authorization', `Bearer ${alice}`)
        .send({
          roc_link: links.route(`/${randomUUID()}.zip`, { kind: 'bytes', body: crateZip() }),
          version: '1',
        });
      expect(registered.status).toBe(201);
      const suites = await t.http
        .get(`/workflows/${registered.body.uuid}/suites`)
        .set('Authorization', `Bearer ${alice}`);
      const before = await snapshot(t, database);
      const asked = relayed.length;
      const response = await t.http
        .post(`/suites/${suites.body.items[0].uuid}/instances`)
        .set('Authorization', `Bearer ${alice}`)
        .send({ name: 'on premises', service: { type: 'gitlab', url: privateUrl }, resource: PROJECT });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        status: 400,
        detail:
          'service.url is on a private or reserved address (127.0.0.2), which this service does not call',
      });
      expect(await snapshot(t, database)).toEqual(before);
      expect(relayed.slice(asked)).toEqual([]);
    });
  });

  describe('with ALLOW_PRIVATE_NETWORK_LINKS=true', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await appWith(true);
    });

    afterAll(async () => {
      await t?.close();
    });

    it('registers the project from the private instance, its CI instance there', async () => {
      const alice = await t.userToken();
      const response = await t.http
        .post('/users/current/workflows')
        .set('Authorization', `Bearer ${alice}`)
        .send({ roc_link: `${privateUrl}/${PROJECT}`, version: '1' });
      expect(response.status).toBe(201);
      const suites = await t.http
        .get(`/workflows/${response.body.uuid}/suites`)
        .set('Authorization', `Bearer ${alice}`);
      expect(suites.body.items[0].instances[0]).toMatchObject({
        service: { type: 'gitlab', url: privateUrl },
        resource: PROJECT,
      });
      // Its pipelines are read from there too.
      const asked = relayed.length;
      // Imported after the guard's mock, as create-test-app is.
      const { RefreshScheduler } = await import('../../src/test-monitoring/refresh.scheduler.js');
      await t.app.get(RefreshScheduler).tick(new Date(Date.now() + 3600_000));
      expect(relayed.slice(asked).some((path) => path.includes('/pipelines'))).toBe(true);
      const status = await t.http
        .get(`/workflows/${response.body.uuid}/status`)
        .set('Authorization', `Bearer ${alice}`);
      expect(status.body).toMatchObject({ aggregate_test_status: 'all_passing' });
    });
  });
});
