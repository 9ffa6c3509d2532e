import { Ec2Fake } from '../fakes/ec2-fake.js';
import { FAKE_EXTERNAL_NETWORK_ID, OpenStackFake } from '../fakes/openstack-fake.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { expectEnvelope, writeCloudsFile } from '../support/orchestration.js';
import { sshPublicKey } from '../support/ssh-keys.js';

interface Node {
  id: string;
  public_ips: string[];
  extra: Record<string, unknown>;
}

/**
 * API.md 13 through the HTTP API on the three providers: start with user data, security groups and tags;
 * key pairs of users; public addresses; quotas; usage. What each cloud received is checked at its fake.
 */
describe(`area C: machines people can use (${testDatabase()})`, () => {
  let nova: OpenStackFake;
  let ec2: Ec2Fake;
  let clouds: ReturnType<typeof writeCloudsFile>;
  let t: TestApp;
  let admin: string;
  let alice: string;
  let bob: string;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    nova = await OpenStackFake.start();
    ec2 = await Ec2Fake.start();
    clouds = writeCloudsFile(`
clouds:
  default: {type: dummy}
${nova.cloudsFileEntry('ostack', { floating_network: FAKE_EXTERNAL_NETWORK_ID })}
${nova.cloudsFileEntry('ostack_nofloat')}
  aws:
    type: ec2
    region: us-east-1
    access_key_id: ${ec2.accessKeyId}
    secret_access_key: \${EC2_SECRET}
    endpoint: ${ec2.url}
    images: [ami-0fedcba9876540003]
`);
    t = await createTestApp({
      CLOUDS_FILE: clouds.path,
      OPENSTACK_PASSWORD: nova.password,
      EC2_SECRET: ec2.secretAccessKey,
      UPSTREAM_TIMEOUT_SECONDS: '2',
    });
    admin = await t.login();
    alice = await t.userToken(['agent'], 'alice');
    bob = await t.userToken(['agent'], 'bob');
    const users = (await t.http.get('/api/v1/users').set('X-Auth-Token', admin)).body as {
      items: { id: number; username: string }[];
    };
    for (const user of users.items) {
      ids[user.username] = user.id;
    }
  });

  afterAll(async () => {
    await t.close();
    await nova.close();
    await ec2.close();
    clouds.remove();
  });

  const as = (token: string) => ({
    get: (path: string) => t.http.get(path).set('X-Auth-Token', token),
    post: (path: string, body: object) => t.http.post(path).set('X-Auth-Token', token).send(body),
    put: (path: string, body: object) => t.http.put(path).set('X-Auth-Token', token).send(body),
    delete: (path: string) => t.http.delete(path).set('X-Auth-Token', token),
  });
  const userData = '#cloud-config\npackages: [htop]\n# ünïcode ✓\n';

  describe('start with user data, security groups and tags', () => {
    it('dummy keeps them in extra; owner is always the caller', async () => {
      const response = await as(alice).post('/api/v1/vm/start', {
        name: 'tagged',
        image: '1',
        size: '1',
        user_data: userData,
        security_groups: ['web'],
        tags: { project: 'genomics', owner: 'someone-else' },
      });
      expect(response.status).toBe(200);
      expect((response.body as { nodes: Node }).nodes.extra).toMatchObject({
        user_data: userData,
        security_groups: ['web'],
        tags: { project: 'genomics', owner: 'alice' },
      });
    });

    it('OpenStack: base64 user data, security groups by name, tags in server metadata', async () => {
      nova.clearRequests();
      const response = await as(alice).post('/api/v1/vm/start/ostack', {
        name: 'tagged-os',
        image: '7',
        size: '2',
        user_data: userData,
        security_groups: ['web'],
        tags: { project: 'genomics' },
        metadata: { purpose: 'test' },
      });
      expect(response.status).toBe(200);
      const [create] = nova.requestsTo('POST', /\/servers$/);
      const server = (create.body as { server: Record<string, unknown> }).server;
      expect(Buffer.from(String(server.user_data), 'base64').toString('utf8')).toBe(userData);
      expect(server.security_groups).toEqual([{ name: 'web' }]);
      expect(server.metadata).toEqual({ purpose: 'test', project: 'genomics', owner: 'alice' });
      expect((response.body as { nodes: Node }).nodes.extra.tags).toEqual({
        purpose: 'test',
        project: 'genomics',
        owner: 'alice',
      });
    });

    it('EC2: base64 UserData, groups by name and sg- id, TagSpecifications', async () => {
      const response = await as(alice).post('/api/v1/vm/start/aws', {
        name: 'tagged-ec2',
        image: 'ami-0fedcba9876540003',
        size: 't3.micro',
        user_data: userData,
        security_groups: ['web', 'sg-0a1b2c3d4e5f60001'],
        tags: { project: 'genomics' },
      });
      expect(response.status).toBe(200);
      const [run] = ec2.actions('RunInstances').slice(-1);
      expect(Buffer.from(run.params.get('UserData') ?? '', 'base64').toString('utf8')).toBe(userData);
      expect(run.params.get('SecurityGroup.1')).toBe('web');
      expect(run.params.get('SecurityGroupId.1')).toBe('sg-0a1b2c3d4e5f60001');
      const instance = ec2.instances.at(-1);
      expect(instance?.userData).toBe(userData);
      expect(instance?.tags).toEqual({ Name: 'tagged-ec2', project: 'genomics', owner: 'alice' });
      expect((response.body as { nodes: Node }).nodes.extra.tags).toMatchObject({ owner: 'alice' });
    });

    it('refuses bad input with a 400 in the envelope and makes nothing', async () => {
      const servers = nova.serverIds().length;
      const instances = ec2.instances.length;
      const start = (cloud: string, more: object) =>
        as(bob).post(`/api/v1/vm/start/${cloud}`, {
          name: 'bad',
          ...(cloud === 'aws'
            ? { image: 'ami-0fedcba9876540003', size: 't3.micro' }
            : cloud === 'ostack'
              ? { image: '7', size: '2' }
              : { image: '1', size: '1' }),
          ...more,
        });
      const nineteen = Object.fromEntries(Array.from({ length: 19 }, (_, i) => [`k${i}`, 'v']));
      const cases: [string, object, RegExp][] = [
        [
          'default',
          { user_data: 'x'.repeat(16 * 1024 + 1) },
          /user_data must be text of at most 16384 bytes/,
        ],
        ['default', { user_data: 'é'.repeat(8 * 1024 + 1) }, /user_data must be text/],
        ['default', { user_data: 42 }, /user_data must be text/],
        ['default', { user_data: 'a\ud800b' }, /user_data must be text/],
        ['default', { tags: { ...nineteen, extra: 'v' } }, /tags must be an object of at most 20/],
        ['default', { tags: { k: 1 } }, /tags must be an object/],
        ['default', { security_groups: 'web' }, /security_groups/],
        ['aws', { tags: { 'aws:reserved': 'x' } }, /Tag keys starting with 'aws:' are reserved/],
        ['aws', { security_groups: ['nope'] }, /The security group 'nope' does not exist/],
        [
          'ostack',
          { tags: { 'bad/key': 'x' } },
          /Additional properties are not allowed \('bad\/key' was unexpected\)/,
        ],
        ['ostack', { security_groups: ['nope'] }, /Unable to find security_group with name or id '"nope"'/],
      ];
      for (const [cloud, more, message] of cases) {
        expectEnvelope(await start(cloud, more), 400, message);
      }
      expect((await start('default', { tags: { ...nineteen, owner: 'x' } })).status).toBe(200);
      expect(nova.serverIds()).toHaveLength(servers);
      expect(ec2.instances).toHaveLength(instances);
      // The refused starts hold nothing: bob's usage shows the one node made.
      const usage = (await as(bob).get('/api/v1/usage')).body as {
        usage: { cloud: string; nodes: unknown[] }[];
      };
      expect(usage.usage.map((row) => [row.cloud, row.nodes.length])).toEqual([['default', 1]]);
    });
  });

  describe('key pairs', () => {
    it('each user sees, uses and deletes only their own; an admin sees all', async () => {
      const key = sshPublicKey('ed25519', 'alice@laptop');
      const made = await as(alice).post('/api/v1/keypairs', { name: 'laptop', public_key: key });
      expect(made.status).toBe(201);
      expect(made.body).toEqual({
        status: 'ok',
        keypair: {
          name: 'laptop',
          fingerprint: expect.stringMatching(/^SHA256:[A-Za-z0-9+/]{43}$/),
          public_key: key.split(' ').slice(0, 2).join(' '),
          owner: 'alice',
        },
      });
      expect(
        (await as(bob).post('/api/v1/keypairs/default', { name: 'laptop', public_key: sshPublicKey('rsa') }))
          .status,
      ).toBe(201);
      expectEnvelope(
        await as(alice).post('/api/v1/keypairs', { name: 'laptop', public_key: sshPublicKey() }),
        409,
        "You have a key pair 'laptop' in cloud 'default' already",
      );
      const names = async (token: string): Promise<string[]> =>
        (
          (await as(token).get('/api/v1/keypairs')).body as { keypairs: { name: string; owner: string }[] }
        ).keypairs.map((k) => `${k.owner}/${k.name}`);
      expect(await names(alice)).toEqual(['alice/laptop']);
      expect(await names(bob)).toEqual(['bob/laptop']);
      expect(await names(admin)).toEqual(['alice/laptop', 'bob/laptop']);

      const started = await as(alice).post('/api/v1/vm/start', {
        name: 'keyed',
        image: '1',
        size: '1',
        keyname: 'laptop',
      });
      expect((started.body as { nodes: Node }).nodes.extra.keyname).toBe('alice.laptop');
      expectEnvelope(
        await as(bob).post('/api/v1/vm/start', { name: 'x', image: '1', size: '1', keyname: 'alice.laptop' }),
        400,
        "keyname 'alice.laptop' is not a key pair of yours in cloud 'default'",
      );
      // An admin uses any key pair by its whole name.
      expect(
        (
          await as(admin).post('/api/v1/vm/start', {
            name: 'k',
            image: '1',
            size: '1',
            keyname: 'bob.laptop',
          })
        ).status,
      ).toBe(200);

      expectEnvelope(
        await as(bob).delete('/api/v1/keypairs/nothere'),
        404,
        "No key pair 'nothere' of yours in cloud 'default'",
      );
      expect((await as(alice).delete('/api/v1/keypairs/laptop/default')).body).toEqual({
        status: 'ok',
        result: "Key pair 'laptop' deleted",
      });
      expect(await names(admin)).toEqual(['bob/laptop']);
    });

    it('refuses malformed keys and names with a 400', async () => {
      const ed = sshPublicKey().split(' ');
      for (const [body, message] of [
        [{ name: 'k', public_key: 'ssh-dss AAAAB3NzaC1kc3MAAACBAP' }, /is not ssh-rsa or ssh-ed25519/],
        [{ name: 'k', public_key: `ssh-rsa ${ed[1]}` }, /not of the type the line names/],
        [{ name: 'a.b', public_key: ed.join(' ') }, /name must be 1 to 64 letters/],
        [{ name: 'k' }, /public_key/],
      ] as const) {
        expectEnvelope(await as(alice).post('/api/v1/keypairs', body), 400, message);
      }
    });

    it('OpenStack keeps them in Nova and EC2 in the account, named <owner>.<name>, with their fingerprints', async () => {
      const rsa = sshPublicKey('rsa');
      const os = await as(alice).post('/api/v1/keypairs/ostack', { name: 'work', public_key: rsa });
      expect(os.status).toBe(201);
      expect(nova.keypairs.get('alice.work')?.fingerprint).toBe(
        (os.body as { keypair: { fingerprint: string } }).keypair.fingerprint,
      );
      const started = await as(alice).post('/api/v1/vm/start/ostack', {
        name: 'keyed-os',
        image: '7',
        size: '2',
        keyname: 'work',
      });
      expect(started.status).toBe(200);
      expect(nova.requestsTo('POST', /\/servers$/).at(-1)?.body).toMatchObject({
        server: { key_name: 'alice.work' },
      });

      const aws = await as(alice).post('/api/v1/keypairs/aws', {
        name: 'work',
        public_key: sshPublicKey('ed25519'),
      });
      expect(aws.status).toBe(201);
      expect(ec2.keyPairs.get('alice.work')?.fingerprint).toBe(
        (aws.body as { keypair: { fingerprint: string } }).keypair.fingerprint,
      );
      expect(
        (
          await as(alice).post('/api/v1/vm/start/aws', {
            name: 'k',
            image: 'ami-0fedcba9876540003',
            size: 't3.micro',
            keyname: 'work',
          })
        ).status,
      ).toBe(200);
      expect(ec2.instances.at(-1)?.keyName).toBe('alice.work');
      expect((await as(alice).delete('/api/v1/keypairs/work/aws')).status).toBe(200);
      expect(ec2.keyPairs.has('alice.work')).toBe(false);
      expectEnvelope(await as(alice).delete('/api/v1/keypairs/work/aws'), 404);
    });
  });

  describe('public addresses', () => {
    it('OpenStack: a floating IP attached once, freed by release and by stop', async () => {
      const node = (
        (await as(alice).post('/api/v1/vm/start/ostack', { name: 'addr', image: '7', size: '2' })).body as {
          nodes: Node;
        }
      ).nodes;
      expect(node.public_ips).toEqual([]);
      const attached = await as(alice).put('/api/v1/vm/address/ostack', { node: node.id });
      expect(attached.status).toBe(200);
      const address = (attached.body as { nodes: Node }).nodes.public_ips[0];
      expect(nova.floatingIps.map((ip) => ip.floating_ip_address)).toEqual([address]);
      expectEnvelope(
        await as(alice).put('/api/v1/vm/address/ostack', { hostname: 'addr' }),
        409,
        /has a public address already/,
      );
      const released = await as(alice).put('/api/v1/vm/address/release/ostack', { node: node.id });
      expect((released.body as { nodes: Node }).nodes.public_ips).toEqual([]);
      expect(nova.floatingIps).toEqual([]);
      expectEnvelope(
        await as(alice).put('/api/v1/vm/address/release/ostack', { node: node.id }),
        404,
        /has no floating IP/,
      );

      expect((await as(alice).put('/api/v1/vm/address/ostack', { node: node.id })).status).toBe(200);
      expect(nova.floatingIps).toHaveLength(1);
      expect((await as(alice).put('/api/v1/vm/stop/ostack', { node: node.id })).status).toBe(200);
      expect(nova.floatingIps).toEqual([]);
    });

    it('OpenStack: a failed attach frees the address it allocated; no floating network is a 409', async () => {
      const node = (
        (await as(alice).post('/api/v1/vm/start/ostack', { name: 'addr2', image: '7', size: '2' })).body as {
          nodes: Node;
        }
      ).nodes;
      nova.clearRequests();
      nova.failNextAssociate(500, 'Neutron broke');
      expectEnvelope(
        await as(alice).put('/api/v1/vm/address/ostack', { node: node.id }),
        502,
        /Neutron broke/,
      );
      expect(nova.floatingIps).toEqual([]);
      expect(nova.requestsTo('DELETE', '/v2.0/floatingips/')).toHaveLength(1);
      // The node is free to get one afterwards: nothing of the failed attach stayed behind.
      expect((await as(alice).put('/api/v1/vm/address/ostack', { node: node.id })).status).toBe(200);
      expectEnvelope(
        await as(alice).put('/api/v1/vm/address/ostack_nofloat', { node: node.id }),
        409,
        "Cloud 'ostack_nofloat' has no floating_network configured: it cannot attach public addresses",
      );
    });

    it('dummy: an address of 198.18.0.0/15 attached once and released', async () => {
      const node = (
        (await as(alice).post('/api/v1/vm/start', { name: 'addr3', image: '1', size: '1' })).body as {
          nodes: Node;
        }
      ).nodes;
      const attached = await as(alice).put('/api/v1/vm/address', { node: node.id });
      expect(attached.status).toBe(200);
      const address = `198.18.0.${Number(node.id)}`;
      expect((attached.body as { nodes: Node }).nodes.public_ips).toEqual([`127.0.0.${node.id}`, address]);
      expectEnvelope(
        await as(alice).put('/api/v1/vm/address', { hostname: address }),
        409,
        `Node ${node.id} of cloud 'default' has a public address already`,
      );
      const released = await as(alice).put('/api/v1/vm/address/release', { node: node.id });
      expect(released.status).toBe(200);
      expect((released.body as { nodes: Node }).nodes.public_ips).toEqual([`127.0.0.${node.id}`]);
      expect((await as(alice).put('/api/v1/vm/address/release', { node: node.id })).status).toBe(404);
    });

    it('EC2: an Elastic IP allocated and associated; a failed association releases it; stop releases it', async () => {
      const node = (
        (
          await as(alice).post('/api/v1/vm/start/aws', {
            name: 'eip',
            image: 'ami-0fedcba9876540003',
            size: 't3.micro',
          })
        ).body as { nodes: Node }
      ).nodes;
      ec2.failNextAssociate = { code: 'InvalidInstanceID', message: 'The instance is not in a valid state' };
      const failed = await as(alice).put('/api/v1/vm/address/aws', { node: node.id });
      expect(failed.status).toBeGreaterThanOrEqual(400);
      expect(ec2.addresses).toEqual([]);
      const attached = await as(alice).put('/api/v1/vm/address/aws', { node: node.id });
      expect(attached.status).toBe(200);
      expect((attached.body as { nodes: Node }).nodes.public_ips).toEqual([ec2.addresses[0].publicIp]);
      expectEnvelope(await as(alice).put('/api/v1/vm/address/aws', { node: node.id }), 409);
      expect((await as(alice).put('/api/v1/vm/stop/aws', { node: node.id })).status).toBe(200);
      expect(ec2.addresses).toEqual([]);
      expect(ec2.actions('DisassociateAddress')).toHaveLength(1);
    });
  });

  describe('quotas and usage', () => {
    it('an admin sets a quota in area A’s shape; a start past it is a 409 naming the limit', async () => {
      const quota = as(admin).put(`/api/v1/users/${ids.bob}/quota`, { max_nodes: 2, max_vcpus: null });
      expect((await quota).body).toEqual({
        user_id: ids.bob,
        max_nodes: 2,
        max_vcpus: null,
        max_ram_mib: null,
        own: true,
      });
      expect((await as(bob).put(`/api/v1/users/${ids.bob}/quota`, { max_nodes: 9 })).body).toEqual({
        error: { code: 403, title: 'Forbidden', message: expect.any(String) },
      });
      expect((await as(admin).put('/api/v1/users/99999/quota', { max_nodes: 1 })).body).toMatchObject({
        error: { code: 404 },
      });
      expect((await as(admin).put(`/api/v1/users/${ids.bob}/quota`, { max_nodes: -1 })).body).toMatchObject({
        error: { code: 400 },
      });
      expect((await as(admin).put(`/api/v1/users/${ids.bob}/quota`, { max_nodes: 'x' })).body).toMatchObject({
        error: { code: 400 },
      });

      // bob holds one dummy node already (the 19-tag start above).
      const one = await as(bob).post('/api/v1/vm/start', { name: 'q1', image: '1', size: '1' });
      expect(one.status).toBe(200);
      expectEnvelope(
        await as(bob).post('/api/v1/vm/start', { name: 'q2', image: '1', size: '1' }),
        409,
        'quota max_nodes 2 reached: 2 in use',
      );
      expectEnvelope(
        await as(bob).post('/api/v1/vm/start/ostack', { name: 'q2', image: '7', size: '2', async: true }),
        409,
        'quota max_nodes 2 reached: 2 in use',
      );
      expect(
        (await as(bob).put('/api/v1/vm/stop', { node: (one.body as { nodes: Node }).nodes.id })).status,
      ).toBe(200);
      expect((await as(bob).post('/api/v1/vm/start', { name: 'q3', image: '1', size: '1' })).status).toBe(
        200,
      );
      expect((await as(admin).delete(`/api/v1/users/${ids.bob}/quota`)).body).toMatchObject({
        own: false,
        max_nodes: null,
      });
      expect((await as(bob).post('/api/v1/vm/start', { name: 'q4', image: '1', size: '1' })).status).toBe(
        200,
      );
    });

    it('usage: node-hours and vCPU-hours per user and cloud, the current nodes, the quota; own rows only', async () => {
      const mine = (await as(bob).get('/api/v1/usage')).body as {
        usage: {
          user: string;
          cloud: string;
          node_hours: number;
          vcpu_hours: number;
          nodes: { id: string }[];
          quota: object;
        }[];
      };
      expect(mine.usage.map((row) => row.user)).toEqual(['bob']);
      expect(mine.usage[0]).toMatchObject({ cloud: 'default', quota: { max_nodes: null, own: false } });
      expect(mine.usage[0].nodes).toHaveLength(3);
      expect(mine.usage[0].node_hours).toBeGreaterThanOrEqual(0);
      const all = (await as(admin).get('/api/v1/usage')).body as { usage: { user: string; cloud: string }[] };
      expect(all.usage.map((row) => `${row.user}/${row.cloud}`)).toEqual(
        expect.arrayContaining([
          'alice/default',
          'alice/ostack',
          'alice/aws',
          'bob/default',
          'admin/default',
        ]),
      );
      const empty = (await as(bob).get('/api/v1/usage?from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z'))
        .body as { usage: unknown[] };
      expect(empty.usage).toEqual([]);
      expectEnvelope(await as(bob).get('/api/v1/usage?from=yesterday'), 400, /from must be an ISO 8601/);
      expectEnvelope(
        await as(bob).get('/api/v1/usage?from=2001-01-02T00:00:00Z&to=2001-01-01T00:00:00Z'),
        400,
        'from must be before to',
      );
    });
  });
});

describe(`area C: default quotas from the settings (${testDatabase()})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ QUOTA_MAX_VCPUS: '2' });
  });

  afterAll(async () => {
    await t.close();
  });

  it('holds every user to QUOTA_MAX_VCPUS unless they have a quota of their own', async () => {
    const agent = await t.userToken(['agent']);
    const start = (size: string) =>
      t.http.post('/api/v1/vm/start').set('X-Auth-Token', agent).send({ name: 'v', image: '1', size });
    expect((await start('3')).status).toBe(200);
    expectEnvelope(await start('1'), 409, 'quota max_vcpus 2 reached: 2 in use, this node needs 1');
  });
});
