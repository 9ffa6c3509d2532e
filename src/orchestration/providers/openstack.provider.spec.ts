import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FAKE_NETWORK_ID,
  OpenStackFake,
  type OpenStackFakeOptions,
} from '../../../test/fakes/openstack-fake.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { AppConfig, loadConfig } from '../../config/app-config.js';
import { ConfigError } from '../../config/config-error.js';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { CLOUD_PROVIDER_FACTORIES_PROVIDER } from '../cloud.registry.js';
import { CLOUD_PROVIDER_FACTORIES, NodeState, type CloudProviderFactories } from './cloud-provider.js';
import { DUMMY_CLOUD_STORE, DummyProviderFactory } from './dummy.provider.js';
import { InMemoryDummyCloudStore } from './in-memory-dummy-cloud.store.js';
import { classifyAddresses, isPrivateIpv4, novaState } from './openstack-mapping.js';
import { OpenStackProvider, OpenStackProviderFactory } from './openstack.provider.js';
import { parseOpenStackSettings } from './openstack-settings.js';

let dataDir: string;
let config: AppConfig;
const fakes: OpenStackFake[] = [];

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'openstack-provider-'));
  config = loadConfig({ DATA_DIR: dataDir, JWT_SECRET: 'x'.repeat(40), UPSTREAM_TIMEOUT_SECONDS: '1' });
});

afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

interface SetupOptions {
  fake?: OpenStackFakeOptions;
  cloud?: Record<string, unknown>;
  now?: () => number;
}

async function setup(
  options: SetupOptions = {},
): Promise<{ fake: OpenStackFake; provider: OpenStackProvider }> {
  const fake = await OpenStackFake.start(options.fake);
  fakes.push(fake);
  const provider = new OpenStackProvider(
    'ostack',
    parseOpenStackSettings(fake.cloudSettings('ostack', options.cloud)),
    {
      timeoutMs: config.orchestration.upstreamTimeoutMs,
      now: options.now,
    },
  );
  return { fake, provider };
}

