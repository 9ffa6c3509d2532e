import { AssignmentFacilityFake } from '../fakes/assignment-facility-fake.js';
import { OpenStackFake } from '../fakes/openstack-fake.js';
import { testDatabase } from '../support/create-test-app.js';
import { writeCloudsFile } from '../support/orchestration.js';
import { ServiceCopies } from '../support/service-copies.js';
import type { ServiceProcess } from '../support/service-process.js';

/**
 * Two copies of the built service on one MariaDB carry out the expiries of leases: each exactly once,
 * counted where it lands — Nova's os-stop and DELETE at the OpenStack fake, the release at the
 * external assignment facility fake — and within 60 s of its time. (MariaDB only: several copies on
 * one SQLite file is not a supported deployment.)
 */
const PER_KIND = 4;
const KINDS = ['release', 'poweroff', 'destroy'] as const;

describe(`two copies of the service carry out each lease expiry once (${testDatabase()})`, () => {
  let nova: OpenStackFake;
  let facility: AssignmentFacilityFake;
  let clouds: ReturnType<typeof writeCloudsFile>;
  let copies: ServiceCopies;

  beforeAll(async () => {
    copies = await ServiceCopies.prepare('leases-scale-out');
    nova = await OpenStackFake.start();
    facility = await AssignmentFacilityFake.start();
    clouds = writeCloudsFile(`
clouds:
  default: {type: dummy}
${nova.cloudsFileEntry()}
`);
  });

  afterAll(async () => {
    await copies?.close();
    await facility.close();
    await nova.close();
    clouds.remove();
  });

  it('ends every lease once, whichever copy claims it, within 60 s of its time', async () => {
    const [a, b] = await copies.start({
      LOG_LEVEL: 'debug',
      CLOUDS_FILE: clouds.path,
      OPENSTACK_PASSWORD: nova.password,
      ASSIGNMENT_FACILITY_URL: facility.url,
    });
    const token = await copies.adminToken();
    const call = (copy: ServiceProcess, method: string, path: string, body?: object): Promise<Response> =>
      fetch(`${copy.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    const servers = KINDS.flatMap((kind) =>
      Array.from({ length: PER_KIND }, (_, i) => ({
        kind,
        id: nova.addServer({ name: `lease-${kind}-${i}` }),
      })),
    );
    const expiresAt = new Date(Math.ceil(Date.now() / 1000) * 1000 + 4000);
    for (const [i, server] of servers.entries()) {
      const response = await call([a, b][i % 2], 'PUT', '/api/v1/vm/action/assign/ostack', {
        node: server.id,
        user: 'u',
        vm_type: 't',
        expires_at: expiresAt.toISOString(),
        on_expiry: server.kind,
      });
      expect(response.status).toBe(200);
    }
    const listed = (await (await call(b, 'GET', '/api/v1/vm/status/ostack')).json()) as {
      nodes: { expires_at: string }[];
    };
    expect(listed.nodes.map((node) => node.expires_at)).toEqual(servers.map(() => expiresAt.toISOString()));

    const releases = (id: string): number =>
      facility.requests.filter((r) => r.method === 'DELETE' && r.url === `/assignments/ostack/${id}`).length;
    // Within 60 s of the time every expiry has landed; polled rather than slept, then a few more ticks
    // of both copies pass to show that nothing is done twice.
    const deadline = expiresAt.getTime() + 60_000;
    while (Date.now() < deadline && servers.some((server) => releases(server.id) === 0)) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(servers.filter((server) => releases(server.id) === 0)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 15_000));

    for (const server of servers) {
      const stops = nova.requestsTo('POST', `/servers/${server.id}/action`).length;
      const deletes = nova.requestsTo('DELETE', `/servers/${server.id}`).length;
      expect({ id: server.id, kind: server.kind, releases: releases(server.id), stops, deletes }).toEqual({
        id: server.id,
        kind: server.kind,
        releases: 1,
        stops: server.kind === 'poweroff' ? 1 : 0,
        deletes: server.kind === 'destroy' ? 1 : 0,
      });
    }
    expect(facility.active()).toEqual([]);
    const after = (await (await call(a, 'GET', '/api/v1/vm/status/ostack')).json()) as {
      nodes: unknown[];
    };
    expect(after.nodes).toEqual([]);
    // Both copies logged what they did; neither logged the cloud's password.
    const logs = copies.all.map((copy) => copy.output());
    expect(logs.join('\n').match(/lease of node \S+ of cloud 'ostack' ended/g)).toHaveLength(servers.length);
    for (const log of logs) {
      expect(log).not.toContain(nova.password);
    }
  }, 120_000);
});
