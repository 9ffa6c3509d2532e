import { createHash } from 'node:crypto';
import { DiscoveryService } from '@nestjs/core';
import { DomainError } from '../../common/errors/domain-error.js';
import type { CloudSettings } from '../../config/clouds-file.js';

/** Libcloud's node states, with libcloud's numbers: clients of the original compare the integers. */
export enum NodeState {
  Running = 0,
  Rebooting = 1,
  Terminated = 2,
  Pending = 3,
  Unknown = 4,
  Stopped = 5,
  Suspended = 6,
  Error = 7,
  Paused = 8,
}

/** A node (virtual machine) as every provider reports it; provider-specific leftovers go to `extra`. */
export interface CloudNode {
  readonly id: string;
  readonly name: string;
  readonly state: NodeState;
  readonly publicIps: readonly string[];
  readonly privateIps: readonly string[];
  readonly extra: Readonly<Record<string, unknown>>;
}

export interface CloudImage {
  readonly id: string;
  readonly name: string;
}

export interface CloudSize {
  readonly id: string;
  readonly name: string;
  /** Virtual CPUs. */
  readonly cpu: number;
  /** Memory in MiB. */
  readonly ramMiB: number;
  /** Root disk in GiB. */
  readonly diskGiB: number;
}

export interface StartNodeRequest {
  readonly name: string;
  /** An id from `listImages()`. */
  readonly image: string;
  /** An id from `listSizes()`. */
  readonly size: string;
  /** Name of an SSH key pair known to the cloud (its name at the cloud). */
  readonly keyname?: string;
  readonly metadata?: Readonly<Record<string, string>>;
  /** cloud-init user data: text of at most 16 KiB in UTF-8; each cloud is sent it as it expects (base64). */
  readonly userData?: string;
  /** Security groups by name (EC2 also takes `sg-…` ids). */
  readonly securityGroups?: readonly string[];
  /** Tags, shown again in the node's `extra.tags`: Nova server metadata, EC2 instance tags. */
  readonly tags?: Readonly<Record<string, string>>;
}

/** An SSH key pair as the cloud keeps it: its name there, the fingerprint the cloud reports, the public key. */
export interface CloudKeyPair {
  readonly name: string;
  readonly fingerprint: string;
  readonly publicKey: string;
}

/** A public address just attached to a node, and the node as the cloud then reports it. */
export interface AttachedAddress {
  readonly address: string;
  readonly node: CloudNode;
}

/**
 * What a provider throws for an operation its cloud cannot do (public addresses on a cloud without
 * them, a provider without key pairs): a 409 of the caller's asking, never a 500.
 */
export class UnsupportedOperation extends DomainError {
  constructor(cloud: Pick<CloudProvider, 'name' | 'type'>, what: string) {
    super('conflict', `Cloud '${cloud.name}' (type ${cloud.type}) cannot ${what}`);
    this.name = 'UnsupportedOperation';
  }
}

/** A power action of the API (`vm/reboot`, `vm/poweroff`, `vm/poweron`). */
export type PowerAction = 'reboot' | 'poweroff' | 'poweron';

/** `id` matches the node id; `hostname` matches the node's name or one of its IP addresses. */
export type NodeQuery = { readonly id: string } | { readonly hostname: string };

/**
 * One configured cloud. Every method may also throw DomainError 'upstream_failed' (the cloud is
 * unreachable, answered 5xx, refused our credentials, or a quota is exceeded) or 'upstream_timeout'
 * (no complete answer within the configured upstream timeout); messages name the cloud and never
 * carry a credential.
 */
export interface CloudProvider {
  /** The cloud's name in CLOUDS_FILE (the `provider` of the contract's replies). */
  readonly name: string;
  /** The provider type, its factory's `type` (the `cloud_type` of the contract's replies). */
  readonly type: string;

  /** Every node of the cloud, in the cloud's order. */
  listNodes(): Promise<CloudNode[]>;

  /** Every image a node can be started from. */
  listImages(): Promise<CloudImage[]>;

  /** Every size (flavor) a node can be started with; RAM in MiB, disk in GiB. */
  listSizes(): Promise<CloudSize[]>;

