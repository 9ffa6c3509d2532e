import { FAKE_NETWORK_ID, OpenStackFake } from '../fakes/openstack-fake.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { expectEnvelope, writeCloudsFile } from '../support/orchestration.js';

describe(`area C: reboot, poweroff and poweron (${testDatabase()})`, () => {
  let fake: OpenStackFake;
  let clouds: ReturnType<typeof writeCloudsFile>;
  let t: TestApp;
  let agent: string;

  beforeAll(async () => {
    fake = await OpenStackFake.start();
    clouds = writeCloudsFile(`
clouds:
  default: {type: dummy}
  power_dummy: {type: dummy}
${fake.cloudsFileEntry('ostack', { network: FAKE_NETWORK_ID })}
`);
    t = await createTestApp({ CLOUDS_FILE: clouds.path, OPENSTACK_PASSWORD: fake.password });
    agent = await t.userToken(['agent']);
  });

  afterAll(async () => {
    await t.close();
    await fake.close();
    clouds.remove();
  });

  const put = (path: string, body: object) => t.http.put(path).set('X-Auth-Token', agent).send(body);
  const post = (path: string, body: object) => t.http.post(path).set('X-Auth-Token', agent).send(body);
  const stateOf = async (cloud: string, id: string): Promise<number | undefined> => {
    const response = await t.http.get(`/api/v1/nodes/${cloud}`).set('X-Auth-Token', agent);
    return (response.body as { nodes: { id: string; state: number }[] }).nodes.find((node) => node.id === id)
      ?.state;
  };

  it('powers a dummy node off and on, by id and by hostname; the state is kept in the database', async () => {
    const started = await post('/api/v1/vm/start/power_dummy', { name: 'pw-1', image: '1', size: '1' });
    const id = (started.body as { nodes: { id: string } }).nodes.id;

    const off = await put('/api/v1/vm/poweroff/power_dummy', { node: id });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({
      status: 'ok',
      nodes: { id, name: 'pw-1', state: 5, cloud_type: 'dummy', provider: 'power_dummy' },
    });
    expect(await stateOf('power_dummy', id)).toBe(5);

    // Off again: nothing to do, the same answer.
    const again = await put('/api/v1/vm/poweroff/power_dummy.json', { hostname: 'pw-1' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ nodes: { id, state: 5 } });

    const rebootStopped = await put('/api/v1/vm/reboot/power_dummy', { node: id });
    expectEnvelope(
      rebootStopped,
      409,
      `Node ${id} of cloud 'power_dummy' is stopped: reboot is not possible`,
    );

    const on = await put('/api/v1/vm/poweron/power_dummy', { hostname: 'pw-1' });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ nodes: { id, state: 0 } });
    const reboot = await put('/api/v1/vm/reboot/power_dummy', { node: id });
    expect(reboot.status).toBe(200);
    expect(reboot.body).toMatchObject({ nodes: { id, state: 0 } });
    expect(await stateOf('power_dummy', id)).toBe(0);
  });

  it('answers 404 for an unknown node and for poweron of a destroyed one', async () => {
    expectEnvelope(
      await put('/api/v1/vm/reboot', { node: '999999' }),
      404,
      "Node 999999 not found in cloud 'default'",
    );
    expectEnvelope(await put('/api/v1/vm/poweroff', { hostname: 'nowhere' }), 404);
    const started = await post('/api/v1/vm/start', { name: 'pw-gone', image: '1', size: '1' });
    const id = (started.body as { nodes: { id: string } }).nodes.id;
    expect((await put('/api/v1/vm/stop', { node: id })).status).toBe(200);
    expectEnvelope(
      await put('/api/v1/vm/poweron', { node: id }),
      404,
      `Node ${id} not found in cloud 'default'`,
    );
  });

  it('answers 400 for a body without exactly one of node and hostname, 500 for an unknown cloud', async () => {
    expectEnvelope(await put('/api/v1/vm/poweroff', {}), 400);
    expectEnvelope(await put('/api/v1/vm/poweron', { node: '1', hostname: 'dummy-1' }), 400);
    expectEnvelope(await put('/api/v1/vm/reboot', { node: 7 }), 400);
    expectEnvelope(await put('/api/v1/vm/reboot/nope', { node: '1' }), 500);
  });

  it('needs the role agent or admin', async () => {
    const user = await t.userToken(['user']);
    const response = await t.http.put('/api/v1/vm/reboot').set('X-Auth-Token', user).send({ node: '1' });
    expectEnvelope(response, 403);
  });

  it('sends Nova server actions os-stop, os-start and reboot, once each', async () => {
    const started = await post('/api/v1/vm/start/ostack', { name: 'pw-nova', image: '7', size: '2' });
    const id = (started.body as { nodes: { id: string } }).nodes.id;
    const actions = () => fake.requestsTo('POST', `/servers/${id}/action`).map((request) => request.body);

    const off = await put('/api/v1/vm/poweroff/ostack', { node: id });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({
      nodes: { id, state: 5, cloud_type: 'openstack', extra: { status: 'SHUTOFF' } },
    });
    // Off already: Nova would answer 409, so nothing is sent.
    expect((await put('/api/v1/vm/poweroff/ostack', { hostname: 'pw-nova' })).status).toBe(200);
    expectEnvelope(await put('/api/v1/vm/reboot/ostack', { node: id }), 409);
    const on = await put('/api/v1/vm/poweron/ostack', { node: id });
    expect(on.body).toMatchObject({ nodes: { id, state: 0 } });
    const reboot = await put('/api/v1/vm/reboot/ostack', { node: id });
    expect(reboot.body).toMatchObject({ nodes: { id, state: 0 } });

    expect(actions()).toEqual([{ 'os-stop': null }, { 'os-start': null }, { reboot: { type: 'SOFT' } }]);
    expectEnvelope(await put('/api/v1/vm/poweron/ostack', { node: 'no-such-server' }), 404);
  });

  it('answers 409 with Nova’s message when Nova refuses the action', async () => {
    const id = fake.addServer({ name: 'pw-error', status: 'ERROR' });
    const response = await put('/api/v1/vm/reboot/ostack', { node: id });
    expectEnvelope(response, 409, /Cannot 'reboot' instance/);
    expect(JSON.stringify(response.body)).not.toContain(fake.password);
  });
});
