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
 * A self-hosted GitLab on a private address (API.md 2.1, 2.8, 18), with ALLOW_PRIVATE_NETWORK_LINKS
 * false (the production default) and then true. As in registry-private-links.e2e-spec.ts, the
 * tests can only reach loopback, so 127.0.0.1 stands for the public internet (crates are served
 * from there). The institute's GitLab is the GitLab fake behind a relay on 127.0.0.2, a private
 * address as in production, configured in TESTING_SERVICES_FILE; another GitLab nobody configured
 * is the same fake behind a relay on 127.0.0.3; and a server on another port of 127.0.0.2 is the
 * configured one's private neighbour. Each counts what reaches it.
 */
jest.unstable_mockModule('../../src/common/net/address-guard.js', () => ({
  ...realGuard,
  isPublicAddress: (ip: string): boolean => ip === '127.0.0.1' || realGuard.isPublicAddress(ip),
}));

const TOKEN = 'glpat-private-links';
const PROJECT = 'science/on-premises';
/** A project whose archive the configured instance redirects to its private neighbour. */
const REDIRECTED = 'science/redirected';

/** A server on `host` that records the paths asked of it; forwards them to `target` when given. */
async function recordingServer(
  host: string,
  target?: URL,
  redirect?: (path: string) => string | undefined,
): Promise<{ server: Server; url: string; paths: string[] }> {
  const paths: string[] = [];
  const server = createServer((incoming, answer) => {
    const path = incoming.url ?? '';
    paths.push(path);
    const location = redirect?.(path);
    if (location !== undefined) {
      answer.writeHead(302, { location }).end();
      return;
    }
    if (target === undefined) {
      answer.end('internal secrets');
      return;
    }
    const forwarded = httpRequest(
      { host: target.hostname, port: target.port, method: incoming.method, path, headers: incoming.headers },
      (reply) => {
        answer.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(answer);
      },
    );
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, url: `http://${host}:${(server.address() as AddressInfo).port}`, paths };
}

describe('a self-hosted GitLab on a private address (API.md 2.1, 2.8, 18)', () => {
  let gitlab: GitlabFake;
  let links: LinkServer;
  let dir: string;
  /** The configured instance: `http://127.0.0.2:{port}`. */
  let configured: Awaited<ReturnType<typeof recordingServer>>;
  /** A GitLab on a private address that TESTING_SERVICES_FILE does not name: `http://127.0.0.3:{port}`. */
  let unconfigured: Awaited<ReturnType<typeof recordingServer>>;
  /** Another port of the configured instance's host, serving anything to whoever asks. */
  let neighbour: Awaited<ReturnType<typeof recordingServer>>;

  /** A crate whose one test instance is the project's CI on the GitLab at `url`. */
  const crate = (url: string) =>
    crateMetadata({
      name: 'on premises',
      instances: [{ id: '#gitlab', runsOn: `${TEST_TERMS}GitLabService`, url, resource: PROJECT }],
    });

  /** An app with the configured instance in TESTING_SERVICES_FILE (with its token). */
  async function appWith(allowPrivate: boolean): Promise<TestApp> {
    const { createTestApp } = await import('../support/create-test-app.js');
    const services = join(dir, `services-${String(allowPrivate)}.yaml`);
    writeFileSync(services, `services:\n  - {type: gitlab, url: "${configured.url}", token: "${TOKEN}"}\n`);
    return createTestApp({
      TESTING_SERVICES_FILE: services,
      ALLOW_PRIVATE_NETWORK_LINKS: String(allowPrivate),
      DOWNLOAD_TIMEOUT_SECONDS: '2',
      UPSTREAM_TIMEOUT_SECONDS: '2',
    });
  }

  /** Registers the project at `link` for `token`, reads its pipelines and expects them passing. */
  async function expectRegisteredAndRead(t: TestApp, token: string, link: string): Promise<void> {
    const asked = configured.paths.length;
    const response = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${token}`)
      .send({ roc_link: link, version: '1' });
    expect(response.status).toBe(201);
    // Its API named the commit, and its archive came from there too.
    expect(configured.paths.slice(asked).some((path) => path.includes('/repository/archive.zip'))).toBe(true);
    const suites = await t.http
      .get(`/workflows/${response.body.uuid}/suites`)
      .set('Authorization', `Bearer ${token}`);
    expect(suites.body.items[0].instances[0]).toMatchObject({
      service: { type: 'gitlab', url: configured.url },
      resource: PROJECT,
    });
    const before = configured.paths.length;
    // Imported after the guard's mock, as create-test-app is.
    const { RefreshScheduler } = await import('../../src/test-monitoring/refresh.scheduler.js');
    await t.app.get(RefreshScheduler).tick(new Date(Date.now() + 3600_000));
    expect(configured.paths.slice(before).some((path) => path.includes('/pipelines'))).toBe(true);
    const status = await t.http
      .get(`/workflows/${response.body.uuid}/status`)
      .set('Authorization', `Bearer ${token}`);
    expect(status.body).toMatchObject({ aggregate_test_status: 'all_passing' });
  }

  beforeAll(async () => {
    gitlab = new GitlabFake();
    await gitlab.start();
    const target = new URL(gitlab.url);
    neighbour = await recordingServer('127.0.0.2');
    configured = await recordingServer('127.0.0.2', target, (path) =>
      path.includes(`/projects/${encodeURIComponent(REDIRECTED)}/repository/archive.zip`)
        ? `${neighbour.url}/archive.zip`
        : undefined,
    );
    unconfigured = await recordingServer('127.0.0.3', target);
    gitlab.addProject(PROJECT, { token: TOKEN });
    gitlab.push(PROJECT, {
      branch: 'main',
      files: { 'ro-crate-metadata.json': JSON.stringify(crate(configured.url)) },
    });
    gitlab.setPipelines(PROJECT, [{ id: 7, status: 'success' }]);
    gitlab.addProject(REDIRECTED, { token: TOKEN });
    gitlab.push(REDIRECTED, {
      branch: 'main',
      files: { 'ro-crate-metadata.json': JSON.stringify(crate(configured.url)) },
    });
    links = await LinkServer.start();
    dir = mkdtempSync(join(tmpdir(), 'gitlab-private-'));
  });

  afterAll(async () => {
    await links?.close();
    for (const { server } of [configured, unconfigured, neighbour]) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
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

    /** The requests that reached the unconfigured GitLab and the neighbour, so far. */
    const strays = (): string[] => [...unconfigured.paths, ...neighbour.paths];

    /** Registers `body`, expecting a 400 problem with `detail`, nothing stored and nothing stray reached. */
    async function expectRefused(body: Record<string, unknown>, detail: string): Promise<void> {
      const before = await snapshot(t, database);
      const reached = strays().length;
      const response = await t.http
        .post('/users/current/workflows')
        .set('Authorization', `Bearer ${alice}`)
        .send(body);
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400, detail });
      expect(await snapshot(t, database)).toEqual(before);
      expect(strays().slice(reached)).toEqual([]);
    }

    /** A suite to add instances to. */
    async function aSuite(): Promise<string> {
      const registered = await t.http
        .post('/users/current/workflows')
        .set('Authorization', `Bearer ${alice}`)
        .send({
          roc_link: links.route(`/${randomUUID()}.zip`, {
            kind: 'bytes',
            body: crateZip({ marker: randomUUID() }),
          }),
          version: '1',
        });
      expect(registered.status).toBe(201);
      const suites = await t.http
        .get(`/workflows/${registered.body.uuid}/suites`)
        .set('Authorization', `Bearer ${alice}`);
      return suites.body.items[0].uuid as string;
    }

    it('registers a project of the configured instance end to end: API, archive, CI instance, pipelines', async () => {
      await expectRegisteredAndRead(t, alice, `${configured.url}/${PROJECT}`);
    });

    it('registers a crate whose GitLab test instance is the configured instance', async () => {
      const link = links.route(`/${randomUUID()}.zip`, {
        kind: 'bytes',
        body: crateZip({
          marker: randomUUID(),
          instances: [
            { id: '#gitlab', runsOn: `${TEST_TERMS}GitLabService`, url: configured.url, resource: PROJECT },
          ],
        }),
      });
      const response = await t.http
        .post('/users/current/workflows')
        .set('Authorization', `Bearer ${alice}`)
        .send({ roc_link: link, version: '1' });
      expect(response.status).toBe(201);
    });

    it('refuses a project link on an unconfigured GitLab on a private address, asking it nothing', async () => {
      // Not a configured instance, so not a GitLab project to this service: a link as any other.
      await expectRefused(
        { roc_link: `${unconfigured.url}/${PROJECT}`, version: '1' },
        'the link resolves to a private or reserved address (127.0.0.3); set ALLOW_PRIVATE_NETWORK_LINKS=true to allow links on this network',
      );
    });

    it("refuses a link on the configured instance's private neighbour (another port of its host)", async () => {
      await expectRefused(
        { roc_link: `${neighbour.url}/${PROJECT}`, version: '1' },
        'the link resolves to a private or reserved address (127.0.0.2); set ALLOW_PRIVATE_NETWORK_LINKS=true to allow links on this network',
      );
    });

    it('refuses an archive the configured instance redirects to its private neighbour, naming the project link', async () => {
      await expectRefused(
        { roc_link: `${configured.url}/${REDIRECTED}`, version: '1' },
        `the link names the GitLab project ${REDIRECTED}, whose archive resolves to a private or reserved address (127.0.0.2); set ALLOW_PRIVATE_NETWORK_LINKS=true to allow links on this network`,
      );
    });

    it.each([
      ['the unconfigured GitLab', () => unconfigured.url, '127.0.0.3'],
      ["the configured instance's neighbour", () => neighbour.url, '127.0.0.2'],
    ])('refuses a crate whose GitLab test instance is on %s', async (_label, url, host) => {
      const link = links.route(`/${randomUUID()}.zip`, {
        kind: 'bytes',
        body: crateZip({
          marker: randomUUID(),
          instances: [{ id: '#gitlab', runsOn: `${TEST_TERMS}GitLabService`, url: url(), resource: PROJECT }],
        }),
      });
      await expectRefused(
        { roc_link: link, version: '1' },
        `the test instance '#gitlab' has a url on a private or reserved address (${host}), which this service does not call`,
      );
    });

    it('adds a GitLab instance on the configured instance through the API, and refuses one on a private neighbour', async () => {
      const suite = await aSuite();
      const added = await t.http
        .post(`/suites/${suite}/instances`)
        .set('Authorization', `Bearer ${alice}`)
        .send({ name: 'on premises', service: { type: 'gitlab', url: configured.url }, resource: PROJECT });
      expect(added.status).toBe(201);
      const before = await snapshot(t, database);
      const reached = strays().length;
      for (const [url, host] of [
        [unconfigured.url, '127.0.0.3'],
        [neighbour.url, '127.0.0.2'],
      ]) {
        const response = await t.http
          .post(`/suites/${suite}/instances`)
          .set('Authorization', `Bearer ${alice}`)
          .send({ name: 'elsewhere', service: { type: 'gitlab', url }, resource: PROJECT });
        expect(response.status).toBe(400);
        expect(response.body).toMatchObject({
          status: 400,
          detail: `service.url is on a private or reserved address (${host}), which this service does not call`,
        });
      }
      expect(await snapshot(t, database)).toEqual(before);
      expect(strays().slice(reached)).toEqual([]);
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
      await expectRegisteredAndRead(t, await t.userToken(), `${configured.url}/${PROJECT}`);
    });
  });
});