  /**
   * Starts a node and returns it as the cloud reports it right after creation (often still pending).
   * Throws DomainError 'invalid_input' for an image or size id the cloud does not list, or a request
   * the cloud itself rejects as invalid.
   */
  startNode(request: StartNodeRequest): Promise<CloudNode>;

  /** Destroys the node. Throws DomainError 'not_found' when the cloud has no node with that id. */
  destroyNode(id: string): Promise<void>;

  /**
   * Reboots, powers off or powers on the node and returns it as the cloud reports it right after (a
   * cloud that acts asynchronously may still report the state before). Powering off a stopped node or
   * on a running one changes nothing and is no error. Throws DomainError 'not_found' when the cloud has
   * no node with that id, and 'conflict' when the node's state forbids the action (a terminated node,
   * a reboot of a stopped node).
   */
  power(id: string, action: PowerAction): Promise<CloudNode>;

  /**
   * The node with that id, or the first node (in `listNodes()` order) whose name or one of whose
   * IP addresses equals the hostname. Throws DomainError 'not_found' when none matches.
   */
  findNode(query: NodeQuery): Promise<CloudNode>;

  /** Every SSH key pair of the cloud account. Throws UnsupportedOperation when the cloud has none. */
  listKeyPairs(): Promise<CloudKeyPair[]>;

  /**
   * Imports an OpenSSH public key (one line, checked by `parseSshPublicKey`) under `name`, returning it
   * with the fingerprint the cloud reports. Throws DomainError 'conflict' when the name is taken,
   * 'invalid_input' when the cloud refuses the key or the name, UnsupportedOperation as above.
   */
  importKeyPair(name: string, publicKey: string): Promise<CloudKeyPair>;

  /** Deletes the key pair. Throws DomainError 'not_found' when the cloud has none of that name. */
  deleteKeyPair(name: string): Promise<void>;

  /**
   * Allocates a public address and attaches it to the node (a Neutron floating IP, an EC2 Elastic
   * IP). Throws 'not_found' for an unknown node; 'conflict' when the node has a public address of this
   * kind already or the cloud is not set up for it; UnsupportedOperation for a cloud without them. An
   * address allocated for an attach that then fails is freed again before the error is thrown.
   */
  attachAddress(nodeId: string): Promise<AttachedAddress>;

  /**
   * Detaches the node's public addresses of this kind and frees them; returns the node after. Throws
   * 'not_found' for an unknown node or one without such an address, UnsupportedOperation as above.
   */
  releaseAddress(nodeId: string): Promise<CloudNode>;
}

/** Builds the provider of one cloud of CLOUDS_FILE; registered under the cloud `type` it serves. */
export interface CloudProviderFactory {
  /** The `type:` of a cloud in CLOUDS_FILE. */
  readonly type: string;
  /**
   * True for the one factory whose type the cloud named `default` has when CLOUDS_FILE is not set
   * (a cloud that needs no settings).
   */
  readonly servesDefaultCloud?: boolean;
  /** Validates the cloud's settings; throws an Error naming CLOUDS_FILE and the cloud when they are unusable. */
  create(cloud: CloudSettings): CloudProvider;
}

/**
 * Registers a CloudProviderFactory class: with this decorator, and listed in the `providers` of any
 * module of the app, its type is known to CLOUDS_FILE and the area C routes (docs/extending.md).
 */
export const RegisterCloudProvider = DiscoveryService.createDecorator<void>();

/** Nest token of the function listing every registered CloudProviderFactory (see CloudRegistry). */
export const CLOUD_PROVIDER_FACTORIES = Symbol('CLOUD_PROVIDER_FACTORIES');

/** Every registered factory; complete once the app's providers exist. */
export type CloudProviderFactories = () => readonly CloudProviderFactory[];

/** The contract's node `uuid`: SHA-1 hex of `"<id>:<cloud type>"`, the way libcloud derives it. */
export function nodeUuid(id: string, cloudType: string): string {
  return createHash('sha1').update(`${id}:${cloudType}`).digest('hex');
}

/** True when the node's name or one of its addresses equals `hostname`. */
export function matchesHostname(node: CloudNode, hostname: string): boolean {
  return node.name === hostname || node.publicIps.includes(hostname) || node.privateIps.includes(hostname);
}

/**
 * `findNode` over an already listed set of nodes; throws 'not_found' naming what was looked for. By
 * hostname a live node comes before a terminated one still listed (EC2 lists them for an hour), so
 * that a name used again finds the new node.
 */
