import { createHash } from 'node:crypto';
import { ConfigError } from '../../src/config/config-error.js';
import { createTestApp, startApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { sshPublicKey } from '../support/ssh-keys.js';
import { expectEnvelope, sharedDatabase, writeCloudsFile } from '../support/orchestration.js';

const CLOUDS = `
clouds:
  default: {type: dummy}
  fake_driver: {type: dummy}
  spare: {type: dummy}
  burst: {type: dummy}
`;

// A fresh dummy cloud (API.md 3.1), as the API shows it for a cloud named `name`.
const freshNodes = (name: string): unknown[] =>
  ['1', '2'].map((id) => ({
    id,
    uuid: createHash('sha1').update(`${id}:dummy`).digest('hex'),
    name: `dummy-${id}`,
    cloud_type: 'dummy',
    provider: name,
    extra: { foo: 'bar' },
    private_ips: [],
    public_ips: ['127.0.0.1'],
    state: 0,
  }));

const freshImages = (name: string): unknown[] =>
  [
    ['1', 'Ubuntu 9.10'],
    ['2', 'Ubuntu 9.04'],
    ['3', 'Slackware 4'],
  ].map(([id, image]) => ({ id, name: image, cloud_type: 'dummy', provider: name }));

const freshSizes = (name: string): unknown[] =>
  (
    [
      ['1', 'Small', 128, 4, 1],
      ['2', 'Medium', 512, 16, 1],
      ['3', 'Big', 4096, 32, 2],
      ['4', 'XXL Big', 8192, 128, 4],
    ] as const
  ).map(([id, size, ram, disk, cpu]) => ({
    id,
    name: size,
    cloud_type: 'dummy',
    provider: name,
    cpu,
    ram,
    disk,
  }));

describe(`area C: orchestration on dummy clouds (${testDatabase()})`, () => {
  let clouds: ReturnType<typeof writeCloudsFile>;
  let t: TestApp;
  let agent: string;

  beforeAll(async () => {
    clouds = writeCloudsFile(CLOUDS);
    t = await createTestApp({ CLOUDS_FILE: clouds.path });
    agent = await t.userToken(['agent'], 'agent1');
  });

  afterAll(async () => {
    await t.close();
    clouds.remove();
  });

  const get = (path: string) => t.http.get(path).set('X-Auth-Token', agent);
  const post = (path: string, body: object) => t.http.post(path).set('X-Auth-Token', agent).send(body);
  const put = (path: string, body: object) => t.http.put(path).set('X-Auth-Token', agent).send(body);

  it("passes the original system's own test flow on cloud fake_driver", async () => {
    for (const [path, member] of [
      ['/api/v1/nodes/fake_driver', 'nodes'],
      ['/api/v1/images/fake_driver', 'images'],
      ['/api/v1/flavors/fake_driver', 'flavors'],
    ]) {
      const listed = await get(path);
      expect(listed.status).toBe(200);
      expect(listed.body.status).toBe('ok');
      expect(Array.isArray(listed.body[member])).toBe(true);
    }

    const started = await post('/api/v1/vm/start/fake_driver', { name: 'cloud', image: '1', size: '1' });
    expect(started.status).toBe(200);
    expect(started.body.status).toBe('ok');
    const stopped = await put('/api/v1/vm/stop/fake_driver', { node: started.body.nodes.id });
    expect(stopped.status).toBe(200);
    expect(stopped.body).toEqual({ status: 'ok', result: `Node ${started.body.nodes.id} deleted` });

    // The original's assign test ran on a fresh fake_driver, where the first started node is "3".
    // Here ids are never reused (node "3" above is gone for good), so that half gets a fresh
    // fake_driver of its own: a second copy of the service on a new database.
    const fresh = await createTestApp({ CLOUDS_FILE: clouds.path });
    try {
      const token = await fresh.userToken(['agent']);
      const send = (method: 'post' | 'put', path: string, body: object) =>
        fresh.http[method](path).set('X-Auth-Token', token).send(body);
      const again = await send('post', '/api/v1/vm/start/fake_driver', {
        name: 'cloud',
        image: '1',
        size: '1',
      });
      expect(again.body.nodes.id).toBe('3');
      const assigned = await send('put', '/api/v1/vm/action/assign/fake_driver', {
        node: '3',
        user: 'fake_test',
        vm_type: 'test',
      });
      expect(assigned.status).toBe(200);
      expect(assigned.body).toEqual({
        status: 'ok',
        id: expect.any(Number),
        id_vm: '3',
        result: 'VM 3 assigned',
      });
      expect(Number.isInteger(assigned.body.id)).toBe(true);
      const released = await send('put', '/api/v1/vm/action/release/fake_driver', { node: '3' });
      expect(released.status).toBe(200);
      expect(released.body).toEqual({
        status: 'ok',
        id: assigned.body.id,
        id_vm: '3',
        result: 'VM 3 released',
      });
    } finally {
      await fresh.close();
    }
  });

  describe('a fresh dummy cloud', () => {
    it('lists exactly the nodes, images and sizes of libcloud’s Dummy driver', async () => {
      const [nodes, images, sizes, flavors] = await Promise.all([
        get('/api/v1/nodes'),
        get('/api/v1/images'),
        get('/api/v1/sizes'),
        get('/api/v1/flavors'),
      ]);
      expect(nodes.body).toEqual({ status: 'ok', nodes: freshNodes('default') });
      expect(images.body).toEqual({ status: 'ok', images: freshImages('default') });
      expect(sizes.body).toEqual({ status: 'ok', flavors: freshSizes('default') });
      expect(flavors.body).toEqual(sizes.body);
      expect(nodes.headers['content-type']).toMatch(/^application\/json/);
    });

    it('gives the same bodies with and without .json and the default cloud segment', async () => {
      for (const operation of ['nodes', 'images', 'sizes', 'flavors', 'vm/status']) {
        const forms = await Promise.all(
          [
            `/api/v1/${operation}`,
            `/api/v1/${operation}.json`,
            `/api/v1/${operation}/default`,
            `/api/v1/${operation}/default.json`,
          ].map((path) => get(path)),
        );
        for (const form of forms) {
          expect(form.status).toBe(200);
          expect(form.body).toEqual(forms[0].body);
        }
      }
      for (const path of ['/api/v1', '/api/v1/clouds', '/api/v1/cloud']) {
        const plain = await get(path);
        const suffixed = await get(`${path}.json`);
        expect(plain.status).toBe(200);
        expect(suffixed.body).toEqual(plain.body);
      }
    });

    it('accepts .json on the operations with a body too', async () => {
      const started = await post('/api/v1/vm/start.json', { name: 'suffixed', image: '2', size: '2' });
      expect(started.status).toBe(200);
      const { id } = started.body.nodes;
      await put('/api/v1/vm/action/assign/default.json', { node: id, user: 'u', vm_type: 't' }).expect(200);
      await put('/api/v1/vm/action/release.json', { node: id }).expect(200);
      await put('/api/v1/vm/stop/default.json', { node: id }).expect(200);
    });
  });

  it('answers the root and the list of clouds, names and types only', async () => {
    expect((await get('/api/v1')).body).toEqual({ status: 'ok' });
    expect((await get('/api/v1/clouds')).body).toEqual({
      status: 'ok',
      clouds: [
        { name: 'default', type: 'dummy' },
        { name: 'fake_driver', type: 'dummy' },
        { name: 'spare', type: 'dummy' },
        { name: 'burst', type: 'dummy' },
      ],
    });
  });

  describe('start and stop', () => {
    it('starts a node with the next id, its address, and extra with image, size, keyname and metadata', async () => {
      const before = (await get('/api/v1/nodes')).body.nodes as { id: string }[];
      await post('/api/v1/keypairs', { name: 'mykey', public_key: sshPublicKey() }).expect(201);
      const started = await post('/api/v1/vm/start', {
        name: 'web-1',
        image: '3',
        size: '4',
        keyname: 'mykey',
        metadata: { purpose: 'test' },
        unknown_member: 'ignored',
      });
      expect(started.status).toBe(200);
      const node = started.body.nodes;
      const id = Number(node.id);
      expect(id).toBeGreaterThan(Math.max(...before.map((n) => Number(n.id))));
      expect(started.body).toEqual({
        status: 'ok',
        nodes: {
          id: String(id),
          uuid: createHash('sha1').update(`${id}:dummy`).digest('hex'),
          name: 'web-1',
          cloud_type: 'dummy',
          provider: 'default',
          extra: {
            foo: 'bar',
            image: '3',
            size: '4',
            // The key pair at the cloud is named for its owner; the service tags every node with its owner.
            keyname: 'agent1.mykey',
            metadata: { purpose: 'test' },
            tags: { owner: 'agent1' },
          },
          private_ips: [],
          public_ips: [`127.0.0.${id}`],
          state: 0,
        },
      });
      const listed = (await get('/api/v1/nodes')).body.nodes as unknown[];
      expect(listed).toContainEqual(node);
      await put('/api/v1/vm/stop', { node: node.id }).expect(200);
    });

    it('never reuses the id of a stopped node', async () => {
      const first = (await post('/api/v1/vm/start', { name: 'a', image: '1', size: '1' })).body.nodes.id;
      await put('/api/v1/vm/stop', { node: first }).expect(200);
      const second = (await post('/api/v1/vm/start', { name: 'b', image: '1', size: '1' })).body.nodes.id;
      expect(Number(second)).toBe(Number(first) + 1);
      await put('/api/v1/vm/stop', { node: second }).expect(200);
    });

    it('stops a node found by its hostname (name or IP address)', async () => {
      const byName = (await post('/api/v1/vm/start', { name: 'to-stop', image: '1', size: '1' })).body.nodes;
      const stopped = await put('/api/v1/vm/stop', { hostname: 'to-stop' });
      expect(stopped.body).toEqual({ status: 'ok', result: `Node ${byName.id} deleted` });
      const byIp = (await post('/api/v1/vm/start', { name: 'by-ip', image: '1', size: '1' })).body.nodes;
      await put('/api/v1/vm/stop', { hostname: byIp.public_ips[0] }).expect(200);
      const ids = ((await get('/api/v1/nodes')).body.nodes as { id: string }[]).map((n) => n.id);
      expect(ids).not.toContain(byName.id);
      expect(ids).not.toContain(byIp.id);
    });

    it('gives concurrent starts on a cloud never used before distinct ids, with assigns in between', async () => {
      const started = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          post('/api/v1/vm/start/burst', { name: `c${i}`, image: '1', size: '1' }),
        ),
      );
      const ids = started.map((response) => {
        expect(response.status).toBe(200);
        return Number(response.body.nodes.id);
      });
      expect(ids.sort((a, b) => a - b)).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
      const assigned = await Promise.all(
        ids.map((id) => put('/api/v1/vm/action/assign/burst', { node: String(id), user: 'u', vm_type: 't' })),
      );
      expect(assigned.map((response) => response.status)).toEqual(ids.map(() => 200));
      expect(new Set(assigned.map((response) => response.body.id as number)).size).toBe(ids.length);
      const listed = ((await get('/api/v1/nodes/burst')).body.nodes as { id: string }[]).map((n) => n.id);
      expect(listed).toEqual(['1', '2', ...ids.map(String)]);
    });
  });

  describe('assign, release and status', () => {
    it('assigns, lists the active assignment, releases and leaves the node running', async () => {
      const node = (await post('/api/v1/vm/start/fake_driver', { name: 'worker', image: '1', size: '1' }))
        .body.nodes;
      const assigned = await put('/api/v1/vm/action/assign/fake_driver', {
        hostname: 'worker',
        user: 'alice',
        vm_type: 'jupyter',
      });
      expect(assigned.body).toEqual({
        status: 'ok',
        id: expect.any(Number),
        id_vm: node.id,
        result: `VM ${node.id} assigned`,
      });

      const status = await get('/api/v1/vm/status/fake_driver');
      expect(status.body.nodes).toContainEqual({
        id: assigned.body.id,
        id_vm: node.id,
        hostname: 'worker',
        user: 'alice',
        vm_type: 'jupyter',
        assigned_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
        expires_at: null,
        on_expiry: null,
      });
      const assignedAt = Date.parse(
        (status.body.nodes as { id: number; assigned_at: string }[]).find((a) => a.id === assigned.body.id)!
          .assigned_at,
      );
      expect(Math.abs(assignedAt - Date.now())).toBeLessThan(60_000);
      // Other clouds do not see it.
      expect((await get('/api/v1/vm/status/spare')).body.nodes).not.toContainEqual(
        expect.objectContaining({ id: assigned.body.id }),
      );

      const released = await put('/api/v1/vm/action/release/fake_driver', { hostname: node.public_ips[0] });
      expect(released.body).toEqual({
        status: 'ok',
        id: assigned.body.id,
        id_vm: node.id,
        result: `VM ${node.id} released`,
      });
      expect((await get('/api/v1/vm/status/fake_driver')).body.nodes).not.toContainEqual(
        expect.objectContaining({ id: assigned.body.id }),
      );
      expect(
        ((await get('/api/v1/nodes/fake_driver')).body.nodes as { id: string }[]).map((n) => n.id),
      ).toContain(node.id);
      // Released, it can be assigned again: a new assignment with a new id.
      const again = await put('/api/v1/vm/action/assign/fake_driver', {
        node: node.id,
        user: 'bob',
        vm_type: 'x',
      });
      expect(again.status).toBe(200);
      expect(again.body.id).toBeGreaterThan(assigned.body.id);
      await put('/api/v1/vm/stop/fake_driver', { node: node.id }).expect(200);
    });

    it('ends the assignment of a node that is stopped', async () => {
      const node = (await post('/api/v1/vm/start', { name: 'short-lived', image: '1', size: '1' })).body
        .nodes;
      await put('/api/v1/vm/action/assign', { node: node.id, user: 'u', vm_type: 't' }).expect(200);
      await put('/api/v1/vm/stop', { node: node.id }).expect(200);
      const status = await get('/api/v1/vm/status');
      expect((status.body.nodes as { id_vm: string }[]).map((a) => a.id_vm)).not.toContain(node.id);
    });

    it('answers one 200 and one 409 to two simultaneous assigns of one node', async () => {
      const node = (await post('/api/v1/vm/start', { name: 'contended', image: '1', size: '1' })).body.nodes;
      const [first, second] = await Promise.all([
        put('/api/v1/vm/action/assign', { node: node.id, user: 'a', vm_type: 't' }),
        put('/api/v1/vm/action/assign', { node: node.id, user: 'b', vm_type: 't' }),
      ]);
      expect([first.status, second.status].sort()).toEqual([200, 409]);
      expectEnvelope(
        first.status === 409 ? first : second,
        409,
        `Node ${node.id} of cloud 'default' is assigned already`,
      );
      const active = ((await get('/api/v1/vm/status')).body.nodes as { id_vm: string }[]).filter(
        (a) => a.id_vm === node.id,
      );
      expect(active).toHaveLength(1);
      await put('/api/v1/vm/stop', { node: node.id }).expect(200);
    });

    describe('emulate', () => {
      it.each([true, 'True'])(
        'answers the fixed reply for assign and release with emulate %p, touching nothing',
        async (emulate) => {
          const before = (await get('/api/v1/vm/status')).body;
          const nodesBefore = (await get('/api/v1/nodes')).body;
          for (const path of ['/api/v1/vm/action/assign', '/api/v1/vm/action/release']) {
            const byNode = await put(path, { node: '999', user: 'u', vm_type: 't', emulate });
            expect(byNode.status).toBe(200);
            expect(byNode.body).toEqual({
              status: 'ok',
              id: 0,
              id_vm: '999',
              result: 'VM 999 assigned (emulated)',
            });
            const byHostname = await put(path, { hostname: 'dummy-1', user: 'u', vm_type: 't', emulate });
            expect(byHostname.body).toEqual({
              status: 'ok',
              id: 0,
              id_vm: 'dummy-1',
              result: 'VM dummy-1 assigned (emulated)',
            });
          }
          expect((await get('/api/v1/vm/status')).body).toEqual(before);
          expect((await get('/api/v1/nodes')).body).toEqual(nodesBefore);
        },
      );

      it('still validates the body', async () => {
        expectEnvelope(
          await put('/api/v1/vm/action/assign', { node: '1', vm_type: 't', emulate: true }),
          400,
        );
        expectEnvelope(
          await put('/api/v1/vm/action/release', { emulate: 'True' }),
          400,
          'exactly one of node or hostname is required',
        );
      });

      it.each([false, 'true', 'yes', 1])('ignores emulate %p', async (emulate) => {
        expectEnvelope(
          await put('/api/v1/vm/action/assign', { node: '999', user: 'u', vm_type: 't', emulate }),
          404,
        );
        expectEnvelope(await put('/api/v1/vm/action/release', { node: '1', emulate }), 404);
      });
    });
  });

  describe('tokens', () => {
    it('takes the token from Bearer, X-Auth-Token, the session cookie, and auth_token in the body or query', async () => {
      await t.http.get('/api/v1/nodes').set('Authorization', `Bearer ${agent}`).expect(200);
      await t.http.get('/api/v1/nodes').set('X-Auth-Token', agent).expect(200);
      await t.http.get('/api/v1/nodes').set('Cookie', `session=${agent}`).expect(200);
      await t.http.get(`/api/v1/nodes?auth_token=${agent}`).expect(200);
      await t.http.get(`/api/v1/nodes.json?other=1&auth_token=${encodeURIComponent(agent)}`).expect(200);
      const started = await t.http
        .post('/api/v1/vm/start')
        .send({ name: 'by-body-token', image: '1', size: '1', auth_token: agent });
      expect(started.status).toBe(200);
      await t.http
        .put('/api/v1/vm/stop')
        .send({ node: started.body.nodes.id, auth_token: agent })
        .expect(200);
    });

    it('lets an admin through', async () => {
      const admin = await t.login();
      await t.http.get('/api/v1/nodes').set('Authorization', `Bearer ${admin}`).expect(200);
    });

    it('prefers a token in a header to auth_token', async () => {
      expectEnvelope(
        await t.http.get(`/api/v1/nodes?auth_token=${agent}`).set('X-Auth-Token', 'not-a-token'),
        401,
        'The token is not valid',
      );
    });

    it('does not take auth_token outside area C', async () => {
      const response = await t.http.get(`/users/current?auth_token=${agent}`);
      expect(response.status).toBe(401);
      expect(response.body.status).toBe(401);
    });
  });

  describe('the error envelope of API.md 3.5', () => {
    describe('400', () => {
      it.each([
        ['name missing', { image: '1', size: '1' }, /^name must be/],
        ['name not a string', { name: 7, image: '1', size: '1' }, /^name must be a string/],
        ['image missing', { name: 'x', size: '1' }, /^image must be/],
        ['image not a string', { name: 'x', image: 1, size: '1' }, /^image must be a string/],
        ['size missing', { name: 'x', image: '1' }, /^size must be/],
        ['size not a string', { name: 'x', image: '1', size: ['1'] }, /^size must be a string/],
        [
          'metadata not an object of strings',
          { name: 'x', image: '1', size: '1', metadata: { a: 1 } },
          /^metadata must be/,
        ],
        [
          'unknown image',
          { name: 'x', image: '42', size: '1' },
          "Image '42' does not exist in cloud 'default'",
        ],
        [
          'unknown size',
          { name: 'x', image: '1', size: '42' },
          "Size '42' does not exist in cloud 'default'",
        ],
      ])('start: %s', async (_case, body, message) => {
        expectEnvelope(await post('/api/v1/vm/start', body), 400, message);
      });

      it.each([
        [
          'neither node nor hostname',
          { user: 'u', vm_type: 't' },
          'exactly one of node or hostname is required',
        ],
        [
          'both node and hostname',
          { node: '1', hostname: 'dummy-1', user: 'u', vm_type: 't' },
          'exactly one of node or hostname is required',
        ],
        [
          'node not a string',
          { node: 1, user: 'u', vm_type: 't' },
          'node must be a string of 1 to 255 characters',
        ],
        ['hostname not a string', { hostname: true, user: 'u', vm_type: 't' }, /^hostname must be a string/],
        ['user missing', { node: '1', vm_type: 't' }, /^user must be/],
        ['user not a string', { node: '1', user: 5, vm_type: 't' }, /^user must be a string/],
        ['vm_type missing', { node: '1', user: 'u' }, /^vm_type must be/],
        ['vm_type not a string', { node: '1', user: 'u', vm_type: null }, /^vm_type must be/],
      ])('assign: %s', async (_case, body, message) => {
        expectEnvelope(await put('/api/v1/vm/action/assign', body), 400, message);
      });

      it.each([
        ['release', '/api/v1/vm/action/release'],
        ['stop', '/api/v1/vm/stop'],
      ])('%s: neither or both of node and hostname', async (_case, path) => {
        expectEnvelope(await put(path, {}), 400, 'exactly one of node or hostname is required');
        expectEnvelope(
          await put(path, { node: '1', hostname: 'x' }),
          400,
          'exactly one of node or hostname is required',
        );
      });

      it('answers a body that is not JSON', async () => {
        const response = await t.http
          .post('/api/v1/vm/start')
          .set('X-Auth-Token', agent)
          .set('Content-Type', 'application/json')
          .send('{"name": ');
        expectEnvelope(response, 400);
      });
    });

    describe('401 and 403', () => {
      it.each([
        ['GET', '/api/v1'],
        ['GET', '/api/v1/nodes'],
        ['GET', '/api/v1/clouds'],
        ['POST', '/api/v1/vm/start'],
        ['PUT', '/api/v1/vm/stop'],
        ['PUT', '/api/v1/vm/action/assign'],
        ['PUT', '/api/v1/vm/action/release'],
        ['GET', '/api/v1/vm/status.json'],
      ])('%s %s: 401 without a token, 401 with a bad one, 403 for the role user', async (method, path) => {
        const user = await userToken();
        const send = (token?: string) => {
          const call =
            method === 'GET' ? t.http.get(path) : method === 'POST' ? t.http.post(path) : t.http.put(path);
          return (token === undefined ? call : call.set('Authorization', `Bearer ${token}`)).send({});
        };
        expectEnvelope(await send(), 401);
        expectEnvelope(await send('x.y.z'), 401, 'The token is not valid');
        expectEnvelope(await send(user), 403, 'This operation needs the role agent or admin');
      });

      let plainUser: string | undefined;
      const userToken = async (): Promise<string> => (plainUser ??= await t.userToken(['user']));
    });

    describe('404', () => {
      it('stop, assign and release of an unknown node', async () => {
        expectEnvelope(
          await put('/api/v1/vm/stop', { node: '9999' }),
          404,
          "Node 9999 not found in cloud 'default'",
        );
        expectEnvelope(
          await put('/api/v1/vm/stop', { node: 'abc' }),
          404,
          "Node abc not found in cloud 'default'",
        );
        expectEnvelope(
          await put('/api/v1/vm/stop', { hostname: 'nowhere' }),
          404,
          "No node with hostname nowhere in cloud 'default'",
        );
        expectEnvelope(
          await put('/api/v1/vm/action/assign', { node: '9999', user: 'u', vm_type: 't' }),
          404,
          "Node 9999 not found in cloud 'default'",
        );
        expectEnvelope(await put('/api/v1/vm/action/release', { hostname: 'nowhere' }), 404);
      });

      it('release of a node with no active assignment', async () => {
        expectEnvelope(
          await put('/api/v1/vm/action/release', { node: '2' }),
          404,
          "Node 2 of cloud 'default' is not assigned",
        );
      });
    });

    it('409: assign of a node assigned already', async () => {
      await put('/api/v1/vm/action/assign', { node: '1', user: 'u', vm_type: 't' }).expect(200);
      expectEnvelope(
        await put('/api/v1/vm/action/assign', { node: '1', user: 'v', vm_type: 't' }),
        409,
        "Node 1 of cloud 'default' is assigned already",
      );
      await put('/api/v1/vm/action/release', { node: '1' }).expect(200);
    });

    describe('500', () => {
      it.each([
        ['GET', '/api/v1/nodes/nope'],
        ['GET', '/api/v1/images/nope.json'],
        ['GET', '/api/v1/sizes/nope'],
        ['GET', '/api/v1/flavors/nope'],
        ['POST', '/api/v1/vm/start/nope'],
        ['PUT', '/api/v1/vm/stop/nope'],
        ['PUT', '/api/v1/vm/action/assign/nope'],
        ['PUT', '/api/v1/vm/action/release/nope'],
        ['GET', '/api/v1/vm/status/nope'],
      ])('%s %s: an unknown cloud', async (method, path) => {
        const body = { name: 'x', image: '1', size: '1', node: '1', user: 'u', vm_type: 't' };
        const call =
          method === 'GET' ? t.http.get(path) : method === 'POST' ? t.http.post(path) : t.http.put(path);
        expectEnvelope(
          await call.set('X-Auth-Token', agent).send(method === 'GET' ? undefined : body),
          500,
          "Cloud 'nope' is not valid or the path is wrong",
        );
      });

      it.each([
        ['GET', '/api/v1/no-such-operation'],
        ['GET', '/api/v1/vm/start'],
        ['DELETE', '/api/v1/nodes'],
        ['POST', '/api/v1/nodes/default'],
        ['GET', '/api/v1/nodes/default/extra'],
        ['GET', '/api/v1/vm/action/assign'],
      ])('%s %s: a path that matches no operation, before any token check', async (method, path) => {
        const call =
          method === 'GET' ? t.http.get(path) : method === 'DELETE' ? t.http.delete(path) : t.http.post(path);
        expectEnvelope(await call, 500, /the path is wrong/);
      });
    });
  });

  it('documents every operation of area C in the OpenAPI document, with the error envelope', async () => {
    const document = (await t.http.get('/docs-json')).body as {
      paths: Record<
        string,
        Record<string, { operationId: string; responses: Record<string, { content?: unknown }> }>
      >;
    };
    const expected: [string, string, string][] = [
      ['/api/v1', 'get', 'root-get'],
      ['/api/v1/clouds', 'get', 'clouds-get'],
      ['/api/v1/cloud', 'get', 'cloud-get'],
      ['/api/v1/nodes', 'get', 'nodes-get'],
      ['/api/v1/nodes/{cloud}', 'get', 'nodes-get-by-cloud'],
      ['/api/v1/images', 'get', 'images-get'],
      ['/api/v1/images/{cloud}', 'get', 'images-get-by-cloud'],
      ['/api/v1/sizes', 'get', 'sizes-get'],
      ['/api/v1/sizes/{cloud}', 'get', 'sizes-get-by-cloud'],
      ['/api/v1/flavors', 'get', 'flavors-get'],
      ['/api/v1/flavors/{cloud}', 'get', 'flavors-get-by-cloud'],
      ['/api/v1/vm/start', 'post', 'vm-start'],
      ['/api/v1/vm/start/{cloud}', 'post', 'vm-start-by-cloud'],
      ['/api/v1/vm/stop', 'put', 'vm-stop'],
      ['/api/v1/vm/stop/{cloud}', 'put', 'vm-stop-by-cloud'],
      ['/api/v1/vm/action/assign', 'put', 'vm-assign'],
      ['/api/v1/vm/action/assign/{cloud}', 'put', 'vm-assign-by-cloud'],
      ['/api/v1/vm/action/release', 'put', 'vm-release'],
      ['/api/v1/vm/action/release/{cloud}', 'put', 'vm-release-by-cloud'],
      ['/api/v1/vm/status', 'get', 'vm-status'],
      ['/api/v1/vm/status/{cloud}', 'get', 'vm-status-by-cloud'],
    ];
    for (const [path, method, operationId] of expected) {
      const operation = document.paths[path]?.[method];
      expect(operation?.operationId).toBe(operationId);
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '401', '403']));
      expect(JSON.stringify(operation.responses['401'])).toContain('EnvelopeErrorDto');
    }
    expect(Object.keys(document.paths['/api/v1/vm/action/assign'].put.responses)).toEqual(
      expect.arrayContaining(['400', '404', '409', '500', '502', '503']),
    );
  });
});

