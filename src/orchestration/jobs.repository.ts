import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { claimDueRows } from '../database/claim-due-rows.js';
import { VmJobEntity, type JobState } from './entities/vm-job.entity.js';
import type { CloudNode, StartNodeRequest } from './providers/cloud-provider.js';

/** A job as the rules see it. */
export interface Job {
  readonly id: string;
  readonly cloud: string;
  readonly ownerId: number;
  readonly state: JobState;
  readonly request: StartNodeRequest;
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
}

/** All SQL of jobs (`vm_jobs`). Single statements only: SQLite runs the process on one connection. */
@Injectable()
export class JobsRepository {
  private claims = 0;

  constructor(@InjectRepository(VmJobEntity) private readonly rows: Repository<VmJobEntity>) {}

  async create(job: {
    id: string;
    cloud: string;
    ownerId: number;
    request: StartNodeRequest;
    now: Date;
  }): Promise<Job> {
    const row = this.rows.create({
      id: job.id,
      cloud: job.cloud,
      ownerId: job.ownerId,
      state: 'pending',
      request: JSON.stringify(job.request),
      nodeId: null,
      node: null,
      error: null,
      polls: 0,
      nextPollAt: job.now,
      claimOwner: null,
      claimUntil: null,
      createdAt: job.now,
    });
    await this.rows.insert(row);
    return toJob(row);
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
    state: row.state,
    request: JSON.parse(row.request) as StartNodeRequest,
    nodeId: row.nodeId,
    node: row.node === null ? null : (JSON.parse(row.node) as CloudNode),
    error: row.error,
    polls: row.polls,
    createdAt: row.createdAt,
  };
}
