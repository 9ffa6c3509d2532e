import { Inject, Injectable, Logger } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error.js';
import { ASSIGNMENT_FACILITY, type AssignmentFacility } from './assignment/assignment-facility.js';
import { Clock } from '../common/clock.js';
import { AddressesRepository } from './addresses.repository.js';
import { JobsRepository } from './jobs.repository.js';
import { CloudRegistry } from './cloud.registry.js';
import type { OnExpiry } from './entities/vm-lease.entity.js';
import { leaseEndsAt, type LeaseEnd } from './lease-rules.js';
import {
  LeasesRepository,
  type ClaimedLease,
  type Lease,
  type LeasedAssignment,
} from './leases.repository.js';
import { refOf, type CloudRef } from './dto/replies.dto.js';
import type {
  CloudImage,
  CloudNode,
  CloudProvider,
  CloudSize,
  NodeQuery,
  PowerAction,
} from './providers/cloud-provider.js';

/** A list of one cloud, with the cloud it came from (its replies name it). */
export interface CloudListing<T> {
  readonly cloud: CloudRef;
  readonly items: T[];
}

/** What assign and release answer: the contract's `id`, `id_vm` and `result`. */
export interface AssignmentOutcome {
  readonly id: number;
  readonly nodeId: string;
  readonly result: string;
}

export interface AssignCommand {
  readonly node: NodeQuery;
  readonly user: string;
  readonly vmType: string;
  readonly emulate: boolean;
  /** A lease: the assignment ends by itself (ttl or time), with `onExpiry` (release by default). */
  readonly lease?: LeaseEnd;
  readonly onExpiry?: OnExpiry;
}

export interface ExtendCommand {
  readonly node: NodeQuery;
  readonly end: LeaseEnd;
}

export interface ReleaseCommand {
  readonly node: NodeQuery;
  readonly emulate: boolean;
}

/** The rules of area C, over the configured clouds and the assignment facility. */
@Injectable()
export class OrchestrationService {
  private readonly logger = new Logger(OrchestrationService.name);

  constructor(
    private readonly registry: CloudRegistry,
    @Inject(ASSIGNMENT_FACILITY) private readonly assignments: AssignmentFacility,
    private readonly leases: LeasesRepository,
    private readonly jobs: JobsRepository,
    private readonly addresses: AddressesRepository,
    private readonly clock: Clock,
  ) {}

  /** Every configured cloud, names and types only (never settings, which hold credentials). */
  clouds(): CloudRef[] {
    return this.registry.list().map(refOf);
  }

  async nodes(cloudName: string): Promise<CloudListing<CloudNode>> {
    const cloud = this.registry.get(cloudName);
    return { cloud: refOf(cloud), items: await cloud.listNodes() };
  }

  async images(cloudName: string): Promise<CloudListing<CloudImage>> {
    const cloud = this.registry.get(cloudName);
    return { cloud: refOf(cloud), items: await cloud.listImages() };
  }

  async sizes(cloudName: string): Promise<CloudListing<CloudSize>> {
    const cloud = this.registry.get(cloudName);
    return { cloud: refOf(cloud), items: await cloud.listSizes() };
  }

  /**
   * Destroys the node (found by id or hostname) and returns its id. The public address the service
   * attached to it is freed first (a cloud keeps an address allocated after its node is gone). Its active
   * assignment, if any, ends with it: a destroyed node cannot stay assigned, and the facility must not keep
   * listing it. From then on it no longer counts against its owner's quota, also when the cloud had lost
   * it already (404).
   */
  async stop(cloudName: string, query: NodeQuery): Promise<string> {
    const cloud = this.registry.get(cloudName);
    const id = 'id' in query ? query.id : (await cloud.findNode(query)).id;
    await this.destroy(cloud, id);
    await this.endAssignment(cloud, id);
    return id;
  }

