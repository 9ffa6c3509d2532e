import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '../../common/errors/domain-error.js';
import type { CloudSettings } from '../../config/clouds-file.js';
import { opensshFingerprint, parseSshPublicKey } from './ssh-public-key.js';
import {
  type AttachedAddress,
  type CloudKeyPair,
  planPower,
  assertStartable,
  NodeState,
  nodeNotFound,
  pickNode,
  type CloudImage,
  type CloudNode,
  type CloudProvider,
  RegisterCloudProvider,
  type CloudProviderFactory,
  type CloudSize,
  type NodeQuery,
  type PowerAction,
  type StartNodeRequest,
} from './cloud-provider.js';

/** A dummy node as kept by a DummyCloudStore. Dummy nodes have no private IP. */
export interface DummyNodeRecord {
  /** A positive integer in decimal. */
  readonly id: string;
  readonly name: string;
  /** Running or Stopped: a dummy node changes state only by a power action, at once. */
  readonly state: NodeState;
  readonly publicIps: readonly string[];
  readonly extra: Readonly<Record<string, unknown>>;
}

/**
 * Where dummy clouds keep their nodes, per cloud name. The database-backed store makes the state
 * survive restarts and shared by several copies of the service, so every method must be safe when
 * copies race.
 */
export interface DummyCloudStore {
  /**
   * Gives the cloud its fresh state the first time it is ever used: `seed` as its nodes and
   * `firstFreeId` as the next id to allocate. Does nothing when the cloud has a state already, even
   * one whose nodes were all destroyed since. A SQL store inserts the cloud's counter row and the
   * seed rows in one transaction and takes a unique violation on the counter row as "done already".
   */
  ensureCloud(cloud: string, seed: readonly DummyNodeRecord[], firstFreeId: number): Promise<void>;

  /** The cloud's nodes, by ascending numeric id. */
  listNodes(cloud: string): Promise<DummyNodeRecord[]>;

  /**
   * Reserves the cloud's next node id. Never returns an id twice for a cloud, whatever was deleted,
   * restarted or run concurrently (a SQL store increments the counter row and reads it back in one
   * transaction). An id reserved but never inserted is simply skipped.
   */
  allocateId(cloud: string): Promise<number>;

  /** Adds a node whose id came from `allocateId`. */
  insertNode(cloud: string, node: DummyNodeRecord): Promise<void>;

  /** Sets the node's state; true when the node exists. */
  setState(cloud: string, id: string, state: NodeState): Promise<boolean>;

  /** Sets the node's public IPs; true when the node exists. */
  setPublicIps(cloud: string, id: string, publicIps: readonly string[]): Promise<boolean>;

  /** Removes the node; true when it existed (of two racing deletes, one gets false). */
  deleteNode(cloud: string, id: string): Promise<boolean>;

  /** The cloud's key pairs, by name. */
  listKeyPairs(cloud: string): Promise<CloudKeyPair[]>;

  /** Adds a key pair; false when the cloud has one of that name (of two racing inserts, one gets false). */
  insertKeyPair(cloud: string, keyPair: CloudKeyPair): Promise<boolean>;

  /** Removes a key pair; true when it existed. */
  deleteKeyPair(cloud: string, name: string): Promise<boolean>;
}

/** Nest token of the DummyCloudStore implementation. */
export const DUMMY_CLOUD_STORE = Symbol('DUMMY_CLOUD_STORE');

export const DUMMY_TYPE = 'dummy';

// Libcloud's DummyNodeDriver fixtures, which the original system's clients and tests rely on.
const IMAGES: readonly CloudImage[] = [
  { id: '1', name: 'Ubuntu 9.10' },
  { id: '2', name: 'Ubuntu 9.04' },
  { id: '3', name: 'Slackware 4' },
];

const SIZES: readonly CloudSize[] = [
  { id: '1', name: 'Small', ramMiB: 128, diskGiB: 4, cpu: 1 },
  { id: '2', name: 'Medium', ramMiB: 512, diskGiB: 16, cpu: 1 },
  { id: '3', name: 'Big', ramMiB: 4096, diskGiB: 32, cpu: 2 },
  { id: '4', name: 'XXL Big', ramMiB: 8192, diskGiB: 128, cpu: 4 },
];