/** The error a promise rejects with, for assertions on several of its members. */
async function failure(promise: Promise<unknown>): Promise<DomainError> {
  const error: unknown = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

/** Every token the fake issued, seen on the requests that used them. */
function tokensSeen(fake: OpenStackFake): string[] {
  return fake.requests.flatMap((r) =>
    typeof r.headers['x-auth-token'] === 'string' ? [r.headers['x-auth-token']] : [],
  );
}

describe('novaState', () => {
  it.each([
    ['ACTIVE', NodeState.Running],
    ['REBOOT', NodeState.Rebooting],
    ['HARD_REBOOT', NodeState.Rebooting],
    ['DELETED', NodeState.Terminated],
    ['SOFT_DELETED', NodeState.Terminated],
    ['BUILD', NodeState.Pending],
    ['REBUILD', NodeState.Pending],
    ['PASSWORD', NodeState.Pending],
    ['RESCUE', NodeState.Pending],
    ['RESIZE', NodeState.Pending],
    ['VERIFY_RESIZE', NodeState.Pending],
    ['MIGRATING', NodeState.Pending],
    ['SHUTOFF', NodeState.Stopped],
    ['SUSPENDED', NodeState.Suspended],
    ['ERROR', NodeState.Error],
    ['PAUSED', NodeState.Paused],
    ['SHELVED', NodeState.Unknown],
    ['SHELVED_OFFLOADED', NodeState.Unknown],
    ['UNKNOWN', NodeState.Unknown],
    ['constructor', NodeState.Unknown],
    [undefined, NodeState.Unknown],
  ])('maps %s to %s', (status, state) => {
    expect(novaState(status)).toBe(state);
  });

  it('maps the statuses Nova reports for listed servers', async () => {
    const { fake, provider } = await setup();
    fake.setServerStatus('12064', 'SHUTOFF');
    const nodes = await provider.listNodes();
    expect(nodes.map((node) => [node.id, node.state])).toEqual([
      ['12065', NodeState.Pending],
      ['12064', NodeState.Stopped],
    ]);
  });
});

describe('IP classification', () => {
  it.each([
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '127.0.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.254',
  ])('counts %s as private', (address) => {
    expect(isPrivateIpv4(address)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '50.57.94.35',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '203.0.113.5',
    '::1',
    'not-an-ip',
  ])('does not count %s as a private IPv4', (address) => {
    expect(isPrivateIpv4(address)).toBe(false);
  });

  it('splits the fixture server as libcloud does (IPv6 by network label or floating type)', async () => {
    const { provider } = await setup();
    const node = await provider.findNode({ id: '12065' });
    expect(node.publicIps).toEqual([
      '50.57.94.35',
      '2001:4801:7808:52:16:3eff:fe47:788a',
      '12.16.18.28',
      '1.1.1.1',
      '2.2.2.2',
    ]);
    expect(node.privateIps).toEqual([
      '10.182.64.34',
      'fec0:4801:7808:52:16:3eff:fe60:187d',
      '192.168.3.3',
      '10.3.3.3',
      '172.16.1.1',
    ]);
  });

  it('puts floating IPv6 addresses in public and fixed ones in private', () => {
    expect(
      classifyAddresses({
        tenant: [
          { version: 6, addr: '2001:db8::1', 'OS-EXT-IPS:type': 'floating' },
          { version: 6, addr: '2001:db8::2', 'OS-EXT-IPS:type': 'fixed' },
          { version: 4, addr: '100.64.1.1' },
          { version: 4, addr: '' },
        ],
      }),
    ).toEqual({ publicIps: ['2001:db8::1'], privateIps: ['2001:db8::2', '100.64.1.1'] });
  });
});

describe('OpenStackProvider lists', () => {
  it('reads servers with libcloud-style extra', async () => {
    const { provider } = await setup();
    const node = await provider.findNode({ id: '12064' });
    expect(node).toMatchObject({ id: '12064', name: 'lc-test', state: NodeState.Running });
    expect(node.extra).toMatchObject({
      status: 'ACTIVE',
      imageId: '7',
      flavorId: '2',
      tenantId: 'rs-reach-project',
      hostId: 'a024053a6201e6c6c12660aab3d8fd879e332e663a5e1fdbc02a0307',
      vm_state: 'active',
      power_state: 1,
    });
  });

  it('converts flavors to sizes (RAM MiB, disk GiB)', async () => {
    const { provider } = await setup();
    const sizes = await provider.listSizes();
    expect(sizes).toHaveLength(8);
    expect(sizes[0]).toEqual({ id: '7', name: '15.5GB slice', cpu: 8, ramMiB: 16384, diskGiB: 620 });
  });

  it('follows Glance next links and keeps Glance order', async () => {
    const { fake, provider } = await setup({ fake: { imagePageSize: 2 } });
    const images = await provider.listImages();
    expect(images.map((image) => image.id)).toEqual(fake.imageIds());
    expect(images[0]).toEqual({ id: '13', name: 'Windows 2008 SP2 x86 (B24)' });
    expect(fake.requestsTo('GET', '/image/v2/images')).toHaveLength(7);
  });

  it('follows Nova next links', async () => {
    const { fake, provider } = await setup({ fake: { serverPageSize: 1 } });
    await expect(provider.listNodes()).resolves.toHaveLength(2);
    expect(fake.requestsTo('GET', '/servers/detail').map((r) => r.path.split('?')[1])).toEqual([
      undefined,
      'limit=1&marker=12065',
      'limit=1&marker=12064',
    ]);
  });

  it('uses the endpoints of the configured region and interface', async () => {
    const { fake, provider } = await setup({ cloud: { region: 'RegionTwo', interface: 'internal' } });
    await provider.listNodes();
    await provider.listImages();
    const used = fake.requests
      .filter((r) => r.service !== 'identity')
      .map((r) => `${r.region}/${r.interface}`);
    expect(new Set(used)).toEqual(new Set(['RegionTwo/internal']));
  });

  it('fails naming the cloud when the catalog has no endpoint for the region', async () => {
    const { provider } = await setup({ cloud: { region: 'RegionNine' } });
    const error = await failure(provider.listNodes());
    expect(error.kind).toBe('upstream_failed');
    expect(error.message).toBe(
      "Cloud 'ostack': authentication failed: the token's catalog has no compute endpoint (interface public, region RegionNine)",
    );
  });
});

describe('OpenStackProvider.startNode', () => {
  it('posts networks "auto" with microversion 2.37 when the cloud sets no network', async () => {
    const { fake, provider } = await setup();
    const node = await provider.startNode({ name: 'vm-auto', image: '7', size: '2' });
    const [post] = fake.requestsTo('POST', /\/servers$/);
    expect(post.body).toEqual({
      server: { name: 'vm-auto', imageRef: '7', flavorRef: '2', networks: 'auto' },
    });
    expect(post.headers['x-openstack-nova-api-version']).toBe('2.37');
    expect(post.headers['content-type']).toBe('application/json');
    expect(node).toMatchObject({
      name: 'vm-auto',
      state: NodeState.Running,
      // A new server has its fixed address only; a public one is a floating IP attached later.
      publicIps: [],
      privateIps: ['10.0.0.1'],
      extra: { imageId: '7', flavorId: '2' },
    });
    expect(fake.serverIds()).toContain(node.id);
  });

  it('posts the cloud network, key name and metadata, without a microversion', async () => {
    const { fake, provider } = await setup({ cloud: { network: FAKE_NETWORK_ID } });
    const node = await provider.startNode({
      name: 'vm-net',
      image: '1',
      size: '3',
      keyname: 'mykey',
      metadata: { owner: 'ci', purpose: 'test' },
    });
    const [post] = fake.requestsTo('POST', /\/servers$/);
    expect(post.body).toEqual({
      server: {
        name: 'vm-net',
        imageRef: '1',
        flavorRef: '3',
        key_name: 'mykey',
        metadata: { owner: 'ci', purpose: 'test' },
        networks: [{ uuid: FAKE_NETWORK_ID }],
      },
    });
    expect(post.headers['x-openstack-nova-api-version']).toBeUndefined();
    expect(node.extra).toMatchObject({ key_name: 'mykey', metadata: { owner: 'ci', purpose: 'test' } });
    // The answer of POST carries the admin password; it must not reach the node.
    expect(JSON.stringify(node)).not.toMatch(/adminPass/);
  });

  it('checks image and size against the lists before posting', async () => {
    const { fake, provider } = await setup();
    await expect(provider.startNode({ name: 'x', image: '999', size: '2' })).rejects.toMatchObject({
      kind: 'invalid_input',
      message: "Image '999' does not exist in cloud 'ostack'",
    });
    await expect(provider.startNode({ name: 'x', image: '7', size: '999' })).rejects.toMatchObject({
      kind: 'invalid_input',
      message: "Size '999' does not exist in cloud 'ostack'",
    });
    expect(fake.requestsTo('POST', /\/servers$/)).toHaveLength(0);
  });

  it("turns a 400 from Nova into invalid_input carrying Nova's message", async () => {
    const { provider } = await setup();
    const error = await failure(provider.startNode({ name: 'x', image: '7', size: '2', keyname: 'nokey' }));
    expect(error.kind).toBe('invalid_input');
    expect(error.message).toBe("Cloud 'ostack': Invalid key_name provided.");
  });

  it('turns a quota refusal into upstream_failed with its reason', async () => {
    const { fake, provider } = await setup();
    fake.rejectNextCreate(
      403,
      'Quota exceeded for instances: Requested 1, but already used 10 of 10 instances',
    );
    const error = await failure(provider.startNode({ name: 'x', image: '7', size: '2' }));
    expect(error.kind).toBe('upstream_failed');
    expect(error.message).toBe(
      "Cloud 'ostack': creating a server failed: the cloud answered 403 (Quota exceeded for instances: Requested 1, but already used 10 of 10 instances)",
    );
  });

  it('never repeats the password or a token, even when the cloud echoes them', async () => {
    const { fake, provider } = await setup();
    await provider.listNodes();
    const [token] = tokensSeen(fake);
    fake.rejectNextCreate(400, `user svc password ${fake.password} token ${token} rejected`);
    const error = await failure(provider.startNode({ name: 'x', image: '7', size: '2' }));
    expect(error.message).toBe("Cloud 'ostack': user svc password *** token *** rejected");
  });
});

describe('OpenStackProvider.destroyNode', () => {
  it('deletes the server by id', async () => {
    const { fake, provider } = await setup();
    await provider.destroyNode('12064');
    expect(fake.requestsTo('DELETE', '/servers/').map((r) => r.path)).toEqual([
      `/RegionOne/public/compute/v2.1/c3b1f0e2a4d54a7f9b0e8d7c6b5a4f3e/servers/12064`,
    ]);
    expect(fake.serverIds()).toEqual(['12065']);
  });

  it('answers not_found for ids that would reach another route, without asking Nova', async () => {
    const { fake, provider } = await setup();
    for (const id of ['..', 'detail', '', 'a/b', '12064?x=1']) {
      await expect(provider.destroyNode(id)).rejects.toMatchObject({ kind: 'not_found' });
      await expect(provider.findNode({ id })).rejects.toMatchObject({ kind: 'not_found' });
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('answers not_found for a server Nova does not know', async () => {
    const { provider } = await setup();
    await expect(provider.destroyNode('0b5e6c4c-0000-4000-8000-000000000000')).rejects.toMatchObject({
      kind: 'not_found',
      message: "Node 0b5e6c4c-0000-4000-8000-000000000000 not found in cloud 'ostack'",
    });
  });
});

describe('OpenStackProvider authentication', () => {
  it('asks Keystone v3 for a project-scoped token with the password method', async () => {
    const { fake, provider } = await setup();
    await provider.listNodes();
    const [auth] = fake.requestsTo('POST', '/identity/v3/auth/tokens');
    expect(auth.body).toEqual({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: 'svc', domain: { name: 'Default' }, password: fake.password } },
        },
        scope: { project: { name: 'lab', domain: { name: 'Default' } } },
      },
    });
  });

  it('reuses the token, and concurrent calls share one authentication', async () => {
    const { fake, provider } = await setup();
    await Promise.all([provider.listNodes(), provider.listImages(), provider.listSizes()]);
    await provider.listNodes();
    expect(fake.authCount).toBe(1);
    expect(new Set(tokensSeen(fake)).size).toBe(1);
  });

  it('renews a revoked token once after the 401 and the call succeeds', async () => {
    const { fake, provider } = await setup();
    await provider.listNodes();
    fake.expireTokens();
    await expect(provider.listNodes()).resolves.toHaveLength(2);
    expect(fake.authCount).toBe(2);
    const calls = fake.requestsTo('GET', '/servers/detail');
    expect(calls).toHaveLength(3);
    expect(calls[1].headers['x-auth-token']).toBe(calls[0].headers['x-auth-token']);
    expect(calls[2].headers['x-auth-token']).not.toBe(calls[1].headers['x-auth-token']);
  });

  it('re-authenticates only once when the new token is refused too', async () => {
    const { fake, provider } = await setup();
    await provider.listNodes();
    fake.refuseTokens();
    await expect(provider.listNodes()).rejects.toMatchObject({
      kind: 'upstream_failed',
      message: "Cloud 'ostack': listing servers failed: the cloud refused a freshly issued token",
    });
    expect(fake.authCount).toBe(2);
    expect(fake.requestsTo('GET', '/servers/detail')).toHaveLength(3);
  });

  it('renews the token shortly before expires_at without waiting for a 401', async () => {
    let now = Date.now();
    const { fake, provider } = await setup({ now: () => now, fake: { tokenLifetimeSeconds: 3600 } });
    await provider.listNodes();
    now += 3600_000 - 120_000;
    await provider.listNodes();
    expect(fake.authCount).toBe(1);
    now += 90_000;
    await provider.listNodes();
    expect(fake.authCount).toBe(2);
    expect(fake.requestsTo('GET', '/servers/detail')).toHaveLength(3);
  });

  it('reports refused credentials as upstream_failed without the password', async () => {
    const { fake, provider } = await setup({ cloud: { password: 'Wr0ng-Password-123' } });
    const error = await failure(provider.listNodes());
    expect(error.kind).toBe('upstream_failed');
    expect(error.message).toBe(
      "Cloud 'ostack': authentication failed: Keystone refused the credentials of user 'svc'",
    );
    expect(error.message).not.toContain('Wr0ng-Password-123');
    expect(error.message).not.toContain(fake.password);
  });
});

describe('OpenStackProvider failures', () => {
  it('reports Nova down, failing, hanging and Keystone down without any secret', async () => {
    const { fake, provider } = await setup();
    await provider.listNodes();
    const errors: DomainError[] = [];

    fake.fail('down', 'compute');
    errors.push(await failure(provider.listNodes()));
    expect(errors.at(-1)).toMatchObject({ kind: 'upstream_failed' });
    expect(errors.at(-1)?.message).toMatch(
      /^Cloud 'ostack': listing servers failed: 127\.0\.0\.1:\d+ is unreachable/,
    );

    fake.fail('server_error', 'compute');
    errors.push(await failure(provider.listSizes()));
    expect(errors.at(-1)).toMatchObject({ kind: 'upstream_failed' });
    expect(errors.at(-1)?.message).toMatch(
      /^Cloud 'ostack': listing flavors failed: the cloud answered 500 \(Unexpected API Error/,
    );

    fake.fail('hang', 'compute');
    errors.push(await failure(provider.destroyNode('12064')));
    expect(errors.at(-1)).toMatchObject({ kind: 'upstream_timeout' });
    expect(errors.at(-1)?.message).toMatch(
      /^Cloud 'ostack': deleting server 12064 failed: 127\.0\.0\.1:\d+ did not answer within 1 s$/,
    );

    fake.recover();
    fake.expireTokens();
    fake.fail('server_error', 'identity');
    errors.push(await failure(provider.listImages()));
    expect(errors.at(-1)).toMatchObject({ kind: 'upstream_failed' });
    expect(errors.at(-1)?.message).toMatch(/^Cloud 'ostack': authentication failed: the cloud answered 500/);

    fake.fail('hang', 'identity');
    errors.push(await failure(provider.listImages()));
    expect(errors.at(-1)).toMatchObject({ kind: 'upstream_timeout' });

    const secrets = [fake.password, ...tokensSeen(fake)];
    for (const error of errors) {
      for (const secret of secrets) {
        expect(error.message).not.toContain(secret);
      }
    }
  });

  it('reports a cloud that is not there at all as upstream_failed', async () => {
    const { fake, provider } = await setup();
    await fake.close();
    const error = await failure(provider.listNodes());
    expect(error.kind).toBe('upstream_failed');
    expect(error.message).toMatch(/^Cloud 'ostack': authentication failed: 127\.0\.0\.1:\d+ is unreachable/);
    expect(error.message).not.toContain(fake.password);
  });

  it('still answers the started server when reading it back fails', async () => {
    const { fake, provider } = await setup();
    fake.failAfterNextCreate('server_error');
    const node = await provider.startNode({ name: 'late', image: '7', size: '2' });
    expect(node).toEqual({
      id: expect.any(String),
      name: 'late',
      state: NodeState.Pending,
      publicIps: [],
      privateIps: [],
      extra: {},
    });
    expect(fake.serverIds()).toContain(node.id);
    expect(fake.requestsTo('GET', `/servers/${node.id}`)).toHaveLength(1);
  });
});

describe('parseOpenStackSettings and the factory', () => {
  const cloud = (options: Record<string, unknown>) => ({ name: 'ostack', type: 'openstack', options });
  const complete = {
    auth_url: 'https://keystone.example.org:5000',
    username: 'svc',
    password: 'pw-secret',
    project_name: 'lab',
  };

  it('fills the Keystone defaults and adds /v3 to a bare auth_url', () => {
    expect(parseOpenStackSettings(cloud(complete))).toEqual({
      authUrl: 'https://keystone.example.org:5000/v3',
      username: 'svc',
      password: 'pw-secret',
      userDomainName: 'Default',
      projectName: 'lab',
      projectDomainName: 'Default',
      region: undefined,
      interface: 'public',
      network: undefined,
    });
  });

  it.each(['auth_url', 'username', 'password', 'project_name'])(
    'stops start-up when %s is missing',
    (key) => {
      const options: Record<string, unknown> = { ...complete };
      delete options[key];
      const create = () => new OpenStackProviderFactory(config).create(cloud(options));
      expect(create).toThrow(ConfigError);
      expect(create).toThrow(`Invalid setting CLOUDS_FILE: cloud 'ostack' (type openstack) needs '${key}'`);
    },
  );

  it('refuses an unknown interface and a non-http auth_url without echoing the password', () => {
    expect(() => parseOpenStackSettings(cloud({ ...complete, interface: 'private' }))).toThrow(
      "needs 'interface' to be public, internal or admin",
    );
    expect(() => parseOpenStackSettings(cloud({ ...complete, auth_url: 'ftp://x' }))).toThrow(
      "needs 'auth_url' to be an http(s) URL",
    );
    expect(() => parseOpenStackSettings(cloud({ ...complete, password: { nested: 'pw-secret' } }))).toThrow(
      /^Invalid setting CLOUDS_FILE: cloud 'ostack' \(type openstack\) needs 'password' to be a string$/,
    );
  });

  it('builds providers of type openstack with the upstream timeout of the config', async () => {
    const fake = await OpenStackFake.start();
    fakes.push(fake);
    const factory = new OpenStackProviderFactory(config);
    expect(factory.type).toBe('openstack');
    const provider = factory.create(fake.cloudSettings('lab_cloud'));
    expect(provider).toMatchObject({ name: 'lab_cloud', type: 'openstack' });
    fake.fail('hang', 'compute');
    // The compute API never answers: only the configured timeout can end the call.
    await expect(provider.listNodes()).rejects.toMatchObject({ kind: 'upstream_timeout' });
  });

  it('resolves both factories through Nest, under CLOUD_PROVIDER_FACTORIES', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DiscoveryModule],
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: DUMMY_CLOUD_STORE, useClass: InMemoryDummyCloudStore },
        DummyProviderFactory,
        OpenStackProviderFactory,
        CLOUD_PROVIDER_FACTORIES_PROVIDER,
      ],
    }).compile();
    const resolved = moduleRef.get<CloudProviderFactories>(CLOUD_PROVIDER_FACTORIES)();
    expect(resolved.map((factory) => factory.type)).toEqual(['dummy', 'openstack']);
    await expect(
      resolved[0].create({ name: 'default', type: 'dummy', options: {} }).listNodes(),
    ).resolves.toHaveLength(2);
    await moduleRef.close();
  });
});
