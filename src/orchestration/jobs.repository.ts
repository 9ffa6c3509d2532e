import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Brackets, IsNull, Repository } from 'typeorm';
import { claimDueRows } from '../database/claim-due-rows.js';
import { underNamedLock } from '../database/dialect.js';
import type { Holding, StartRecord } from './quota-rules.js';
import { VmJobEntity, type JobState } from './entities/vm-job.entity.js';
import type { CloudNode, StartNodeRequest } from './providers/cloud-provider.js';

/** A job as the rules see it. */
export interface Job {
  readonly id: string;
  readonly cloud: string;
  readonly ownerId: number;
  readonly ownerName: string;
  readonly state: JobState;
  readonly request: StartNodeRequest;
  readonly vcpus: number;
  readonly ramMib: number;
  readonly stoppedAt: Date | null;
  readonly nodeId: string | null;
  readonly node: CloudNode | null;
  readonly error: string | null;
  readonly polls: number;
  readonly createdAt: Date;
}

/** A job this copy claimed; `token` proves the claim on every write. */
export interface ClaimedJob extends Job {
  readonly token: string;
}

/** What a step of the poller writes: the new state and, unless finished, the next poll. */
export interface JobUpdate {
  readonly state: JobState;
  readonly nodeId?: string;
  readonly node?: CloudNode;
  readonly error?: string;
  readonly polls?: number;
  /** Undefined: the job is finished and never polled again. */
  readonly nextPollAt?: Date;
  /** The job holds no node any more (it failed without one, or its node is gone). */
  readonly stoppedAt?: Date;
}

/** A start about to be recorded. */
export interface NewJob {
  readonly id: string;
  readonly cloud: string;
  readonly ownerId: number;
  readonly ownerName: string;
  readonly request: StartNodeRequest;
  readonly vcpus: number;
  readonly ramMib: number;
  readonly now: Date;
  /**
   * A synchronous start: the row is made `running` and claimed by this copy for `claimMs` while it asks
   * the cloud, so no poller takes it; a copy that dies meanwhile leaves the claim to run out, and the
   * poller then fails the job (as for an asynchronous start cut short).
   */
  readonly claim?: { readonly owner: string; readonly claimMs: number };
}

// The quota check and the insert run under this per-user lock (a MariaDB named lock across copies).
const QUOTA_LOCK_SECONDS = 10;

/** All SQL of jobs (`vm_jobs`). Single statements only: SQLite runs the process on one connection. */
@Injectable()
export class JobsRepository {
  private claims = 0;

  constructor(@InjectRepository(VmJobEntity) private readonly rows: Repository<VmJobEntity>) {}

  /**
   * Records a start once `admit` accepts what its owner holds now (it throws to refuse). Decided
   * atomically across copies of the service: under a per-user named lock (MariaDB) and in one
   * transaction (which SQLite runs alone), so two starts at once never both pass a quota that has room
   * for one. A claimed job comes back with its token.
   */
  async create(job: NewJob, admit: (held: Holding) => void): Promise<ClaimedJob> {
    const token = job.claim ? `${job.claim.owner}#${++this.claims}`.slice(-64) : '';
    const row = this.rows.create({
      id: job.id,
      cloud: job.cloud,
      ownerId: job.ownerId,
      ownerName: job.ownerName,
      state: job.claim ? 'running' : 'pending',
      request: JSON.stringify(job.request),
      vcpus: job.vcpus,
      ramMib: job.ramMib,
      nodeId: null,
      node: null,
      error: null,
      polls: 0,
      nextPollAt: job.now,
      claimOwner: job.claim ? token : null,
      claimUntil: job.claim ? new Date(job.now.getTime() + job.claim.claimMs) : null,
      createdAt: job.now,
      stoppedAt: null,
    });
    const manager = this.rows.manager;
    await underNamedLock(manager, `quota_${job.ownerId}`, QUOTA_LOCK_SECONDS, () =>
      manager.transaction(async (tx) => {
        // Read inside the lock: whatever another copy admitted before is committed and counted.
        const held = await tx
          .createQueryBuilder(VmJobEntity, 'j')
          .select('COUNT(*)', 'nodes')
          .addSelect('COALESCE(SUM(j.vcpus), 0)', 'vcpus')
          .addSelect('COALESCE(SUM(j.ram_mib), 0)', 'ramMib')
          .where('j.owner_id = :owner', { owner: job.ownerId })
          .andWhere('j.stopped_at IS NULL')
          .getRawOne<{ nodes: number | string; vcpus: number | string; ramMib: number | string }>();
        admit({
          nodes: Number(held?.nodes ?? 0),
          vcpus: Number(held?.vcpus ?? 0),
          ramMib: Number(held?.ramMib ?? 0),
        });
        await tx.insert(VmJobEntity, row);
      }),
    );
    return { ...toJob(row), token };
  }