const SEED: readonly DummyNodeRecord[] = [
  { id: '1', name: 'dummy-1', state: NodeState.Running, publicIps: ['127.0.0.1'], extra: { foo: 'bar' } },
  { id: '2', name: 'dummy-2', state: NodeState.Running, publicIps: ['127.0.0.1'], extra: { foo: 'bar' } },
];

const FIRST_FREE_ID = 3;

/**
 * Libcloud's address for node n is "127.0.0.<n>"; past 255 that is no address at all, so the count
 * carries on through 127.0.0.0/8 instead (identical up to 255).
 */
export function dummyNodeAddress(id: number): string {
  return `127.${(id >>> 16) & 255}.${(id >>> 8) & 255}.${id & 255}`;
}

/**
 * The public address a dummy cloud attaches to node n (vm/address): one of 198.18.0.0/15, the range
 * kept for benchmarks, so that it is never one of the node's own 127.0.0.0/8 addresses.
 */
export function dummyAttachedAddress(id: number): string {
  return `198.${18 + ((id >>> 16) & 1)}.${(id >>> 8) & 255}.${id & 255}`;
}

/** A cloud that behaves like Apache Libcloud's Dummy driver, its nodes kept in a DummyCloudStore. */
export class DummyProvider implements CloudProvider {
  readonly type = DUMMY_TYPE;
  private ready?: Promise<void>;

  constructor(
    readonly name: string,
    private readonly store: DummyCloudStore,
  ) {}

  /** Every node, by ascending id; public IPs in 127.0.0.0/8, no private IP. */
  async listNodes(): Promise<CloudNode[]> {
    await this.ensureCloud();
    const records = await this.store.listNodes(this.name);
    return records.map(toNode);
  }

  /** The three images of libcloud's Dummy driver. */
  listImages(): Promise<CloudImage[]> {
    return Promise.resolve(IMAGES.map((image) => ({ ...image })));
  }

  /** The four sizes of libcloud's Dummy driver; RAM in MiB, disk in GiB. */
  listSizes(): Promise<CloudSize[]> {
    return Promise.resolve(SIZES.map((size) => ({ ...size })));
  }

  /**
   * Adds a running node with the next id (never reused), public IP 127.0.0.<id>, and `extra`
   * `{foo: "bar", image, size}` plus `keyname`, `metadata`, `user_data`, `security_groups` and `tags`
   * when given. Throws DomainError 'invalid_input' for an image or size id not in the lists, or a key
   * pair the cloud does not have.
   */
  async startNode(request: StartNodeRequest): Promise<CloudNode> {
    await assertStartable(this, request);
    await this.ensureCloud();
    if (
      request.keyname !== undefined &&
      !(await this.store.listKeyPairs(this.name)).some((key) => key.name === request.keyname)
    ) {
      throw new DomainError(
        'invalid_input',
        `Key pair '${request.keyname}' does not exist in cloud '${this.name}'`,
      );
    }
    const id = await this.store.allocateId(this.name);
    const extra: Record<string, unknown> = { foo: 'bar', image: request.image, size: request.size };
    const given: [string, unknown][] = [
      ['keyname', request.keyname],
      ['metadata', request.metadata && { ...request.metadata }],
      ['user_data', request.userData],
      ['security_groups', request.securityGroups && [...request.securityGroups]],
      ['tags', request.tags && { ...request.tags }],
    ];
    for (const [key, value] of given) {
      if (value !== undefined) {
        extra[key] = value;
      }
    }
    const record: DummyNodeRecord = {
      id: String(id),
      name: request.name,
      state: NodeState.Running,
      publicIps: [dummyNodeAddress(id)],
      extra,
    };
    await this.store.insertNode(this.name, record);
    return toNode(record);
  }

  /** Removes the node for good. Throws DomainError 'not_found' for an id the cloud does not have. */
  async destroyNode(id: string): Promise<void> {
    await this.ensureCloud();
    if (!(await this.store.deleteNode(this.name, id))) {
      throw new DomainError('not_found', `Node ${id} not found in cloud '${this.name}'`);
    }
  }