  /** Frees the address the service attached, destroys the node, and ends its record. */
  private async destroy(cloud: CloudProvider, id: string): Promise<void> {
    if (await this.addresses.find(cloud.name, id)) {
      await cloud.releaseAddress(id).catch((error: unknown) => {
        // The cloud no longer has it (or the node): there is nothing left to free.
        if (!(error instanceof DomainError && error.kind === 'not_found')) {
          throw error;
        }
      });
      await this.addresses.remove(cloud.name, id);
    }
    try {
      await cloud.destroyNode(id);
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'not_found') {
        await this.jobs.markStopped(cloud.name, id, new Date(this.clock.nowMs()));
      }
      throw error;
    }
    await this.jobs.markStopped(cloud.name, id, new Date(this.clock.nowMs()));
  }

  /**
   * Allocates a public address and attaches it to the node; the service remembers it, so that stopping
   * the node frees it. 'conflict' when the node has one already (attached by the service or not), the
   * cloud is not set up for addresses or cannot have them; nothing is left allocated when it fails.
   */
  async attachAddress(cloudName: string, query: NodeQuery): Promise<{ cloud: CloudRef; node: CloudNode }> {
    const cloud = this.registry.get(cloudName);
    const node = await cloud.findNode(query);
    if (!(await this.addresses.reserve(cloud.name, node.id, new Date(this.clock.nowMs())))) {
      throw new DomainError(
        'conflict',
        `Node ${node.id} of cloud '${cloud.name}' has a public address already`,
      );
    }
    try {
      const attached = await cloud.attachAddress(node.id);
      await this.addresses.attached(cloud.name, node.id, attached.address);
      return { cloud: refOf(cloud), node: attached.node };
    } catch (error) {
      await this.addresses.remove(cloud.name, node.id);
      throw error;
    }
  }

  /** Detaches the node's public address and frees it; 'not_found' when it has none. */
  async releaseAddress(cloudName: string, query: NodeQuery): Promise<{ cloud: CloudRef; node: CloudNode }> {
    const cloud = this.registry.get(cloudName);
    const found = await cloud.findNode(query);
    const node = await cloud.releaseAddress(found.id);
    await this.addresses.remove(cloud.name, found.id);
    return { cloud: refOf(cloud), node };
  }

  /** Ends the active assignment and the lease of a node that is gone; failures are logged, not raised. */
  private async endAssignment(cloud: CloudProvider, id: string): Promise<void> {
    await this.leases.remove(cloud.name, id).catch((error: unknown) => {
      this.logger.warn(
        `the lease of node ${id} of cloud '${cloud.name}' could not be removed: ${String(error)}`,
      );
    });
    await this.assignments.release(cloud.name, id).catch((error: unknown) => {
      // The node is gone either way; a facility that fails here must not turn the stop into an error.
      if (!(error instanceof DomainError && error.kind === 'not_found')) {
        this.logger.warn(
          `node ${id} of cloud '${cloud.name}' was stopped, but ending its assignment failed: ${String(error)}`,
        );
      }
    });
  }

  /**
   * Reboots, powers off or powers on the node (by id or hostname) and returns it as the cloud then
   * reports it. 'not_found' for an unknown node, 'conflict' when its state forbids the action. The
   * node's assignment, if any, is not touched.
   */
  async power(
    cloudName: string,
    query: NodeQuery,
    action: PowerAction,
  ): Promise<{ cloud: CloudRef; node: CloudNode }> {
    const cloud = this.registry.get(cloudName);
    const id = 'id' in query ? query.id : (await cloud.findNode(query)).id;
    return { cloud: refOf(cloud), node: await cloud.power(id, action) };
  }

  /** Assigns an existing node; 'not_found' for an unknown node, 'conflict' when it is assigned already. */
  async assign(cloudName: string, command: AssignCommand): Promise<AssignmentOutcome> {
    const cloud = this.registry.get(cloudName);
    if (command.emulate) {
      return emulated(command.node);
    }
    if (command.onExpiry !== undefined && command.lease === undefined) {
      throw new DomainError('invalid_input', 'on_expiry needs ttl_seconds or expires_at', [
        { field: 'on_expiry', message: 'on_expiry needs ttl_seconds or expires_at' },
      ]);
    }
    // Checked before anything happens: a lease refused after the assignment would leave it half-made.
    const expiresAt = command.lease && leaseEndsAt(this.clock.nowMs(), command.lease);
    const node = await cloud.findNode(command.node);
    const assignment = await this.assignments.assign({
      cloud: cloud.name,
      nodeId: node.id,
      hostname: node.name,
      user: command.user,
      vmType: command.vmType,
    });
    try {
      if (expiresAt) {
        await this.leases.set(cloud.name, node.id, expiresAt, command.onExpiry ?? 'release');
      } else {
        // A lease left by an assignment that ended outside this service (an external facility).
        await this.leases.remove(cloud.name, node.id);
      }
    } catch (error) {
      // No assignment without the lease asked for: undo it, then report the failure.
      await this.assignments.release(cloud.name, node.id).catch((undo: unknown) => {
        this.logger.error(
          `assignment ${assignment.id} of node ${node.id} could not be undone: ${String(undo)}`,
        );
      });
      throw error;
    }
    return { id: assignment.id, nodeId: node.id, result: `VM ${node.id} assigned` };
  }

  /**
   * Moves the end of the lease of an assigned node (one ending in a release is made when it had none).
   * 'not_found' for an unknown or unassigned node; 'conflict' while its expiry is being carried out.
   */
  async extend(cloudName: string, command: ExtendCommand): Promise<AssignmentOutcome & { lease: Lease }> {
    const cloud = this.registry.get(cloudName);
    const now = this.clock.nowMs();
    const expiresAt = leaseEndsAt(now, command.end);
    const node = await cloud.findNode(command.node);
    const active = (await this.assignments.listActive(cloud.name)).find((a) => a.nodeId === node.id);
    if (!active) {
      throw new DomainError('not_found', `Node ${node.id} of cloud '${cloud.name}' is not assigned`);
    }
    const lease = await this.leases.extend(cloud.name, node.id, expiresAt, new Date(now));
    if (lease === 'claimed') {
      throw new DomainError(
        'conflict',
        `The lease of node ${node.id} of cloud '${cloud.name}' is ending now`,
      );
    }
    return {
      id: active.id,
      nodeId: node.id,
      result: `VM ${node.id} leased until ${lease.expiresAt.toISOString()}`,
      lease,
    };
  }

  /**
   * Carries out an expired lease (the lease scheduler's work): poweroff powers the node off, destroy
   * destroys it; every kind ends the assignment. A node or assignment gone already is no failure;
   * a cloud or facility that fails throws, and the expiry is tried again later.
   */
  async expire(lease: ClaimedLease): Promise<void> {
    const cloud = this.registry.get(lease.cloud);
    const gone = (error: unknown): void => {
      if (!(error instanceof DomainError && error.kind === 'not_found')) {
        throw error;
      }
    };
    if (lease.onExpiry === 'destroy') {
      await this.destroy(cloud, lease.nodeId).catch(gone);
    } else if (lease.onExpiry === 'poweroff') {
      await cloud.power(lease.nodeId, 'poweroff').catch((error: unknown) => {
        // A terminated node is as off as it gets.
        if (!(error instanceof DomainError && error.kind === 'conflict')) {
          gone(error);
        }
      });
    }
    await this.assignments.release(cloud.name, lease.nodeId).catch(gone);
    this.logger.log(
      `lease of node ${lease.nodeId} of cloud '${cloud.name}' ended at ${lease.expiresAt.toISOString()}: ${lease.onExpiry}`,
    );
  }

  /** Ends a node's assignment, leaving the node running; 'not_found' for an unknown or unassigned node. */
  async release(cloudName: string, command: ReleaseCommand): Promise<AssignmentOutcome> {
    const cloud = this.registry.get(cloudName);
    if (command.emulate) {
      return emulated(command.node);
    }
    const node = await cloud.findNode(command.node);
    const released = await this.assignments.release(cloud.name, node.id);
    await this.leases.remove(cloud.name, node.id);
    return { id: released.id, nodeId: node.id, result: `VM ${node.id} released` };
  }

  /** The cloud's active assignments, oldest first, each with its lease if it has one. */
  async activeAssignments(cloudName: string): Promise<LeasedAssignment[]> {
    const cloud = this.registry.get(cloudName);
    const active = await this.assignments.listActive(cloud.name);
    const leases = await this.leases.ofNodes(
      cloud.name,
      active.map((assignment) => assignment.nodeId),
    );
    return active.map((assignment) => ({ ...assignment, lease: leases.get(assignment.nodeId) }));
  }
}

/**
 * The fixed reply of `emulate` (API.md 3.3), the same for assign and release, assignment text
 * included, as the original system answered for its automatic documentation.
 */
function emulated(node: NodeQuery): AssignmentOutcome {
  const idVm = 'id' in node ? node.id : node.hostname;
  return { id: 0, nodeId: idVm, result: `VM ${idVm} assigned (emulated)` };
}
