import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { isUniqueViolation } from '../common/errors/unique-violation.js';
import { claimDueRows } from '../database/claim-due-rows.js';
import type { Assignment } from './assignment/assignment-facility.js';
import { VmLeaseEntity, type OnExpiry } from './entities/vm-lease.entity.js';

/** A lease as the rules see it. */
export interface Lease {
  readonly id: number;
  readonly cloud: string;
  readonly nodeId: string;
  readonly expiresAt: Date;
  readonly onExpiry: OnExpiry;
}

/**
 * An active assignment with its lease, if it has one. Beside Lease rather than in the service
 * that assembles it, so that the replies can show it without importing a service.
 */
export interface LeasedAssignment extends Assignment {
  readonly lease?: Lease;
}

/** A lease whose expiry this copy of the service claimed; `token` proves the claim when it is done. */
export interface ClaimedLease extends Lease {
  readonly token: string;
}

/** All SQL of leases (`vm_leases`). Single statements only: SQLite runs the process on one connection. */
@Injectable()
export class LeasesRepository {
  private claims = 0;

  constructor(@InjectRepository(VmLeaseEntity) private readonly rows: Repository<VmLeaseEntity>) {}

  /** Gives the node this lease, replacing any earlier one (left by an assignment that ended elsewhere). */
  async set(cloud: string, nodeId: string, expiresAt: Date, onExpiry: OnExpiry): Promise<Lease> {
    await this.rows.delete({ cloud, nodeId });
    const row = this.rows.create({ cloud, nodeId, expiresAt, onExpiry, claimOwner: null, claimUntil: null });
    try {
      const result = await this.rows.insert(row);
      return toLease({ ...row, id: Number(result.identifiers[0]?.id) });
    } catch (error) {
      // A concurrent assign of the same node won the facility's race too; it is that caller's lease.
      if (isUniqueViolation(error)) {
        throw new Error(`a lease of node ${nodeId} of cloud '${cloud}' was set concurrently`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  /**
   * Moves the end of the node's lease; creates one (ending in a release) when the node has none.
   * 'claimed' when a copy of the service is carrying out the expiry right now.
   */
  async extend(cloud: string, nodeId: string, expiresAt: Date, now: Date): Promise<Lease | 'claimed'> {
    const result = await this.rows
      .createQueryBuilder()
      .update(VmLeaseEntity)
      .set({ expiresAt })
      .where('cloud = :cloud AND node_id = :nodeId', { cloud, nodeId })
      .andWhere('(claim_until IS NULL OR claim_until < :now)', { now })
      .execute();
    const row = await this.rows.findOneBy({ cloud, nodeId });
    if (!row) {
      return this.set(cloud, nodeId, expiresAt, 'release');
    }
    return (result.affected ?? 0) > 0 ? toLease(row) : 'claimed';
  }

  /** Ends the node's lease, if any (its assignment ended). */
  async remove(cloud: string, nodeId: string): Promise<void> {
    await this.rows.delete({ cloud, nodeId });
  }

  /** The leases of these nodes of a cloud. */
  async ofNodes(cloud: string, nodeIds: readonly string[]): Promise<Map<string, Lease>> {
    if (nodeIds.length === 0) {
      return new Map();
    }
    const rows = await this.rows.findBy({ cloud, nodeId: In([...nodeIds]) });
    return new Map(rows.map((row) => [row.nodeId, toLease(row)]));
  }

  /**
   * Claims up to `batch` leases that have run out and that no live claim holds, for `claimMs`. One
   * conditional UPDATE per round decides races: of several copies, one wins each lease.
   */
  async claimExpired(now: Date, owner: string, batch: number, claimMs: number): Promise<ClaimedLease[]> {
    const token = `${owner}#${++this.claims}`.slice(-64);
    const claimed = await claimDueRows(this.rows, { dueColumn: 'expires_at', now, token, batch, claimMs });
    return claimed.map((row) => ({ ...toLease(row), token }));
  }

  /** The expiry is carried out: the lease goes, unless it is no longer this claim's (extended and re-claimed). */
  async finish(lease: ClaimedLease): Promise<void> {
    await this.rows.delete({ id: lease.id, claimOwner: lease.token });
  }

  /** The expiry failed: it is tried again after `retryAt` by whichever copy claims it then. */
  async retryLater(lease: ClaimedLease, retryAt: Date): Promise<void> {
    await this.rows.update({ id: lease.id, claimOwner: lease.token }, { claimUntil: retryAt });
  }
}

function toLease(row: VmLeaseEntity): Lease {
  return {
    id: row.id,
    cloud: row.cloud,
    nodeId: row.nodeId,
    expiresAt: row.expiresAt,
    onExpiry: row.onExpiry,
  };
}
