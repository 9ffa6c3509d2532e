import { isIP } from 'node:net';
import { DomainError } from '../../src/common/errors/domain-error.js';
import {
  NodeState,
  UnsupportedOperation,
  type CloudNode,
  type CloudProvider,
} from '../../src/orchestration/providers/cloud-provider.js';
import { sshPublicKey } from '../support/ssh-keys.js';

export interface CloudProviderContractSubject {
  readonly provider: CloudProvider;
  /** An image id and a size id the cloud accepts for a start. */
  readonly image: string;
  readonly size: string;
  /** True when the cloud keeps listing a destroyed node for a while, in state 2 (EC2). */
  readonly listsTerminated?: boolean;
  /** A security group the cloud knows; undefined when the cloud takes any name (dummy). */
  readonly securityGroup?: string;
  /**
   * The fingerprints the cloud reports for an imported RSA and ed25519 key; undefined for a cloud that
   * cannot keep key pairs (it must say so with UnsupportedOperation).
   */
  readonly fingerprints?: { readonly rsa: RegExp; readonly ed25519: RegExp };
  /** True when the cloud can attach public addresses (set up for them); else UnsupportedOperation. */
  readonly addresses?: boolean;
  /** Stops whatever the subject started (a fake server). */
  readonly dispose?: () => Promise<void>;
}

const UNKNOWN_ID = 'no-such-id-4f1d2c';

/**
 * What every CloudProvider must do, whatever the cloud behind it. A provider spec calls this with a
 * function giving a fresh subject for each test (its own fake cloud or store).
 */
