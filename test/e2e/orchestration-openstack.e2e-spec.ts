import { createHash } from 'node:crypto';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { sshPublicKey } from '../support/ssh-keys.js';
import { expectEnvelope, writeCloudsFile } from '../support/orchestration.js';
import { FAKE_NETWORK_ID, OpenStackFake } from '../fakes/openstack-fake.js';

const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

describe(`area C: an OpenStack cloud through the HTTP API (${testDatabase()})`, () => {
  let fake: OpenStackFake;
  let clouds: ReturnType<typeof writeCloudsFile>;
  let t: TestApp;
  let agent: string;

  beforeAll(async () => {
    fake = await OpenStackFake.start();
    const cloud = (extra: string) => `
    type: openstack
    auth_url: ${fake.authUrl}
    username: ${fake.username}
    project_name: ${fake.projectName}
    user_domain_name: ${fake.userDomainName}
    project_domain_name: ${fake.projectDomainName}
    region: RegionOne
    interface: public${extra}`;
    clouds = writeCloudsFile(`
clouds:
  default: {type: dummy}
  ostack:${cloud('\n    password: ${OPENSTACK_PASSWORD}')}
  ostack_net:${cloud(`\n    password: \${OPENSTACK_PASSWORD}\n    network: ${FAKE_NETWORK_ID}`)}
  ostack_badpw:${cloud('\n    password: wrong-Pa55word-for-svc')}
`);
    t = await createTestApp({
      CLOUDS_FILE: clouds.path,
      OPENSTACK_PASSWORD: fake.password,
      UPSTREAM_TIMEOUT_SECONDS: '1',
    });
    agent = await t.userToken(['agent'], 'agent1');
  });

  afterEach(() => {
    fake.recover();
  });

  afterAll(async () => {
    await t.close();
    await fake.close();
    clouds.remove();
  });

  const get = (path: string) => t.http.get(path).set('X-Auth-Token', agent);
  const post = (path: string, body: object) => t.http.post(path).set('X-Auth-Token', agent).send(body);
  const put = (path: string, body: object) => t.http.put(path).set('X-Auth-Token', agent).send(body);

  /** The reply carries neither the cloud's password nor a Keystone token. */
  const expectNoSecret = (body: unknown): void => {
    const text = JSON.stringify(body);
    expect(text).not.toContain(fake.password);
    expect(text).not.toContain('wrong-Pa55word-for-svc');
    expect(text).not.toMatch(/gAAAAA/);
  };

  it('lists the servers as nodes of the contract, states and addresses mapped', async () => {
    const response = await get('/api/v1/nodes/ostack');
    expect(response.status).toBe(200);
    const nodes = response.body.nodes as Record<string, unknown>[];
    expect(nodes.map((node) => node.id)).toEqual(['12065', '12064']);
    expect(nodes[1]).toEqual({
      id: '12064',
      uuid: sha1('12064:openstack'),
      name: 'lc-test',
      cloud_type: 'openstack',
      provider: 'ostack',
      extra: expect.objectContaining({ status: 'ACTIVE', flavorId: expect.any(String) }),
      private_ips: ['10.182.64.29', 'fec0:4801:7808:52:16:3eff:fe6e:b7e2'],
      public_ips: ['50.57.94.30', '2001:4801:7808:52:16:3eff:fe77:32e3'],
      state: 0,
    });
    expect(nodes[0]).toMatchObject({
      name: 'lc-test-2',
      state: 3,
      public_ips: ['50.57.94.35', '2001:4801:7808:52:16:3eff:fe47:788a', '12.16.18.28', '1.1.1.1', '2.2.2.2'],
      private_ips: [
        '10.182.64.34',
        'fec0:4801:7808:52:16:3eff:fe60:187d',
        '192.168.3.3',
        '10.3.3.3',
        '172.16.1.1',
      ],
    });
    // The endpoints of the catalog for RegionOne, public interface.
    const nova = fake.requestsTo('GET', '/servers/detail');
    expect(nova.length).toBeGreaterThan(0);
    expect(nova.every((request) => request.region === 'RegionOne' && request.interface === 'public')).toBe(
      true,
    );
  });

  it('lists flavors and every page of Glance images in the contract shape', async () => {
    const sizes = await get('/api/v1/sizes/ostack');
    expect(sizes.status).toBe(200);
    expect(sizes.body.flavors).toHaveLength(fake.flavorIds().length);
    expect(sizes.body.flavors).toContainEqual({
      id: '2',
      name: '512 slice',
      cloud_type: 'openstack',
      provider: 'ostack',
      cpu: 1,
      ram: 512,
      disk: 20,
    });
    expect((await get('/api/v1/flavors/ostack.json')).body).toEqual(sizes.body);

    fake.clearRequests();
    const images = await get('/api/v1/images/ostack');
    expect(images.status).toBe(200);
    expect((images.body.images as { id: string }[]).map((image) => image.id)).toEqual(fake.imageIds());
    expect(images.body.images).toContainEqual({
      id: '7',
      name: 'Ubuntu Lucid (10.04)',
      cloud_type: 'openstack',
      provider: 'ostack',
    });
    expect(fake.requestsTo('GET', '/v2/images').length).toBeGreaterThan(1);
  });

  it('starts a server with the right POST /servers body, and stops it with DELETE', async () => {
    await post('/api/v1/keypairs/ostack', { name: 'mykey', public_key: sshPublicKey() }).expect(201);
    fake.clearRequests();
    const started = await post('/api/v1/vm/start/ostack', {
      name: 'web-1',
      image: '7',
      size: '2',
      keyname: 'mykey',
      metadata: { purpose: 'test' },
    });
    expect(started.status).toBe(200);
    const [create] = fake.requestsTo('POST', /\/servers$/);
    expect(create.body).toEqual({
      server: {
        name: 'web-1',
        imageRef: '7',
        flavorRef: '2',
        networks: 'auto',
        key_name: 'agent1.mykey',
        metadata: { purpose: 'test', owner: 'agent1' },
      },
    });
    expect(create.headers['x-openstack-nova-api-version']).toBe('2.37');
    expect(typeof create.headers['x-auth-token']).toBe('string');
    const node = started.body.nodes;
    expect(node).toMatchObject({
      name: 'web-1',
      uuid: sha1(`${node.id}:openstack`),
      cloud_type: 'openstack',
      provider: 'ostack',
      state: 0,
      private_ips: ['10.0.0.1'],
      public_ips: [],
    });
    expect(fake.serverIds()).toContain(node.id);

    const stopped = await put('/api/v1/vm/stop/ostack', { node: node.id });
    expect(stopped.body).toEqual({ status: 'ok', result: `Node ${node.id} deleted` });
    expect(fake.requestsTo('DELETE', `/servers/${node.id}`)).toHaveLength(1);
    expect(fake.serverIds()).not.toContain(node.id);
    expectEnvelope(
      await put('/api/v1/vm/stop/ostack', { node: node.id }),
      404,
      `Node ${node.id} not found in cloud 'ostack'`,
    );
  });

  it('sends the configured network when the cloud has one', async () => {
    fake.clearRequests();
    const started = await post('/api/v1/vm/start/ostack_net', { name: 'net-1', image: '1', size: '8' });
    expect(started.status).toBe(200);
    const [create] = fake.requestsTo('POST', /\/servers$/);
    expect(create.body).toEqual({
      server: {
        name: 'net-1',
        imageRef: '1',
        flavorRef: '8',
        networks: [{ uuid: FAKE_NETWORK_ID }],
        metadata: { owner: 'agent1' },
      },
    });
    await put('/api/v1/vm/stop/ostack_net', { hostname: 'net-1' }).expect(200);
  });

  it('refuses an unknown image or size before POST /servers, and passes on Nova’s own 400', async () => {
    fake.clearRequests();
    expectEnvelope(
      await post('/api/v1/vm/start/ostack', { name: 'x', image: '999', size: '2' }),
      400,
      "Image '999' does not exist in cloud 'ostack'",
    );
    expectEnvelope(
      await post('/api/v1/vm/start/ostack', { name: 'x', image: '7', size: '999' }),
      400,
      "Size '999' does not exist in cloud 'ostack'",
    );
    expect(fake.requestsTo('POST', /\/servers$/)).toHaveLength(0);
    expectEnvelope(
      await post('/api/v1/vm/start/ostack', { name: 'x', image: '7', size: '2', keyname: 'no-such-key' }),
      400,
      "keyname 'no-such-key' is not a key pair of yours in cloud 'ostack'",
    );
  });

  it('renews an expired Keystone token once and the call succeeds', async () => {
    await get('/api/v1/nodes/ostack').expect(200);
    fake.expireTokens();
    fake.clearRequests();
    const response = await get('/api/v1/nodes/ostack');
    expect(response.status).toBe(200);
    expect(response.body.nodes.length).toBeGreaterThan(0);
    expect(fake.authCount).toBe(1);
    expect(fake.requestsTo('GET', '/servers/detail').map((r) => r.headers['x-auth-token'])).toHaveLength(2);
  });

  it('assigns and releases an OpenStack node found by its address', async () => {
    const assigned = await put('/api/v1/vm/action/assign/ostack', {
      hostname: '50.57.94.30',
      user: 'u',
      vm_type: 't',
    });
    expect(assigned.body).toEqual({
      status: 'ok',
      id: expect.any(Number),
      id_vm: '12064',
      result: 'VM 12064 assigned',
    });
    expect((await get('/api/v1/vm/status/ostack')).body.nodes).toEqual([
      expect.objectContaining({ id_vm: '12064', hostname: 'lc-test', user: 'u', vm_type: 't' }),
    ]);
    await put('/api/v1/vm/action/release/ostack', { node: '12064' }).expect(200);
  });

  describe('cloud failures become 502/503 envelopes naming the cloud, with no secret', () => {
    it.each([
      [
        'Nova down',
        () => fake.fail('down', 'compute'),
        502,
        /^Cloud 'ostack': listing servers failed: 127\.0\.0\.1:\d+ is unreachable/,
      ],
      [
        'Nova answering 500',
        () => fake.fail('server_error', 'compute'),
        502,
        /^Cloud 'ostack': listing servers failed: the cloud answered 500/,
      ],
      [
        'Nova timing out',
        () => fake.fail('hang', 'compute'),
        503,
        /^Cloud 'ostack': listing servers failed: 127\.0\.0\.1:\d+ did not answer within 1 s$/,
      ],
      ['Keystone down', () => fake.fail('down', 'identity'), 502, /^Cloud 'ostack': authentication failed/],
    ])('%s', async (_case, breakIt, status, message) => {
      fake.expireTokens();
      breakIt();
      const response = await get('/api/v1/nodes/ostack');
      expectEnvelope(response, status, message);
      expectNoSecret(response.body);
    });

    it('a quota refusal of POST /servers', async () => {
      fake.rejectNextCreate(
        403,
        'Quota exceeded for instances: Requested 1, but already used 10 of 10 instances',
      );
      const response = await post('/api/v1/vm/start/ostack', { name: 'x', image: '7', size: '2' });
      expectEnvelope(
        response,
        502,
        /^Cloud 'ostack': creating a server failed: the cloud answered 403 \(Quota exceeded/,
      );
      expectNoSecret(response.body);
    });

    it('credentials Keystone refuses', async () => {
      const response = await get('/api/v1/images/ostack_badpw');
      expectEnvelope(
        response,
        502,
        "Cloud 'ostack_badpw': authentication failed: Keystone refused the credentials of user 'svc'",
      );
      expectNoSecret(response.body);
    });

    it('never lists the settings of a cloud', async () => {
      const response = await get('/api/v1/clouds');
      expect(response.body.clouds).toEqual([
        { name: 'default', type: 'dummy' },
        { name: 'ostack', type: 'openstack' },
        { name: 'ostack_net', type: 'openstack' },
        { name: 'ostack_badpw', type: 'openstack' },
      ]);
      expectNoSecret(response.body);
    });
  });
});