  /** The service stopped the node: it no longer counts against its owner's quota. */
  async markStopped(cloud: string, nodeId: string, now: Date): Promise<void> {
    await this.rows.update({ cloud, nodeId, stoppedAt: IsNull() }, { stoppedAt: now });
  }

  /** The starts that overlap [from, to) (all users', or one owner's), oldest first. */
  async records(from: Date, to: Date, ownerId?: number): Promise<StartRecord[]> {
    const query = this.rows
      .createQueryBuilder('j')
      .where('j.created_at < :to', { to })
      .andWhere(
        new Brackets((where) =>
          where.where('j.stopped_at IS NULL').orWhere('j.stopped_at > :from', { from }),
        ),
      )
      // A start refused or failed before its node existed held nothing.
      .andWhere(
        new Brackets((where) => where.where('j.node_id IS NOT NULL').orWhere('j.stopped_at IS NULL')),
      );
    if (ownerId !== undefined) {
      query.andWhere('j.owner_id = :ownerId', { ownerId });
    }
    const rows = await query.orderBy('j.created_at', 'ASC').getMany();
    return rows.map((row) => ({
      ownerId: row.ownerId,
      ownerName: row.ownerName,
      cloud: row.cloud,
      nodeId: row.nodeId,
      vcpus: row.vcpus,
      ramMib: row.ramMib,
      startedAt: row.createdAt,
      stoppedAt: row.stoppedAt,
    }));
  }

  async find(id: string): Promise<Job | undefined> {
    const row = await this.rows.findOneBy({ id });
    return row ? toJob(row) : undefined;
  }

  /** Claims up to `batch` unfinished jobs due at `now` that no live claim holds, for `claimMs`. */
  async claimDue(now: Date, owner: string, batch: number, claimMs: number): Promise<ClaimedJob[]> {
    const token = `${owner}#${++this.claims}`.slice(-64);
    const claimed = await claimDueRows(this.rows, { dueColumn: 'next_poll_at', now, token, batch, claimMs });
    return claimed.map((row) => ({ ...toJob(row), token }));
  }

  /**
   * Writes a step, keeping the claim (`keepClaim`, while a cloud call runs) or giving it up. False when
   * the claim was lost (it ran out and another copy took the job): the caller must then stop.
   */
  async update(job: ClaimedJob, update: JobUpdate, keepClaim = false): Promise<boolean> {
    const result = await this.rows.update(
      { id: job.id, claimOwner: job.token },
      {
        state: update.state,
        ...(update.nodeId === undefined ? {} : { nodeId: update.nodeId }),
        ...(update.node === undefined ? {} : { node: JSON.stringify(update.node) }),
        ...(update.error === undefined ? {} : { error: update.error.slice(0, 1024) }),
        ...(update.polls === undefined ? {} : { polls: update.polls }),
        nextPollAt: update.nextPollAt ?? null,
        ...(update.stoppedAt === undefined ? {} : { stoppedAt: update.stoppedAt }),
        ...(keepClaim ? {} : { claimOwner: null, claimUntil: null }),
      },
    );
    return (result.affected ?? 0) > 0;
  }
}

function toJob(row: VmJobEntity): Job {
  return {
    id: row.id,
    cloud: row.cloud,
    ownerId: row.ownerId,
    ownerName: row.ownerName,
    state: row.state,
    request: JSON.parse(row.request) as StartNodeRequest,
    vcpus: row.vcpus,
    ramMib: row.ramMib,
    stoppedAt: row.stoppedAt,
    nodeId: row.nodeId,
    node: row.node === null ? null : (JSON.parse(row.node) as CloudNode),
    error: row.error,
    polls: row.polls,
    createdAt: row.createdAt,
  };
}
