import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import * as realGuard from '../../src/common/net/address-guard.js';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import type { TestApp } from '../support/create-test-app.js';
import { crateMetadata, crateZip, snapshot } from '../support/registry.js';

/**
 * With ALLOW_PRIVATE_NETWORK_LINKS=false (the production default). The tests can only reach
 * 127.0.0.1, so here — and only here — that one address stands for the public internet: the
 * address guard classifies it as public and everything else as it really is. Every other
 * loopback, private, link-local and metadata address is refused as in production, on the
 * first hop, on every redirect hop and in the test instances of a crate.
 */
jest.unstable_mockModule('../../src/common/net/address-guard.js', () => ({
  ...realGuard,
  isPublicAddress: (ip: string): boolean => ip === '127.0.0.1' || realGuard.isPublicAddress(ip),
}));

/** What the 400 adds, so that a newcomer with a crate on localhost knows the one setting that allows it. */
const ALLOWED_BY = 'set ALLOW_PRIVATE_NETWORK_LINKS=true to allow links on this network';

describe('links and CI urls on private addresses, when those are refused (API.md 2.1)', () => {
  let t: TestApp;
  let links: LinkServer;
  let alice: string;
  let database: DataSource;
  /** Another loopback address: private, reachable, and recording whether anything reached it. */
  let internal: Server;
  let internalUrl: string;
  let internalHits = 0;
  let served = 0;
  let github: GithubFake;

  beforeAll(async () => {
    const { createTestApp } = await import('../support/create-test-app.js');
    github = new GithubFake();
    await github.start();
    t = await createTestApp({
      GITHUB_API_URL: github.url,
      ALLOW_PRIVATE_NETWORK_LINKS: 'false',
      PUBLIC_BASE_URL: 'https://registry.example.org/',
    });
    links = await LinkServer.start();
    alice = await t.userToken(['user']);
    database = t.app.get(DataSource);
    internal = createServer((_request, response) => {
      internalHits += 1;
      response.end('internal secrets');
    });
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.2', resolve));
    internalUrl = `http://127.0.0.2:${(internal.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => internal.close(() => resolve()));
    await links.close();
    await t.close();
    await github.stop();
  });

  const serve = (body: Buffer): string => links.route(`/p${++served}.zip`, { kind: 'bytes', body });

  const expectRefused = async (body: Record<string, unknown>, detail: string | RegExp): Promise<void> => {
    const before = await snapshot(t, database);
    const response = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${alice}`)
      .send(body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400 });
    if (typeof detail === 'string') {
      expect(response.body.detail).toBe(detail);
    } else {
      expect(response.body.detail).toMatch(detail);
    }
    expect(await snapshot(t, database)).toEqual(before);
  };

  it('registers from the stand-in public address', async () => {
    const response = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${alice}`)
      .send({ roc_link: serve(crateZip({ marker: randomUUID() })), version: '1' });
    expect(response.status).toBe(201);
  });

  it('refuses a link on a private address', async () => {
    await expectRefused(
      { roc_link: `${internalUrl}/crate.zip`, version: '1' },
      `the link resolves to a private or reserved address (127.0.0.2); ${ALLOWED_BY}`,
    );
    expect(internalHits).toBe(0);
  });

  it('refuses a link whose host name resolves to a private address', async () => {
    const port = new URL(links.origin).port;
    await expectRefused(
      { roc_link: `http://localhost:${port}/p1.zip`, version: '1' },
      `the link resolves to a private or reserved address (localhost); ${ALLOWED_BY}`,
    );
  });

  it('refuses a redirect to a private address, without calling it', async () => {
    const link = links.route('/to-internal', { kind: 'redirect', location: `${internalUrl}/admin` });
    await expectRefused(
      { roc_link: link, version: '1' },
      `the link resolves to a private or reserved address (127.0.0.2); ${ALLOWED_BY}`,
    );
    expect(internalHits).toBe(0);
  });

  it('refuses a redirect to the cloud metadata address', async () => {
    const link = links.redirectChain('/hops', 2, 'http://169.254.169.254/latest/meta-data/');
    await expectRefused(
      { roc_link: link, version: '1' },
      `the link resolves to a private or reserved address (169.254.169.254); ${ALLOWED_BY}`,
    );
  });

  it.each([
    ['an RFC 1918 address', 'http://10.1.2.3:8080', '10.1.2.3'],
    ['the metadata address', 'http://169.254.169.254', '169.254.169.254'],
    ['IPv6 loopback', 'http://[::1]:8080', '::1'],
    ['another loopback address', 'http://127.0.0.2:8080/', '127.0.0.2'],
  ])('refuses a crate whose test instance url is on %s', async (_label, url, where) => {
    const crate = crateZip({
      instances: [
        { id: '#ci', runsOn: 'https://w3id.org/ro/terms/test#JenkinsService', url, resource: 'job/ci' },
      ],
    });
    const detail = `the test instance '#ci' has a url on a private or reserved address (${where}), which this service does not call`;
    await expectRefused({ roc_link: serve(crate), version: '1' }, detail);
  });

  it('accepts a test instance url whose name does not resolve now (monitoring checks every call again)', async () => {
    const crate = crateZip({
      marker: randomUUID(),
      instances: [
        {
          id: '#ci',
          runsOn: 'https://w3id.org/ro/terms/test#JenkinsService',
          url: 'https://ci.invalid/',
          resource: 'job/ci',
        },
      ],
    });
    const response = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${alice}`)
      .send({ roc_link: serve(crate), version: '1' });
    expect(response.status).toBe(201);
  });

  it('follows the GitHub archive redirect only to an address the guard allows (API.md 7.1)', async () => {
    github.addRepository('o', 'r');
    github.push('o', 'r', {
      branch: 'main',
      files: { 'ro-crate-metadata.json': JSON.stringify(crateMetadata()) },
    });
    const registered = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${alice}`)
      .send({ roc_link: 'https://github.com/o/r', version: 'from-github' });
    expect(registered.status).toBe(201);
    github.archiveRedirectBase = internalUrl;
    try {
      await expectRefused(
        { roc_link: 'https://github.com/o/r', version: 'redirected' },
        `the link names the GitHub repository o/r, whose archive resolves to a private or reserved address (127.0.0.2); ${ALLOWED_BY}`,
      );
    } finally {
      github.archiveRedirectBase = undefined;
    }
    expect(internalHits).toBe(0);
  });

  it('refuses a test instance added through the API on a private address, storing nothing (API.md 7.3)', async () => {
    const registered = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${alice}`)
      .send({ roc_link: serve(crateZip({ marker: randomUUID() })), version: '1' });
    expect(registered.status).toBe(201);
    const suites = await t.http
      .get(`/workflows/${registered.body.uuid}/suites`)
      .set('Authorization', `Bearer ${alice}`);
    const suite = suites.body.items[0].uuid as string;
    const before = await snapshot(t, database);
    for (const [url, host] of [
      [`${internalUrl}/`, '127.0.0.2'],
      ['http://169.254.169.254', '169.254.169.254'],
      ['http://10.1.2.3:8080', '10.1.2.3'],
      ['http://[::1]:8080', '::1'],
    ]) {
      const response = await t.http
        .post(`/suites/${suite}/instances`)
        .set('Authorization', `Bearer ${alice}`)
        .send({ name: 'inside', service: { type: 'jenkins', url }, resource: 'job/ci' });
      expect({ url, status: response.status }).toEqual({ url, status: 400 });
      expect(response.body.detail).toBe(
        `service.url is on a private or reserved address (${host}), which this service does not call`,
      );
    }
    expect(await snapshot(t, database)).toEqual(before);
    expect(internalHits).toBe(0);
  });

  it('builds links on PUBLIC_BASE_URL when it is set', async () => {
    const response = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${alice}`)
      .send({ roc_link: serve(crateZip({ marker: randomUUID() })), version: '2.0' });
    const read = await t.http
      .get(`/workflows/${response.body.uuid}`)
      .set('Authorization', `Bearer ${alice}`)
      .set('Host', 'attacker.example.com');
    expect(read.body.meta.base_url).toBe('https://registry.example.org');
    expect(read.body.version.ro_crate.links.download).toBe(
      `https://registry.example.org/workflows/${response.body.uuid}/rocrate/2.0/download`,
    );
  });
});
