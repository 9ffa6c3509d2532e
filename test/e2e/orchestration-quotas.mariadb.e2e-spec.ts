import { OpenStackFake } from '../fakes/openstack-fake.js';
import { ADMIN, testDatabase } from '../support/create-test-app.js';
import { writeCloudsFile } from '../support/orchestration.js';
import { ServiceCopies } from '../support/service-copies.js';
import type { ServiceProcess } from '../support/service-process.js';

/**
 * Two copies of the built service on one MariaDB receive concurrent starts of one user: the quota holds
 * across them, counted where it lands (the servers the OpenStack fake made). (MariaDB only: several copies
 * on one SQLite file is not a supported deployment.)
 */
const QUOTA = 3;
const STARTS = 12;

describe(`two copies of the service never pass a quota (${testDatabase()})`, () => {
  let nova: OpenStackFake;
  let clouds: ReturnType<typeof writeCloudsFile>;
  let copies: ServiceCopies;

  beforeAll(async () => {
    copies = await ServiceCopies.prepare('quotas-scale-out');
    nova = await OpenStackFake.start();
    clouds = writeCloudsFile(`
clouds:
  default: {type: dummy}
${nova.cloudsFileEntry()}
`);
  });

  afterAll(async () => {
    await copies?.close();
    await nova.close();
    clouds.remove();
  });

  it('admits exactly the quota of concurrent starts sent to both copies, and the rest are 409', async () => {
    const [a, b] = await copies.start({
      CLOUDS_FILE: clouds.path,
      OPENSTACK_PASSWORD: nova.password,
      QUOTA_MAX_NODES: String(QUOTA),
    });
    const call = async (copy: ServiceProcess, method: string, path: string, token: string, body?: object) => {
      const response = await fetch(`${copy.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const login = async (username: string, password: string): Promise<string> =>
      (await call(a, 'POST', '/api/v1/auth', '', { username, password })).body.token as string;
    const admin = await login(ADMIN.username, ADMIN.password);
    const created = await call(a, 'POST', '/api/v1/users', admin, {
      username: 'carol',
      password: 'carol-password',
      roles: ['agent'],
    });
    expect(created.status).toBe(201);
    const carol = await login('carol', 'carol-password');

    const before = nova.serverIds().length;
    const results = await Promise.all(
      Array.from({ length: STARTS }, (_, i) =>
        call([a, b][i % 2], 'POST', '/api/v1/vm/start/ostack', carol, {
          name: `q-${i}`,
          image: '7',
          size: '2',
        }),
      ),
    );
    const statuses = results.map((result) => result.status).sort();
    expect(statuses).toEqual([...Array(QUOTA).fill(200), ...Array(STARTS - QUOTA).fill(409)]);
    for (const refused of results.filter((result) => result.status === 409)) {
      expect(refused.body.message).toMatch(/^quota max_nodes 3 reached: 3 in use$/);
    }
    // Counted where it lands: the cloud made exactly the quota's servers, each tagged with its owner.
    const made = nova.requestsTo('POST', /\/servers$/);
    expect(made).toHaveLength(QUOTA);
    expect(nova.serverIds().length - before).toBe(QUOTA);
    for (const request of made) {
      expect(request.body).toMatchObject({ server: { metadata: { owner: 'carol' } } });
    }

    // Both copies see the same records: usage from the other copy shows the three nodes.
    const usage = await call(b, 'GET', '/api/v1/usage', carol);
    expect(usage.body.usage).toEqual([
      expect.objectContaining({ user: 'carol', cloud: 'ostack', nodes: expect.any(Array) }),
    ]);
    expect(((usage.body.usage as { nodes: unknown[] }[])[0].nodes ?? []).length).toBe(QUOTA);
  }, 120_000);
});
