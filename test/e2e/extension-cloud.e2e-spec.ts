import { createHash } from 'node:crypto';
import { ConfigError } from '../../src/config/config-error.js';
import { ScratchCloudModule, SCRATCH_TYPE } from '../extensions/scratch-cloud.js';
import { createTestApp, startApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { sharedDatabase, writeCloudsFile } from '../support/orchestration.js';

// docs/extending.md, "A new cloud provider": a provider class and its registration, in a test
// module beside AppModule; no file of src/ knows the type.
describe(`extension: a cloud provider registered by a test module (${testDatabase()})`, () => {
  let clouds: ReturnType<typeof writeCloudsFile>;
  let t: TestApp;
  let agent: string;

  beforeAll(async () => {
    clouds = writeCloudsFile('clouds:\n  default: {type: dummy}\n  lab: {type: scratch, zone: lab-a}\n');
    t = await createTestApp({ CLOUDS_FILE: clouds.path }, [ScratchCloudModule]);
    agent = await t.userToken(['agent']);
  });

  afterAll(async () => {
    await t.close();
    clouds.remove();
  });

  const get = (path: string) => t.http.get(path).set('X-Auth-Token', agent);
  const send = (method: 'post' | 'put', path: string, body: object) =>
    t.http[method](path).set('X-Auth-Token', agent).send(body);

  it('lists the new cloud with its type beside the built-in ones', async () => {
    expect((await get('/api/v1/clouds')).body).toEqual({
      status: 'ok',
      clouds: [
        { name: 'default', type: 'dummy' },
        { name: 'lab', type: SCRATCH_TYPE },
      ],
    });
  });

  it('serves its images and sizes, starts, finds, assigns, releases and stops its nodes through area C', async () => {
    expect((await get('/api/v1/images/lab')).body).toEqual({
      status: 'ok',
      images: [{ id: 'img-debian', name: 'Debian 12', cloud_type: SCRATCH_TYPE, provider: 'lab' }],
    });
    expect((await get('/api/v1/flavors/lab.json')).body.flavors).toEqual([
      { id: 'tiny', name: 'Tiny', cloud_type: SCRATCH_TYPE, provider: 'lab', cpu: 1, ram: 512, disk: 10 },
    ]);

    const started = await send('post', '/api/v1/vm/start/lab', {
      name: 'box',
      image: 'img-debian',
      size: 'tiny',
    });
    expect(started.status).toBe(200);
    expect(started.body.nodes).toEqual({
      id: 'scratch-1',
      uuid: createHash('sha1').update(`scratch-1:${SCRATCH_TYPE}`).digest('hex'),
      name: 'box',
      cloud_type: SCRATCH_TYPE,
      provider: 'lab',
      // Every node the service starts carries its owner's tag.
      extra: { zone: 'lab-a', image: 'img-debian', size: 'tiny', tags: { owner: expect.any(String) } },
      private_ips: ['10.9.0.1'],
      public_ips: [],
      state: 0,
    });
    expect((await get('/api/v1/nodes/lab')).body.nodes).toEqual([started.body.nodes]);
    // The built-in default cloud does not see it.
    expect((await get('/api/v1/nodes')).body.nodes).not.toContainEqual(started.body.nodes);

    const assigned = await send('put', '/api/v1/vm/action/assign/lab', {
      hostname: '10.9.0.1',
      user: 'alice',
      vm_type: 'jupyter',
    });
    expect(assigned.body).toEqual({
      status: 'ok',
      id: expect.any(Number),
      id_vm: 'scratch-1',
      result: 'VM scratch-1 assigned',
    });
    const released = await send('put', '/api/v1/vm/action/release/lab', { node: 'scratch-1' });
    expect(released.body).toEqual({
      status: 'ok',
      id: assigned.body.id,
      id_vm: 'scratch-1',
      result: 'VM scratch-1 released',
    });

    const stopped = await send('put', '/api/v1/vm/stop/lab', { hostname: 'box' });
    expect(stopped.body).toEqual({ status: 'ok', result: 'Node scratch-1 deleted' });
    expect((await get('/api/v1/nodes/lab')).body.nodes).toEqual([]);
  });

  it('answers a refused start in the area C envelope', async () => {
    const refused = await send('post', '/api/v1/vm/start/lab', { name: 'box', image: 'nope', size: 'tiny' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      status: 'error',
      status_code: 400,
      // The service checks the image and size of every start against the cloud's lists (for the quota).
      message: "Image 'nope' does not exist in cloud 'lab'",
    });
  });

  it('answers 409 in the area C envelope for what its cloud cannot do (public addresses)', async () => {
    const started = await send('post', '/api/v1/vm/start/lab', {
      name: 'box',
      image: 'img-debian',
      size: 'tiny',
    });
    const node = (started.body.nodes as { id: string }).id;
    const refused = await send('put', '/api/v1/vm/address/lab', { node });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      status: 'error',
      status_code: 409,
      message: "Cloud 'lab' (type scratch) cannot attach public addresses",
    });
    await send('put', '/api/v1/vm/stop/lab', { node });
  });

  it('is unknown without the module: CLOUDS_FILE naming it stops the start-up', async () => {
    const shared = await sharedDatabase({ CLOUDS_FILE: clouds.path });
    try {
      const starting = startApp(shared.env);
      await expect(starting).rejects.toBeInstanceOf(ConfigError);
      await expect(starting).rejects.toThrow(
        "Invalid setting CLOUDS_FILE: cloud 'lab' has unknown type 'scratch' (known: dummy, openstack, ec2)",
      );
    } finally {
      await shared.drop();
    }
  });

  it('checks its own settings at start-up', async () => {
    const bad = writeCloudsFile('clouds:\n  default: {type: dummy}\n  lab: {type: scratch}\n');
    const shared = await sharedDatabase({ CLOUDS_FILE: bad.path });
    try {
      await expect(startApp(shared.env, [ScratchCloudModule])).rejects.toThrow(
        "Invalid setting CLOUDS_FILE: cloud 'lab' (type scratch) needs 'zone'",
      );
    } finally {
      await shared.drop();
      bad.remove();
    }
  });
});