export function cloudProviderContract(
  label: string,
  createSubject: () => Promise<CloudProviderContractSubject>,
): void {
  describe(`CloudProvider contract: ${label}`, () => {
    let subject: CloudProviderContractSubject;
    let provider: CloudProvider;

    beforeEach(async () => {
      subject = await createSubject();
      provider = subject.provider;
    });

    afterEach(async () => {
      await subject.dispose?.();
    });

    const start = (name: string): Promise<CloudNode> =>
      provider.startNode({ name, image: subject.image, size: subject.size });

    it('names its cloud and its type', () => {
      expect(provider.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
      expect(provider.type).toMatch(/^[a-z0-9_-]+$/);
    });

    it('lists nodes with normalised fields and unique ids', async () => {
      const nodes = await provider.listNodes();
      for (const node of nodes) {
        expectNodeShape(node);
      }
      expect(new Set(nodes.map((node) => node.id)).size).toBe(nodes.length);
    });

    it('lists images with unique string ids and names', async () => {
      const images = await provider.listImages();
      expect(images.length).toBeGreaterThan(0);
      for (const image of images) {
        expect(image).toEqual({ id: expect.any(String), name: expect.any(String) });
        expect(image.id).not.toBe('');
      }
      expect(new Set(images.map((image) => image.id)).size).toBe(images.length);
      expect(images.map((image) => image.id)).toContain(subject.image);
    });

    it('lists sizes with cpu count, RAM in MiB and disk in GiB, unique ids', async () => {
      const sizes = await provider.listSizes();
      expect(sizes.length).toBeGreaterThan(0);
      for (const size of sizes) {
        expect(size).toEqual({
          id: expect.any(String),
          name: expect.any(String),
          cpu: expect.any(Number),
          ramMiB: expect.any(Number),
          diskGiB: expect.any(Number),
        });
        expect(size.id).not.toBe('');
        for (const amount of [size.cpu, size.ramMiB, size.diskGiB]) {
          expect(Number.isInteger(amount) && amount >= 0).toBe(true);
        }
      }
      expect(new Set(sizes.map((size) => size.id)).size).toBe(sizes.length);
      expect(sizes.map((size) => size.id)).toContain(subject.size);
    });

    it('starts a node with a new id that then appears in the list', async () => {
      const before = (await provider.listNodes()).map((node) => node.id);
      const node = await start('contract-start');
      expectNodeShape(node);
      expect(node.name).toBe('contract-start');
      expect(before).not.toContain(node.id);
      const after = await provider.listNodes();
      expect(after.map((listed) => listed.id)).toContain(node.id);
      expect(after).toHaveLength(before.length + 1);
    });

    it('gives two started nodes two different ids', async () => {
      const first = await start('contract-a');
      const second = await start('contract-b');
      expect(first.id).not.toBe(second.id);
    });

    it('finds a started node by id, by name and by each of its addresses', async () => {
      const node = await start('contract-find');
      await expect(provider.findNode({ id: node.id })).resolves.toMatchObject({
        id: node.id,
        name: 'contract-find',
      });
      await expect(provider.findNode({ hostname: 'contract-find' })).resolves.toMatchObject({ id: node.id });
      const listed = (await provider.listNodes()).find((candidate) => candidate.id === node.id);
      const addresses = [...(listed?.publicIps ?? []), ...(listed?.privateIps ?? [])];
      for (const address of addresses) {
        // Several nodes may share an address (dummy nodes do); the first listed one wins.
        const first = (await provider.listNodes()).find(
          (candidate) => candidate.publicIps.includes(address) || candidate.privateIps.includes(address),
        );
        await expect(provider.findNode({ hostname: address })).resolves.toMatchObject({ id: first?.id });
      }
    });

    it('answers not_found for an unknown id or hostname', async () => {
      await expectKind(provider.findNode({ id: UNKNOWN_ID }), 'not_found');
      await expectKind(provider.findNode({ hostname: 'no-such-host.example' }), 'not_found');
    });

    it('destroys a node: gone, or listed as terminated (state 2); a second destroy is not_found', async () => {
      const node = await start('contract-destroy');
      await expect(provider.destroyNode(node.id)).resolves.toBeUndefined();
      const listed = (await provider.listNodes()).filter((candidate) => candidate.id === node.id);
      expect(listed.map((candidate) => candidate.state)).toEqual(
        subject.listsTerminated ? [NodeState.Terminated] : [],
      );
      if (subject.listsTerminated) {
        await expect(provider.findNode({ id: node.id })).resolves.toMatchObject({
          state: NodeState.Terminated,
        });
      } else {
        await expectKind(provider.findNode({ id: node.id }), 'not_found');
      }
      await expectKind(provider.destroyNode(node.id), 'not_found');
    });

    it('finds a live node by a name a terminated node still listed has too', async () => {
      const old = await start('contract-reused');
      await provider.destroyNode(old.id);
      const fresh = await start('contract-reused');
      await expect(provider.findNode({ hostname: 'contract-reused' })).resolves.toMatchObject({
        id: fresh.id,
      });
    });

    it('refuses an unknown image or size with invalid_input and starts nothing', async () => {
      const before = await provider.listNodes();
      await expectKind(
        provider.startNode({ name: 'x', image: UNKNOWN_ID, size: subject.size }),
        'invalid_input',
      );
      await expectKind(
        provider.startNode({ name: 'x', image: subject.image, size: UNKNOWN_ID }),
        'invalid_input',
      );
      expect(await provider.listNodes()).toHaveLength(before.length);
    });

    it('answers not_found when destroying an unknown id', async () => {
      await expectKind(provider.destroyNode(UNKNOWN_ID), 'not_found');
    });

    it('powers a node off and on and reboots it, each answer the node in its new state', async () => {
      const node = await start('contract-power');
      const off = await provider.power(node.id, 'poweroff');
      expectNodeShape(off);
      expect(off.id).toBe(node.id);
      // A cloud that acts asynchronously may still be on its way (pending: "stopping", "starting").
      expect([NodeState.Stopped, NodeState.Pending]).toContain(off.state);
      const on = await provider.power(node.id, 'poweron');
      expect(on.id).toBe(node.id);
      expect([NodeState.Running, NodeState.Pending]).toContain(on.state);
      const rebooted = await provider.power(node.id, 'reboot');
      expect([NodeState.Running, NodeState.Rebooting]).toContain(rebooted.state);
    });

    it('takes a poweroff of a stopped node as done, and refuses to reboot it', async () => {
      const node = await start('contract-stopped');
      await provider.power(node.id, 'poweroff');
      // The fakes behind this suite complete an action at once, as the dummy cloud does.
      await expect(provider.findNode({ id: node.id })).resolves.toMatchObject({ state: NodeState.Stopped });
      await expect(provider.power(node.id, 'poweroff')).resolves.toMatchObject({ state: NodeState.Stopped });
      await expectKind(provider.power(node.id, 'reboot'), 'conflict');
    });

    it('answers not_found for a power action on an unknown node, and refuses one on a destroyed node', async () => {
      for (const action of ['reboot', 'poweroff', 'poweron'] as const) {
        await expectKind(provider.power(UNKNOWN_ID, action), 'not_found');
      }
      const node = await start('contract-gone');
      await provider.destroyNode(node.id);
      // Gone (dummy, OpenStack) or still listed as terminated (EC2): 4xx either way, never a start.
      await expect(provider.power(node.id, 'poweron')).rejects.toMatchObject({
        kind: expect.stringMatching(/^(not_found|conflict)$/),
      });
    });
  });
}

/**
 * Key pairs, public addresses, user data and tags (API.md 13): what every provider does or, for what its
 * cloud cannot do, refuses with UnsupportedOperation (a 409), never anything else.
 */
export function cloudProviderMachinesContract(
  label: string,
  createSubject: () => Promise<CloudProviderContractSubject>,
): void {
  describe(`CloudProvider contract, machines people can use: ${label}`, () => {
    let subject: CloudProviderContractSubject;
    let provider: CloudProvider;

    beforeEach(async () => {
      subject = await createSubject();
      provider = subject.provider;
    });

    afterEach(async () => {
      await subject.dispose?.();
    });

    const start = (name: string, more: { keyname?: string } = {}): Promise<CloudNode> =>
      provider.startNode({ name, image: subject.image, size: subject.size, ...more });

    it('starts a node with user data, security groups and tags, and shows the tags in extra.tags', async () => {
      const tags = { owner: 'alice', project: 'genomics-42' };
      const node = await provider.startNode({
        name: 'contract-tags',
        image: subject.image,
        size: subject.size,
        userData: '#cloud-config\npackages: [htop]\n# ünïcode\n',
        securityGroups: [subject.securityGroup ?? 'default'],
        tags,
      });
      expect(node.extra.tags).toMatchObject(tags);
      await expect(provider.findNode({ id: node.id })).resolves.toMatchObject({ extra: { tags } });
    });

    it('keeps key pairs: import RSA and ed25519 with the fingerprint the cloud reports, list, delete', async () => {
      const { fingerprints } = subject;
      if (fingerprints === undefined) {
        for (const call of [
          provider.listKeyPairs(),
          provider.importKeyPair('k', sshPublicKey()),
          provider.deleteKeyPair('k'),
        ]) {
          await expect(call).rejects.toBeInstanceOf(UnsupportedOperation);
          await expectKind(call, 'conflict');
        }
        return;
      }
      const rsaKey = sshPublicKey('rsa', 'alice@laptop');
      const edKey = sshPublicKey('ed25519');
      const rsa = await provider.importKeyPair('alice.contract-rsa', rsaKey);
      const ed = await provider.importKeyPair('alice.contract-ed', edKey);
      expect(rsa).toEqual({
        name: 'alice.contract-rsa',
        fingerprint: expect.stringMatching(fingerprints.rsa),
        publicKey: rsaKey.split(' ').slice(0, 2).join(' '),
      });
      expect(ed.fingerprint).toMatch(fingerprints.ed25519);
      const listed = await provider.listKeyPairs();
      expect(listed).toEqual(expect.arrayContaining([rsa, ed]));
      await expectKind(provider.importKeyPair('alice.contract-rsa', sshPublicKey('rsa')), 'conflict');
      const node = await start('contract-keyed', { keyname: 'alice.contract-ed' });
      expect(node.name).toBe('contract-keyed');
      await expect(provider.deleteKeyPair('alice.contract-rsa')).resolves.toBeUndefined();
      expect((await provider.listKeyPairs()).map((key) => key.name)).not.toContain('alice.contract-rsa');
      await expectKind(provider.deleteKeyPair('alice.contract-rsa'), 'not_found');
    });

    it('refuses a malformed public key and a start with a key pair it does not have, making nothing', async () => {
      if (subject.fingerprints === undefined) {
        return;
      }
      const before = await provider.listKeyPairs();
      const ed = sshPublicKey('ed25519').split(' ');
      for (const bad of ['ssh-rsa AAAA', 'ssh-dss AAAAB3NzaC1kc3MAAACBAP', `ssh-rsa ${ed[1]}`, 'not a key']) {
        await expectKind(provider.importKeyPair('alice.bad', bad), 'invalid_input');
      }
      expect(await provider.listKeyPairs()).toEqual(before);
      const nodes = await provider.listNodes();
      await expectKind(start('contract-nokey', { keyname: 'nobody.no-such-key' }), 'invalid_input');
      expect(await provider.listNodes()).toHaveLength(nodes.length);
    });

    it('attaches a public address to a node once, and releases it', async () => {
      const node = await start('contract-address');
      if (!subject.addresses) {
        for (const call of [provider.attachAddress(node.id), provider.releaseAddress(node.id)]) {
          await expect(call).rejects.toBeInstanceOf(UnsupportedOperation);
          await expectKind(call, 'conflict');
        }
        return;
      }
      const attached = await provider.attachAddress(node.id);
      expect(isIP(attached.address)).toBe(4);
      expect(attached.node.id).toBe(node.id);
      expect(attached.node.publicIps).toContain(attached.address);
      await expectKind(provider.attachAddress(node.id), 'conflict');
      const released = await provider.releaseAddress(node.id);
      expect(released.publicIps).not.toContain(attached.address);
      await expectKind(provider.releaseAddress(node.id), 'not_found');
      await expectKind(provider.attachAddress(UNKNOWN_ID), 'not_found');
    });
  });
}

function expectNodeShape(node: CloudNode): void {
  expect(typeof node.id).toBe('string');
  expect(node.id).not.toBe('');
  expect(typeof node.name).toBe('string');
  expect(Object.values(NodeState)).toContain(node.state);
  expect(typeof node.state).toBe('number');
  for (const address of [...node.publicIps, ...node.privateIps]) {
    expect(isIP(address)).not.toBe(0);
  }
  expect(typeof node.extra === 'object' && node.extra !== null && !Array.isArray(node.extra)).toBe(true);
}

async function expectKind(promise: Promise<unknown>, kind: DomainError['kind']): Promise<void> {
  await expect(promise).rejects.toBeInstanceOf(DomainError);
  await expect(promise).rejects.toMatchObject({ kind });
}
