import { DomainError } from '../common/errors/domain-error.js';
import { AppConfig } from '../config/app-config.js';
import type { CloudSettings } from '../config/clouds-file.js';
import { ConfigError } from '../config/config-error.js';
import { CloudRegistry } from './cloud.registry.js';
import type { CloudProvider, CloudProviderFactory } from './providers/cloud-provider.js';
import { DummyProviderFactory } from './providers/dummy.provider.js';
import { InMemoryDummyCloudStore } from './providers/in-memory-dummy-cloud.store.js';
import { OpenStackProviderFactory } from './providers/openstack.provider.js';
import { MetricsService } from '../metrics/metrics.service.js';

function configWith(clouds: CloudSettings[]): AppConfig {
  return Object.assign(new AppConfig(), { orchestration: { clouds, upstreamTimeoutMs: 1000 } });
}

function registryOf(clouds: CloudSettings[], extra: CloudProviderFactory[] = []): CloudRegistry {
  const config = configWith(clouds);
  const factories = [
    new DummyProviderFactory(new InMemoryDummyCloudStore()),
    new OpenStackProviderFactory(config),
    ...extra,
  ];
  const registry = new CloudRegistry(() => factories, config, new MetricsService());
  registry.onModuleInit();
  return registry;
}

const OSTACK: CloudSettings = {
  name: 'ostack',
  type: 'openstack',
  options: {
    auth_url: 'https://keystone.example.org:5000/v3',
    username: 'u',
    password: 'p',
    project_name: 'lab',
  },
};

describe('CloudRegistry', () => {
  it('builds one provider per cloud with the factory of its type, in CLOUDS_FILE order', () => {
    const registry = registryOf([{ name: 'default', type: 'dummy', options: {} }, OSTACK]);
    expect(registry.list().map((cloud) => [cloud.name, cloud.type])).toEqual([
      ['default', 'dummy'],
      ['ostack', 'openstack'],
    ]);
    expect(registry.get('ostack')).toBe(registry.list()[1]);
  });

  it('takes a new provider type from one more factory, nothing else', () => {
    const vsphere: CloudProviderFactory = {
      type: 'vsphere',
      create: (cloud): CloudProvider => ({
        name: cloud.name,
        type: 'vsphere',
        listNodes: () => Promise.resolve([]),
        listImages: () => Promise.resolve([]),
        listSizes: () => Promise.resolve([]),
        startNode: () => Promise.reject(new DomainError('upstream_failed', 'not in this test')),
        destroyNode: () => Promise.reject(new DomainError('not_found', 'no node')),
        power: () => Promise.reject(new DomainError('not_found', 'no node')),
        findNode: () => Promise.reject(new DomainError('not_found', 'no node')),
        listKeyPairs: () => Promise.resolve([]),
        importKeyPair: () => Promise.reject(new DomainError('conflict', 'not in this test')),
        deleteKeyPair: () => Promise.reject(new DomainError('not_found', 'no key pair')),
        attachAddress: () => Promise.reject(new DomainError('conflict', 'not in this test')),
        releaseAddress: () => Promise.reject(new DomainError('not_found', 'no address')),
      }),
    };
    const registry = registryOf([{ name: 'lab', type: 'vsphere', options: {} }], [vsphere]);
    expect(registry.get('lab').type).toBe('vsphere');
  });

  it('stops on a cloud of an unknown type, naming CLOUDS_FILE, the cloud and the known types', () => {
    expect(() => registryOf([{ name: 'lab', type: 'vsphere', options: {} }])).toThrow(
      new ConfigError('CLOUDS_FILE', "cloud 'lab' has unknown type 'vsphere' (known: dummy, openstack)"),
    );
  });

  it('stops on a cloud its factory refuses', () => {
    expect(() => registryOf([{ ...OSTACK, options: { ...OSTACK.options, password: undefined } }])).toThrow(
      "Invalid setting CLOUDS_FILE: cloud 'ostack' (type openstack) needs 'password'",
    );
  });

  it.each(['nope', 'Default', '__proto__', 'a/b', ''])('answers invalid_route for %p', (name) => {
    const registry = registryOf([{ name: 'default', type: 'dummy', options: {} }]);
    expect(() => registry.get(name)).toThrow(`Cloud '${name}' is not valid or the path is wrong`);
    expect(() => registry.get(name)).toThrow(expect.objectContaining({ kind: 'invalid_route' }));
  });
});

describe('CloudRegistry metering', () => {
  it('counts each cloud call by provider, operation and result', async () => {
    const metrics = new MetricsService();
    const config = configWith([{ name: 'default', type: 'dummy', options: {} }]);
    const registry = new CloudRegistry(
      () => [new DummyProviderFactory(new InMemoryDummyCloudStore())],
      config,
      metrics,
    );
    registry.onModuleInit();
    const cloud = registry.get('default');
    await cloud.listNodes();
    await expect(cloud.destroyNode('404')).rejects.toMatchObject({ kind: 'not_found' });
    const text = await metrics.registry.metrics();
    expect(text).toContain('cloud_calls_total{provider="dummy",operation="list_nodes",result="ok"} 1');
    expect(text).toContain('cloud_calls_total{provider="dummy",operation="destroy_node",result="refused"} 1');
  });
});
