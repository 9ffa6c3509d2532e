import { DomainError } from '../../common/errors/domain-error.js';
import { NodeState, nodeUuid } from './cloud-provider.js';
import {
  DummyProvider,
  DummyProviderFactory,
  dummyNodeAddress,
  type DummyNodeRecord,
} from './dummy.provider.js';
import { InMemoryDummyCloudStore } from './in-memory-dummy-cloud.store.js';
import { sshPublicKey } from '../../../test/support/ssh-keys.js';

function freshProvider(name = 'default'): { provider: DummyProvider; store: InMemoryDummyCloudStore } {
  const store = new InMemoryDummyCloudStore();
  return { provider: new DummyProvider(name, store), store };
}

describe('DummyProvider', () => {
  it('starts with the two nodes of libcloud Dummy', async () => {
    const { provider } = freshProvider();
    await expect(provider.listNodes()).resolves.toEqual([
      {
        id: '1',
        name: 'dummy-1',
        state: NodeState.Running,
        publicIps: ['127.0.0.1'],
        privateIps: [],
        extra: { foo: 'bar' },
      },
      {
        id: '2',
        name: 'dummy-2',
        state: NodeState.Running,
        publicIps: ['127.0.0.1'],
        privateIps: [],
        extra: { foo: 'bar' },
      },
    ]);
  });

  it('lists the three images of libcloud Dummy', async () => {
    await expect(freshProvider().provider.listImages()).resolves.toEqual([
      { id: '1', name: 'Ubuntu 9.10' },
      { id: '2', name: 'Ubuntu 9.04' },
      { id: '3', name: 'Slackware 4' },
    ]);
  });

  it('lists the four sizes of libcloud Dummy (RAM MiB, disk GiB)', async () => {
    await expect(freshProvider().provider.listSizes()).resolves.toEqual([
      { id: '1', name: 'Small', ramMiB: 128, diskGiB: 4, cpu: 1 },
      { id: '2', name: 'Medium', ramMiB: 512, diskGiB: 16, cpu: 1 },
      { id: '3', name: 'Big', ramMiB: 4096, diskGiB: 32, cpu: 2 },
      { id: '4', name: 'XXL Big', ramMiB: 8192, diskGiB: 128, cpu: 4 },
    ]);
  });

  it('starts node "3" on a fresh cloud with 127.0.0.3 and image and size in extra', async () => {
    const { provider } = freshProvider();
    const node = await provider.startNode({ name: 'worker', image: '2', size: '3' });
    expect(node).toEqual({
      id: '3',
      name: 'worker',
      state: NodeState.Running,
      publicIps: ['127.0.0.3'],
      privateIps: [],
      extra: { foo: 'bar', image: '2', size: '3' },
    });
    await expect(provider.listNodes()).resolves.toContainEqual(node);
  });

  it('keeps keyname, metadata, user data, security groups and tags in extra when given', async () => {
    const { provider } = freshProvider();
    const key = await provider.importKeyPair('ops', sshPublicKey('ed25519'));
    const node = await provider.startNode({
      name: 'keyed',
      image: '1',
      size: '1',
      keyname: key.name,
      metadata: { owner: 'ci' },
      userData: '#!/bin/sh\necho hi\n',
      securityGroups: ['web'],
      tags: { owner: 'alice' },
    });
    expect(node.extra).toEqual({
      foo: 'bar',
      image: '1',
      size: '1',
      keyname: 'ops',
      metadata: { owner: 'ci' },
      user_data: '#!/bin/sh\necho hi\n',
      security_groups: ['web'],
      tags: { owner: 'alice' },
    });
    await expect(provider.findNode({ id: node.id })).resolves.toEqual(node);
  });

  it("gives a key pair OpenSSH's SHA256 fingerprint", async () => {
    const { provider } = freshProvider();
    // Made by OpenSSH's ssh-keygen, whose `ssh-keygen -lf` prints this fingerprint.
    const line =
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIBVerHUpq8fxlV8zVrDX3GrdEkpWYEndjJ+/kAzNAau alice@laptop';
    await expect(provider.importKeyPair('k', line)).resolves.toEqual({
      name: 'k',
      fingerprint: 'SHA256:YHoLWkwG6JzBg29nXPy77BjwrcOOrd20XblvXIvOX8E',
      publicKey: line.split(' ').slice(0, 2).join(' '),
    });
  });

  it('never reuses an id: not after a destroy, not after a restart, not after destroying everything', async () => {
    const { provider, store } = freshProvider();
    const third = await provider.startNode({ name: 'a', image: '1', size: '1' });
    await provider.destroyNode(third.id);
    await expect(provider.startNode({ name: 'b', image: '1', size: '1' })).resolves.toMatchObject({
      id: '4',
    });

    const restarted = new DummyProvider('default', store);
    await expect(restarted.startNode({ name: 'c', image: '1', size: '1' })).resolves.toMatchObject({
      id: '5',
      publicIps: ['127.0.0.5'],
    });
    for (const node of await restarted.listNodes()) {
      await restarted.destroyNode(node.id);
    }
    const again = new DummyProvider('default', store);
    // An emptied cloud stays empty: it is not seeded a second time.
    await expect(again.listNodes()).resolves.toEqual([]);
    await expect(again.startNode({ name: 'd', image: '1', size: '1' })).resolves.toMatchObject({ id: '6' });
  });

  it('gives concurrent starts distinct ids', async () => {
    const { provider } = freshProvider();
    const nodes = await Promise.all(
      Array.from({ length: 8 }, (_, i) => provider.startNode({ name: `n${i}`, image: '1', size: '1' })),
    );
    expect(new Set(nodes.map((node) => node.id)).size).toBe(8);
    expect((await provider.listNodes()).map((node) => node.id)).toEqual([
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
      '9',
      '10',
    ]);
  });

  it('keeps each cloud of a store apart', async () => {
    const store = new InMemoryDummyCloudStore();
    const first = new DummyProvider('default', store);
    const second = new DummyProvider('fake_driver', store);
    await first.startNode({ name: 'only-in-default', image: '1', size: '1' });
    await expect(second.listNodes()).resolves.toHaveLength(2);
    await expect(second.startNode({ name: 'x', image: '1', size: '1' })).resolves.toMatchObject({ id: '3' });
  });

  it('refuses an unknown image or size with invalid_input and allocates no id', async () => {
    const { provider } = freshProvider();
    await expect(provider.startNode({ name: 'x', image: '9', size: '1' })).rejects.toMatchObject({
      kind: 'invalid_input',
      message: "Image '9' does not exist in cloud 'default'",
    });
    await expect(provider.startNode({ name: 'x', image: '1', size: '5' })).rejects.toMatchObject({
      kind: 'invalid_input',
      message: "Size '5' does not exist in cloud 'default'",
    });
    await expect(provider.startNode({ name: 'x', image: '1', size: '1' })).resolves.toMatchObject({
      id: '3',
    });
  });

  it('answers not_found when destroying an unknown node', async () => {
    const { provider } = freshProvider();
    await expect(provider.destroyNode('42')).rejects.toBeInstanceOf(DomainError);
    await expect(provider.destroyNode('42')).rejects.toMatchObject({
      kind: 'not_found',
      message: "Node 42 not found in cloud 'default'",
    });
    await expect(provider.listNodes()).resolves.toHaveLength(2);
  });

  it('finds nodes by id, by name and by IP, the lowest id first', async () => {
    const { provider } = freshProvider();
    await provider.startNode({ name: 'third', image: '1', size: '1' });
    await expect(provider.findNode({ id: '2' })).resolves.toMatchObject({ name: 'dummy-2' });
    await expect(provider.findNode({ hostname: 'dummy-2' })).resolves.toMatchObject({ id: '2' });
    await expect(provider.findNode({ hostname: '127.0.0.1' })).resolves.toMatchObject({ id: '1' });
    await expect(provider.findNode({ hostname: '127.0.0.3' })).resolves.toMatchObject({ name: 'third' });
    await expect(provider.findNode({ hostname: 'nope' })).rejects.toMatchObject({ kind: 'not_found' });
    await expect(provider.findNode({ id: '7' })).rejects.toMatchObject({ kind: 'not_found' });
  });

  it('hands out copies: changing a returned node does not change the cloud', async () => {
    const { provider } = freshProvider();
    const node = await provider.startNode({ name: 'm', image: '1', size: '1', metadata: { a: 'b' } });
    (node.extra.metadata as Record<string, string>).a = 'changed';
    const [first] = await provider.listNodes();
    (first.publicIps as string[]).push('10.0.0.1');
    await expect(provider.findNode({ id: node.id })).resolves.toMatchObject({
      extra: { metadata: { a: 'b' } },
    });
    await expect(provider.findNode({ id: '1' })).resolves.toMatchObject({ publicIps: ['127.0.0.1'] });
  });

  it('tries seeding again after the store failed to seed', async () => {
    class FlakyStore extends InMemoryDummyCloudStore {
      failures = 1;
      override ensureCloud(
        cloud: string,
        seed: readonly DummyNodeRecord[],
        firstFreeId: number,
      ): Promise<void> {
        if (this.failures > 0) {
          this.failures -= 1;
          return Promise.reject(new Error('database is locked'));
        }
        return super.ensureCloud(cloud, seed, firstFreeId);
      }
    }
    const provider = new DummyProvider('default', new FlakyStore());
    await expect(provider.listNodes()).rejects.toThrow('database is locked');
    await expect(provider.listNodes()).resolves.toHaveLength(2);
  });

  it('is built by its factory for the cloud named in CLOUDS_FILE', async () => {
    const factory = new DummyProviderFactory(new InMemoryDummyCloudStore());
    expect(factory.type).toBe('dummy');
    const provider = factory.create({ name: 'fake_driver', type: 'dummy', options: {} });
    expect(provider).toMatchObject({ name: 'fake_driver', type: 'dummy' });
    await expect(provider.listNodes()).resolves.toHaveLength(2);
  });
});

describe('dummyNodeAddress', () => {
  it('is 127.0.0.<id> up to 255 and carries on through 127.0.0.0/8 after', () => {
    expect(dummyNodeAddress(3)).toBe('127.0.0.3');
    expect(dummyNodeAddress(255)).toBe('127.0.0.255');
    expect(dummyNodeAddress(256)).toBe('127.0.1.0');
    expect(dummyNodeAddress(70000)).toBe('127.1.17.112');
  });
});

describe('nodeUuid', () => {
  it('is the SHA-1 hex of "<id>:<cloud type>", as libcloud computes it', () => {
    expect(nodeUuid('1', 'dummy')).toBe('2c183c20f71eb5732512d6cfe1f75ebc9d9bb4dd');
    expect(nodeUuid('12064', 'openstack')).toBe('68c81473d8dd725385564bb29eef77e7bc7531d6');
  });
});