describe(`area C: dummy state in the database (${testDatabase()})`, () => {
  it('keeps started nodes, and never reuses ids, across a restart and between copies sharing the database', async () => {
    const clouds = writeCloudsFile(CLOUDS);
    const shared = await sharedDatabase({ CLOUDS_FILE: clouds.path });
    try {
      const first = await shared.start();
      const token = await shared.token(first);
      const nodes = async (copy: typeof first) =>
        (await copy.http.get('/api/v1/nodes/fake_driver').set('X-Auth-Token', token)).body.nodes as {
          id: string;
        }[];
      const start = async (copy: typeof first, name: string) =>
        (
          await copy.http
            .post('/api/v1/vm/start/fake_driver')
            .set('X-Auth-Token', token)
            .send({ name, image: '1', size: '1' })
        ).body.nodes as { id: string };
      const kept = await start(first, 'kept');
      const gone = await start(first, 'gone');
      await first.http
        .put('/api/v1/vm/stop/fake_driver')
        .set('X-Auth-Token', token)
        .send({ node: gone.id })
        .expect(200);
      const before = await nodes(first);
      await first.close();

      const restarted = await shared.start();
      expect(await nodes(restarted)).toEqual(before);
      expect(before.map((n) => n.id)).toEqual(['1', '2', kept.id]);
      const next = await start(restarted, 'after-restart');
      expect(Number(next.id)).toBe(Number(gone.id) + 1);

      // A second copy at the same time: one cloud, one counter.
      const other = await shared.start();
      try {
        const started = await Promise.all([
          start(restarted, 'x1'),
          start(other, 'x2'),
          start(restarted, 'x3'),
          start(other, 'x4'),
        ]);
        expect(new Set(started.map((n) => n.id)).size).toBe(4);
        expect(await nodes(other)).toEqual(await nodes(restarted));
      } finally {
        await other.close();
        await restarted.close();
      }
    } finally {
      await shared.drop();
      clouds.remove();
    }
  });
});

describe('area C: CLOUDS_FILE problems stop the start-up with one clear line', () => {
  it.each([
    [
      'an unknown type',
      'clouds:\n  default: {type: vsphere}\n',
      /^Invalid setting CLOUDS_FILE: cloud 'default' has unknown type 'vsphere' \(known: dummy, openstack, ec2\)$/,
    ],
    [
      'an openstack cloud without a password',
      'clouds:\n  default: {type: dummy}\n  ostack: {type: openstack, auth_url: "http://127.0.0.1:5000/v3", username: u, project_name: p}\n',
      /^Invalid setting CLOUDS_FILE: cloud 'ostack' \(type openstack\) needs 'password'$/,
    ],
  ])('%s', async (_case, yaml, message) => {
    const clouds = writeCloudsFile(yaml);
    const shared = await sharedDatabase({ CLOUDS_FILE: clouds.path });
    try {
      const starting = startApp(shared.env);
      await expect(starting).rejects.toBeInstanceOf(ConfigError);
      await expect(starting).rejects.toThrow(message);
    } finally {
      await shared.drop();
      clouds.remove();
    }
  });
});