export function pickNode(nodes: readonly CloudNode[], query: NodeQuery, cloudName: string): CloudNode {
  const named = (node: CloudNode): boolean => 'hostname' in query && matchesHostname(node, query.hostname);
  const found =
    'id' in query
      ? nodes.find((node) => node.id === query.id)
      : (nodes.find((node) => named(node) && node.state !== NodeState.Terminated) ?? nodes.find(named));
  if (!found) {
    throw nodeNotFound(query, cloudName);
  }
  return found;
}

/**
 * `findNode` of a cloud that can read one node by id (`byId`, cheaper than a listing) and list them all:
 * by id one read, by hostname the first listed match.
 */
export async function findNodeBy(
  query: NodeQuery,
  cloudName: string,
  byId: (id: string) => Promise<CloudNode>,
  list: () => Promise<CloudNode[]>,
): Promise<CloudNode> {
  return 'id' in query ? byId(query.id) : pickNode(await list(), query, cloudName);
}

/** The 'not_found' error of a NodeQuery that matched nothing. */
export function nodeNotFound(query: NodeQuery, cloudName: string): DomainError {
  const message =
    'id' in query
      ? `Node ${query.id} not found in cloud '${cloudName}'`
      : `No node with hostname ${query.hostname} in cloud '${cloudName}'`;
  return new DomainError('not_found', message);
}

/** The 'conflict' of a power action on a node whose state forbids it. */
export function powerConflict(
  id: string,
  action: PowerAction,
  state: NodeState,
  cloudName: string,
): DomainError {
  return new DomainError(
    'conflict',
    `Node ${id} of cloud '${cloudName}' is ${NodeState[state].toLowerCase()}: ${action} is not possible`,
  );
}

/**
 * What a power action would do to a node in this state, decided the same way for every cloud:
 * 'skip' when the node is in the target state already, 'refuse' when the state forbids it.
 */
export function powerPlan(action: PowerAction, state: NodeState): 'act' | 'skip' | 'refuse' {
  if (state === NodeState.Terminated) {
    return 'refuse';
  }
  switch (action) {
    case 'poweroff':
      return state === NodeState.Stopped ? 'skip' : 'act';
    case 'poweron':
      return state === NodeState.Running ? 'skip' : 'act';
    case 'reboot':
      return state === NodeState.Stopped ? 'refuse' : 'act';
  }
}

/**
 * A power action as every provider carries it out: decided by `powerPlan` from the node's state
 * before, `act` (the cloud's call, answering the node after) only when there is something to do.
 */
export async function planPower(
  node: CloudNode,
  action: PowerAction,
  cloudName: string,
  act: () => Promise<CloudNode>,
): Promise<CloudNode> {
  const plan = powerPlan(action, node.state);
  if (plan === 'refuse') {
    throw powerConflict(node.id, action, node.state, cloudName);
  }
  return plan === 'skip' ? node : act();
}

/**
 * Throws DomainError 'invalid_input' unless the cloud lists the request's image and size: every
 * provider checks before it starts anything, so that an unknown id is a 400 and nothing is made.
 * Answers the size.
 */
export async function assertStartable(
  cloud: Pick<CloudProvider, 'name' | 'listImages' | 'listSizes'>,
  request: Pick<StartNodeRequest, 'image' | 'size'>,
): Promise<CloudSize> {
  const [images, sizes] = await Promise.all([cloud.listImages(), cloud.listSizes()]);
  if (!images.some((image) => image.id === request.image)) {
    throw new DomainError(
      'invalid_input',
      `Image '${request.image}' does not exist in cloud '${cloud.name}'`,
    );
  }
  const size = sizes.find((candidate) => candidate.id === request.size);
  if (!size) {
    throw new DomainError('invalid_input', `Size '${request.size}' does not exist in cloud '${cloud.name}'`);
  }
  return size;
}

/** The message with every secret replaced by `***`, whatever a cloud echoed back. */
export function redactSecrets(message: string, secrets: readonly string[]): string {
  let safe = message;
  for (const secret of secrets) {
    // A very short secret would garble every message; such a secret is no secret anyway.
    if (secret.length >= 4) {
      safe = safe.split(secret).join('***');
    }
  }
  return safe;
}
