import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Not, Repository } from 'typeorm';
import { DomainError } from '../../common/errors/domain-error.js';
import { isUniqueViolation } from '../../common/errors/unique-violation.js';
import { Clock } from '../../common/clock.js';
import { VmAssignmentEntity } from '../entities/vm-assignment.entity.js';
import type {
  AssignRequest,
  Assignment,
  AssignmentFacility,
  ReleasedAssignment,
} from './assignment-facility.js';

/**
 * The built-in facility: assignments are rows of `vm_assignments`, kept as history after release.
 * The unique constraint on (cloud, active_node_id) decides races between requests and copies of the
 * service: of two simultaneous assigns of one node, the database lets exactly one insert through.
 */
@Injectable()
export class DatabaseAssignmentFacility implements AssignmentFacility {
  constructor(
    @InjectRepository(VmAssignmentEntity) private readonly rows: Repository<VmAssignmentEntity>,
    private readonly clock: Clock,
  ) {}

  async assign(request: AssignRequest): Promise<Assignment> {
    const row = this.rows.create({
      cloud: request.cloud,
      nodeId: request.nodeId,
      activeNodeId: request.nodeId,
      hostname: request.hostname,
      username: request.user,
      vmType: request.vmType,
      assignedAt: new Date(this.clock.nowMs()),
      releasedAt: null,
    });
    try {
      // insert, not save: save wraps itself in a transaction, which on SQLite's single connection
      // would collide with a concurrent one.
      const result = await this.rows.insert(row);
      return toAssignment({ ...row, id: Number(result.identifiers[0]?.id) });
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new DomainError(
          'conflict',
          `Node ${request.nodeId} of cloud '${request.cloud}' is assigned already`,
        );
      }
      throw error;
    }
  }

  async release(cloud: string, nodeId: string): Promise<ReleasedAssignment> {
    const active = await this.rows.findOneBy({ cloud, activeNodeId: nodeId });
    // The update is conditional on the row still being active, so of two racing releases one wins.
    const result = active
      ? await this.rows.update(
          { id: active.id, activeNodeId: Not(IsNull()) },
          { activeNodeId: null, releasedAt: new Date(this.clock.nowMs()) },
        )
      : undefined;
    if (!active || (result?.affected ?? 0) === 0) {
      throw new DomainError('not_found', `Node ${nodeId} of cloud '${cloud}' is not assigned`);
    }
    return { id: active.id, cloud, nodeId };
  }

  async listActive(cloud: string): Promise<Assignment[]> {
    const rows = await this.rows.find({
      where: { cloud, activeNodeId: Not(IsNull()) },
      order: { id: 'ASC' },
    });
    return rows.map(toAssignment);
  }
}

function toAssignment(row: VmAssignmentEntity): Assignment {
  return {
    id: row.id,
    cloud: row.cloud,
    nodeId: row.nodeId,
    hostname: row.hostname,
    user: row.username,
    vmType: row.vmType,
    assignedAt: row.assignedAt,
  };
}
