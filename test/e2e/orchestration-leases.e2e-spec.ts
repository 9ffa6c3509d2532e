import { LeaseScheduler } from '../../src/orchestration/lease.scheduler.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { expectEnvelope, writeCloudsFile } from '../support/orchestration.js';

interface StatusEntry {
  id_vm: string;
  expires_at: string | null;
  on_expiry: string | null;
}

describe(`area C: leases on assignments (${testDatabase()})`, () => {
  let clouds: ReturnType<typeof writeCloudsFile>;
  let t: TestApp;
  let agent: string;

  beforeAll(async () => {
    clouds = writeCloudsFile('clouds:\n  default: {type: dummy}\n  lease_dummy: {type: dummy}\n');
    t = await createTestApp({ CLOUDS_FILE: clouds.path });
    agent = await t.userToken(['agent']);
  });

  afterAll(async () => {
    await t.close();
    clouds.remove();
  });

  const put = (path: string, body: object) => t.http.put(path).set('X-Auth-Token', agent).send(body);
  const post = (path: string, body: object) => t.http.post(path).set('X-Auth-Token', agent).send(body);
  const status = async (cloud: string): Promise<StatusEntry[]> =>
    (
      (await t.http.get(`/api/v1/vm/status/${cloud}`).set('X-Auth-Token', agent)).body as {
        nodes: StatusEntry[];
      }
    ).nodes;
  const startNode = async (name: string): Promise<string> =>
    (
      (await post('/api/v1/vm/start/lease_dummy', { name, image: '1', size: '1' })).body as {
        nodes: { id: string };
      }
    ).nodes.id;
  const assign = (node: string, lease: object) =>
    put('/api/v1/vm/action/assign/lease_dummy', { node, user: 'u', vm_type: 't', ...lease });

  it('shows the lease in vm/status: ttl_seconds from now, on_expiry release by default', async () => {
    const id = await startNode('l-ttl');
    const before = Date.now();
    const assigned = await assign(id, { ttl_seconds: 3600 });
    expect(assigned.status).toBe(200);
    const entry = (await status('lease_dummy')).find((e) => e.id_vm === id);
    expect(entry?.on_expiry).toBe('release');
    const end = Date.parse(entry?.expires_at ?? '');
    expect(end).toBeGreaterThanOrEqual(before + 3_600_000 - 1000);
    expect(end).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1000);
  });

  it('takes expires_at with a time zone, and shows null for an assignment without a lease', async () => {
    const leased = await startNode('l-at');
    const plain = await startNode('l-plain');
    const at = new Date(Date.now() + 86_400_000);
    at.setUTCMilliseconds(0);
    const local = at.toISOString().replace('Z', '+00:00');
    expect((await assign(leased, { expires_at: local, on_expiry: 'destroy' })).status).toBe(200);
    expect((await assign(plain, {})).status).toBe(200);
    const entries = await status('lease_dummy');
    expect(entries.find((e) => e.id_vm === leased)).toMatchObject({
      expires_at: at.toISOString(),
      on_expiry: 'destroy',
    });
    expect(entries.find((e) => e.id_vm === plain)).toMatchObject({ expires_at: null, on_expiry: null });
  });

  it.each([
    [{ ttl_seconds: 59 }, 'ttl_seconds must be an integer from 60 to 31536000'],
    [{ ttl_seconds: 31_536_001 }, 'ttl_seconds must be an integer from 60 to 31536000'],
    [{ ttl_seconds: '3600' }, 'ttl_seconds must be an integer from 60 to 31536000'],
    [{ ttl_seconds: 60.5 }, 'ttl_seconds must be an integer from 60 to 31536000'],
    [
      { ttl_seconds: 60, expires_at: '2099-01-01T00:00:00Z' },
      'give at most one of ttl_seconds and expires_at',
    ],
    [{ expires_at: '2020-01-01T00:00:00Z' }, 'expires_at 2020-01-01T00:00:00Z is in the past'],
    [{ expires_at: '2099-01-01T00:00:00Z' }, 'expires_at 2099-01-01T00:00:00Z is more than a year ahead'],
    [{ expires_at: '2026-12-01T10:00:00' }, 'expires_at must be an ISO 8601 date and time with a time zone'],
    [{ expires_at: 'tomorrow' }, /expires_at must be an ISO 8601/],
    [{ ttl_seconds: 600, on_expiry: 'explode' }, 'on_expiry must be one of release, poweroff, destroy'],
    [{ on_expiry: 'destroy' }, 'on_expiry needs ttl_seconds or expires_at'],
  ])('answers 400 for the lease %j and assigns nothing', async (lease, message) => {
    const response = await assign('1', lease);
    expectEnvelope(response, 400, message);
    expect((await status('lease_dummy')).find((e) => e.id_vm === '1')).toBeUndefined();
  });

  it('extends a lease; answers 404 for an unassigned node and 400 without exactly one end', async () => {
    const id = await startNode('l-extend');
    expectEnvelope(
      await put('/api/v1/vm/action/extend/lease_dummy', { node: id, ttl_seconds: 600 }),
      404,
      `Node ${id} of cloud 'lease_dummy' is not assigned`,
    );
    expectEnvelope(
      await put('/api/v1/vm/action/extend/lease_dummy', { node: '99999', ttl_seconds: 600 }),
      404,
    );
    await assign(id, { ttl_seconds: 60, on_expiry: 'poweroff' });
    expectEnvelope(await put('/api/v1/vm/action/extend/lease_dummy', { node: id }), 400);
    expectEnvelope(
      await put('/api/v1/vm/action/extend/lease_dummy', {
        node: id,
        ttl_seconds: 60,
        expires_at: '2099-01-01T00:00:00Z',
      }),
      400,
      'exactly one of ttl_seconds and expires_at is required',
    );
    const extended = await put('/api/v1/vm/action/extend/lease_dummy.json', {
      hostname: 'l-extend',
      ttl_seconds: 7200,
    });
    expect(extended.status).toBe(200);
    expect(extended.body).toMatchObject({ status: 'ok', id_vm: id, on_expiry: 'poweroff' });
    const body = extended.body as { id: number; expires_at: string; result: string };
    expect(body.result).toBe(`VM ${id} leased until ${body.expires_at}`);
    expect((await status('lease_dummy')).find((e) => e.id_vm === id)?.expires_at).toBe(body.expires_at);
  });

  it('carries out expiries at their time, each once: release, poweroff, destroy', async () => {
    const scheduler = t.app.get(LeaseScheduler);
    const ids = {
      release: await startNode('x-release'),
      poweroff: await startNode('x-poweroff'),
      destroy: await startNode('x-destroy'),
    };
    for (const [onExpiry, id] of Object.entries(ids)) {
      expect((await assign(id, { ttl_seconds: 120, on_expiry: onExpiry })).status).toBe(200);
    }
    // Not yet at their time: nothing happens.
    await scheduler.tick(new Date(Date.now() + 60_000));
    expect((await status('lease_dummy')).map((e) => e.id_vm)).toEqual(
      expect.arrayContaining(Object.values(ids)),
    );

    // Every other lease of this file ends within two years: all of them are carried out now.
    await expect(scheduler.tick(new Date(Date.now() + 2 * 31_536_000_000))).resolves.toBeGreaterThanOrEqual(
      3,
    );
    expect(await status('lease_dummy')).toEqual(
      // Only the assignment without a lease stays.
      [expect.objectContaining({ expires_at: null })],
    );
    const nodes = (
      (await t.http.get('/api/v1/nodes/lease_dummy').set('X-Auth-Token', agent)).body as {
        nodes: { id: string; state: number }[];
      }
    ).nodes;
    const stateOf = (id: string) => nodes.find((node) => node.id === id)?.state;
    expect(stateOf(ids.release)).toBe(0);
    expect(stateOf(ids.poweroff)).toBe(5);
    expect(stateOf(ids.destroy)).toBeUndefined();
    // Done: a later tick finds nothing.
    await expect(scheduler.tick(new Date(Date.now() + 3 * 31_536_000_000))).resolves.toBe(0);
  });
});
