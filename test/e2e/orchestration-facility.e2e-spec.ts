import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { expectEnvelope } from '../support/orchestration.js';
import { AssignmentFacilityFake } from '../fakes/assignment-facility-fake.js';

describe(`area C: the external assignment facility at ASSIGNMENT_FACILITY_URL (${testDatabase()})`, () => {
  let facility: AssignmentFacilityFake;
  let t: TestApp;
  let agent: string;

  beforeAll(async () => {
    facility = await AssignmentFacilityFake.start();
    t = await createTestApp({ ASSIGNMENT_FACILITY_URL: `${facility.url}/`, UPSTREAM_TIMEOUT_SECONDS: '1' });
    agent = await t.userToken(['agent']);
  });

  afterEach(() => {
    facility.recover();
  });

  afterAll(async () => {
    await t.close();
    await facility.close();
  });

  const get = (path: string) => t.http.get(path).set('X-Auth-Token', agent);
  const put = (path: string, body: object) => t.http.put(path).set('X-Auth-Token', agent).send(body);

  it('assigns, lists and releases through the facility, with its ids', async () => {
    facility.requests.length = 0;
    const assigned = await put('/api/v1/vm/action/assign', {
      hostname: 'dummy-2',
      user: 'fake_test',
      vm_type: 'test',
    });
    expect(assigned.status).toBe(200);
    const [created] = facility.assignments.slice(-1);
    expect(assigned.body).toEqual({ status: 'ok', id: created.id, id_vm: '2', result: 'VM 2 assigned' });
    expect(facility.requests[0]).toEqual({
      method: 'POST',
      url: '/assignments',
      body: { cloud: 'default', node: '2', hostname: 'dummy-2', user: 'fake_test', vm_type: 'test' },
    });

    const status = await get('/api/v1/vm/status');
    expect(status.body).toEqual({
      status: 'ok',
      nodes: [
        {
          id: created.id,
          id_vm: '2',
          hostname: 'dummy-2',
          user: 'fake_test',
          vm_type: 'test',
          assigned_at: created.assigned_at,
          expires_at: null,
          on_expiry: null,
        },
      ],
    });
    expect(facility.requests.at(-1)).toMatchObject({ method: 'GET', url: '/assignments?cloud=default' });

    const released = await put('/api/v1/vm/action/release', { node: '2' });
    expect(released.body).toEqual({ status: 'ok', id: created.id, id_vm: '2', result: 'VM 2 released' });
    expect(facility.requests.at(-1)).toMatchObject({ method: 'DELETE', url: '/assignments/default/2' });
    expect(facility.active()).toEqual([]);
  });

  it('answers 409 and 404 as the facility decides', async () => {
    await put('/api/v1/vm/action/assign', { node: '1', user: 'a', vm_type: 't' }).expect(200);
    expectEnvelope(
      await put('/api/v1/vm/action/assign', { node: '1', user: 'b', vm_type: 't' }),
      409,
      "Node 1 of cloud 'default' is assigned already",
    );
    await put('/api/v1/vm/action/release', { node: '1' }).expect(200);
    expectEnvelope(
      await put('/api/v1/vm/action/release', { node: '1' }),
      404,
      "Node 1 of cloud 'default' is not assigned",
    );
  });

  it('answers one 200 and one 409 to two simultaneous assigns', async () => {
    const [first, second] = await Promise.all([
      put('/api/v1/vm/action/assign', { node: '2', user: 'a', vm_type: 't' }),
      put('/api/v1/vm/action/assign', { node: '2', user: 'b', vm_type: 't' }),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 409]);
    await put('/api/v1/vm/action/release', { node: '2' }).expect(200);
  });

  it('does not call the facility for emulate', async () => {
    facility.requests.length = 0;
    await put('/api/v1/vm/action/assign', { node: '1', user: 'a', vm_type: 't', emulate: 'True' }).expect(
      200,
    );
    await put('/api/v1/vm/action/release', { node: '1', emulate: true }).expect(200);
    expect(facility.requests).toEqual([]);
  });

  it('ends the assignment at the facility when the node is stopped, and stops even when the facility fails', async () => {
    const node = (
      await t.http
        .post('/api/v1/vm/start')
        .set('X-Auth-Token', agent)
        .send({ name: 'assigned', image: '1', size: '1' })
    ).body.nodes;
    await put('/api/v1/vm/action/assign', { node: node.id, user: 'a', vm_type: 't' }).expect(200);
    await put('/api/v1/vm/stop', { node: node.id }).expect(200);
    expect(facility.requests.at(-1)).toMatchObject({
      method: 'DELETE',
      url: `/assignments/default/${node.id}`,
    });
    expect(facility.active()).toEqual([]);

    const other = (
      await t.http
        .post('/api/v1/vm/start')
        .set('X-Auth-Token', agent)
        .send({ name: 'other', image: '1', size: '1' })
    ).body.nodes;
    facility.fail('down');
    await put('/api/v1/vm/stop', { node: other.id }).expect(200);
  });

  describe('facility failures are 502 envelopes', () => {
    it.each([
      ['an error status', () => facility.fail('status', 500), /failed: the facility answered 500$/],
      ['a body that is not JSON', () => facility.fail('garbage'), /failed: the answer has no integer id$/],
      ['a closed connection', () => facility.fail('down'), /failed: 127\.0\.0\.1:\d+ is unreachable/],
      [
        'no answer in time',
        () => facility.fail('hang'),
        /failed: 127\.0\.0\.1:\d+ did not answer within 1 s$/,
      ],
    ])('%s', async (_case, breakIt, detail) => {
      breakIt();
      const assign = await put('/api/v1/vm/action/assign', { node: '1', user: 'a', vm_type: 't' });
      expectEnvelope(
        assign,
        502,
        new RegExp(`^Assignment facility: assigning node 1 of cloud 'default' ${detail.source}`),
      );
      expectEnvelope(
        await put('/api/v1/vm/action/release', { node: '1' }),
        502,
        /^Assignment facility: releasing node 1/,
      );
      expectEnvelope(
        await get('/api/v1/vm/status'),
        502,
        /^Assignment facility: listing the assignments of cloud 'default' failed/,
      );
    });
  });
});