  /**
   * Takes effect at once: poweroff leaves the node stopped (5), poweron and reboot running (0).
   * Throws DomainError 'not_found' for an unknown id, 'conflict' for a reboot of a stopped node.
   */
  async power(id: string, action: PowerAction): Promise<CloudNode> {
    const node = await this.findNode({ id });
    return planPower(node, action, this.name, async () => {
      const state = action === 'poweroff' ? NodeState.Stopped : NodeState.Running;
      if (!(await this.store.setState(this.name, id, state))) {
        throw nodeNotFound({ id }, this.name);
      }
      return { ...node, state };
    });
  }

  /** The node by id, or the first by id whose name or IP equals the hostname; else DomainError 'not_found'. */
  async findNode(query: NodeQuery): Promise<CloudNode> {
    return pickNode(await this.listNodes(), query, this.name);
  }

  /** The key pairs kept for this cloud, by name. */
  async listKeyPairs(): Promise<CloudKeyPair[]> {
    await this.ensureCloud();
    return this.store.listKeyPairs(this.name);
  }

  /** Keeps the key with OpenSSH's SHA256 fingerprint. Throws 'conflict' when the name is taken. */
  async importKeyPair(name: string, publicKey: string): Promise<CloudKeyPair> {
    const key = parseSshPublicKey(publicKey);
    await this.ensureCloud();
    const keyPair = { name, fingerprint: opensshFingerprint(key), publicKey: key.line };
    if (!(await this.store.insertKeyPair(this.name, keyPair))) {
      throw new DomainError('conflict', `Key pair '${name}' exists in cloud '${this.name}'`);
    }
    return keyPair;
  }

  async deleteKeyPair(name: string): Promise<void> {
    await this.ensureCloud();
    if (!(await this.store.deleteKeyPair(this.name, name))) {
      throw new DomainError('not_found', `Key pair '${name}' not found in cloud '${this.name}'`);
    }
  }

  /**
   * Adds the node's public address (dummyAttachedAddress) to its public IPs, as a floating IP would be.
   * Throws 'not_found' for an unknown node, 'conflict' when the node has it already.
   */
  async attachAddress(nodeId: string): Promise<AttachedAddress> {
    const node = await this.findNode({ id: nodeId });
    const address = dummyAttachedAddress(Number(node.id));
    if (node.publicIps.includes(address)) {
      throw new DomainError(
        'conflict',
        `Node ${node.id} of cloud '${this.name}' has a public address already`,
      );
    }
    const publicIps = [...node.publicIps, address];
    if (!(await this.store.setPublicIps(this.name, node.id, publicIps))) {
      throw nodeNotFound({ id: nodeId }, this.name);
    }
    return { address, node: { ...node, publicIps } };
  }

  /** Takes the attached address off the node. Throws 'not_found' for an unknown node or one without it. */
  async releaseAddress(nodeId: string): Promise<CloudNode> {
    const node = await this.findNode({ id: nodeId });
    const address = dummyAttachedAddress(Number(node.id));
    if (!node.publicIps.includes(address)) {
      throw new DomainError(
        'not_found',
        `Node ${node.id} of cloud '${this.name}' has no public address attached`,
      );
    }
    const publicIps = node.publicIps.filter((ip) => ip !== address);
    if (!(await this.store.setPublicIps(this.name, node.id, publicIps))) {
      throw nodeNotFound({ id: nodeId }, this.name);
    }
    return { ...node, publicIps };
  }

  private ensureCloud(): Promise<void> {
    // Once per provider instance is enough: the store makes the seeding itself idempotent.
    this.ready ??= this.store.ensureCloud(this.name, SEED, FIRST_FREE_ID).catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }
}

function toNode(record: DummyNodeRecord): CloudNode {
  return {
    id: record.id,
    name: record.name,
    state: record.state,
    publicIps: [...record.publicIps],
    privateIps: [],
    extra: { ...record.extra },
  };
}

@RegisterCloudProvider()
@Injectable()
export class DummyProviderFactory implements CloudProviderFactory {
  readonly type = DUMMY_TYPE;
  readonly servesDefaultCloud = true;

  constructor(@Inject(DUMMY_CLOUD_STORE) private readonly store: DummyCloudStore) {}

  /** A dummy cloud has no settings of its own; any given are ignored. */
  create(cloud: CloudSettings): CloudProvider {
    return new DummyProvider(cloud.name, this.store);
  }
}
