import { Inject, Injectable, Logger } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error.js';
import {
  ASSIGNMENT_FACILITY,
  type Assignment,
  type AssignmentFacility,
} from './assignment/assignment-facility.js';
import { CloudRegistry } from './cloud.registry.js';
import type { CloudRef } from './dto/replies.dto.js';
import type {
  CloudImage,
  CloudNode,
  CloudProvider,
  CloudSize,
  NodeQuery,
  PowerAction,
  StartNodeRequest,
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

  /** Starts a node; an image or size the cloud does not list is 'invalid_input'. */
  async start(cloudName: string, request: StartNodeRequest): Promise<{ cloud: CloudRef; node: CloudNode }> {
    const cloud = this.registry.get(cloudName);
    return { cloud: refOf(cloud), node: await cloud.startNode(request) };
  }

  /**
   * Destroys the node (found by id or hostname) and returns its id. Its active assignment, if any, ends
   * with it: a destroyed node cannot stay assigned, and the facility must not keep listing it.
   */
  async stop(cloudName: string, query: NodeQuery): Promise<string> {
    const cloud = this.registry.get(cloudName);
    const id = 'id' in query ? query.id : (await cloud.findNode(query)).id;
    await cloud.destroyNode(id);
    await this.assignments.release(cloud.name, id).catch((error: unknown) => {
      // The node is gone either way; a facility that fails here must not turn the stop into an error.
      if (!(error instanceof DomainError && error.kind === 'not_found')) {
        this.logger.warn(
          `node ${id} of cloud '${cloud.name}' was stopped, but ending its assignment failed: ${String(error)}`,
        );
      }
    });
    return id;
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
    const node = await cloud.findNode(command.node);
    const assignment = await this.assignments.assign({
      cloud: cloud.name,
      nodeId: node.id,
      hostname: node.name,
      user: command.user,
      vmType: command.vmType,
    });
    return { id: assignment.id, nodeId: node.id, result: `VM ${node.id} assigned` };
  }

  /** Ends a node's assignment, leaving the node running; 'not_found' for an unknown or unassigned node. */
  async release(cloudName: string, command: ReleaseCommand): Promise<AssignmentOutcome> {
    const cloud = this.registry.get(cloudName);
    if (command.emulate) {
      return emulated(command.node);
    }
    const node = await cloud.findNode(command.node);
    const released = await this.assignments.release(cloud.name, node.id);
    return { id: released.id, nodeId: node.id, result: `VM ${node.id} released` };
  }

  /** The cloud's active assignments, oldest first. */
  async activeAssignments(cloudName: string): Promise<Assignment[]> {
    const cloud = this.registry.get(cloudName);
    return this.assignments.listActive(cloud.name);
  }
}

function refOf(cloud: CloudProvider): CloudRef {
  return { name: cloud.name, type: cloud.type };
}

/**
 * The fixed reply of `emulate` (API.md 3.3), the same for assign and release, assignment text
 * included, as the original system answered for its automatic documentation.
 */
function emulated(node: NodeQuery): AssignmentOutcome {
  const idVm = 'id' in node ? node.id : node.hostname;
  return { id: 0, nodeId: idVm, result: `VM ${idVm} assigned (emulated)` };
}
