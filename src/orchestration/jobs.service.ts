import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import type { Caller } from './caller.js';
import { CloudRegistry } from './cloud.registry.js';
import type { CloudRef } from './dto/replies.dto.js';
import { JobsRepository, type ClaimedJob, type Job } from './jobs.repository.js';
import { NodeState, type CloudNode } from './providers/cloud-provider.js';

/** The first poll of a new node comes this soon; each next one twice as late, up to MAX_POLL_DELAY_MS. */
export const FIRST_POLL_DELAY_MS = 1_000;
export const MAX_POLL_DELAY_MS = 30_000;
/** A node not running this long after the job was made fails the job (Nova builds take minutes at most). */
export const JOB_DEADLINE_MS = 30 * 60_000;

/** The delay before poll number `polls` (0 = the first): 1 s, 2 s, 4 s, … up to 30 s. */
export function pollDelayMs(polls: number): number {
  return Math.min(MAX_POLL_DELAY_MS, FIRST_POLL_DELAY_MS * 2 ** Math.min(polls, 16));
}

/** Who asks about a job: its owner, or an admin, may see it. */
export type JobCaller = Pick<Caller, 'id' | 'admin'>;

/**
 * Asynchronous starts (API.md 8): a job row is made at once (202); the job poller then starts the node
 * and follows it (pending → running, or error) with a growing delay, until it runs (done) or
 * fails. Every step is a row update, so a job survives a restart and any copy carries it on.
 */
@Injectable()
export class JobsService {
  private readonly logger = new Logger(JobsService.name);

  constructor(
    private readonly registry: CloudRegistry,
    private readonly jobs: JobsRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * The job and its cloud, to its owner or an admin; 'not_found' for anyone else, as for an unknown id
   * (a job's existence is not told to those who may not see it).
   */
  async get(id: string, caller: JobCaller): Promise<{ job: Job; cloud: CloudRef }> {
    const job = /^[0-9a-f-]{36}$/.test(id) ? await this.jobs.find(id) : undefined;
    if (!job || (job.ownerId !== caller.id && !caller.admin)) {
      throw new DomainError('not_found', `Job ${id} not found`);
    }
    const provider = this.registry.list().find((cloud) => cloud.name === job.cloud);
    return { job, cloud: { name: job.cloud, type: provider?.type ?? '' } };
  }

  /**
   * One step of a claimed job (the poller's work): a pending job starts its node; a running one reads
   * its node again. Cloud failures while following a node only delay the next poll; the deadline fails
   * the job.
   */
  async step(job: ClaimedJob, now: Date): Promise<void> {
    let cloud;
    try {
      cloud = this.registry.get(job.cloud);
    } catch {
      await this.jobs.update(job, {
        state: 'failed',
        error: `Cloud '${job.cloud}' is no longer configured`,
        stoppedAt: now,
      });
      return;
    }
    if (job.state === 'pending') {
      // Marked running (claim kept) before the cloud is asked: a copy that dies during the start leaves a
      // running job without a node, which is then failed rather than started twice.
      if (!(await this.jobs.update(job, { state: 'running', nextPollAt: now }, true))) {
        return;
      }
      try {
        const node = await cloud.startNode(job.request);
        await this.follow(job, node.state, { nodeId: node.id, node, polls: 0 }, now);
      } catch (error) {
        await this.jobs.update(job, { state: 'failed', error: messageOf(error), stoppedAt: now });
      }
      return;
    }
    if (job.nodeId === null) {
      await this.jobs.update(job, {
        state: 'failed',
        error: `The service stopped while starting the node; a node named '${job.request.name}' may exist in cloud '${job.cloud}'`,
        // Not known to exist: it no longer counts against the quota (usage shows the time until now).
        stoppedAt: now,
      });
      return;
    }
    try {
      const node = await cloud.findNode({ id: job.nodeId });
      await this.follow(job, node.state, { node, polls: job.polls + 1 }, now);
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'not_found') {
        await this.jobs.update(job, {
          state: 'failed',
          error: `Node ${job.nodeId} disappeared from cloud '${job.cloud}'`,
          stoppedAt: now,
        });
        return;
      }
      this.logger.warn(
        `job ${job.id}: reading node ${job.nodeId} failed, trying again later: ${messageOf(error)}`,
      );
      await this.follow(job, NodeState.Pending, { polls: job.polls + 1 }, now);
    }
  }

  /** Done when the node runs, failed on error or past the deadline, else polled again after the back-off. */
  private async follow(
    job: ClaimedJob,
    state: NodeState,
    seen: { nodeId?: string; node?: CloudNode; polls: number },
    now: Date,
  ): Promise<void> {
    const nodeId = seen.nodeId ?? job.nodeId;
    if (state === NodeState.Running) {
      await this.jobs.update(job, { ...seen, state: 'done' });
    } else if (state === NodeState.Error || state === NodeState.Terminated) {
      await this.jobs.update(job, {
        ...seen,
        state: 'failed',
        error: `Node ${nodeId} of cloud '${job.cloud}' went into state ${NodeState[state].toLowerCase()}`,
        // A node in error still exists (and is held until stopped); a terminated one is gone.
        ...(state === NodeState.Terminated ? { stoppedAt: now } : {}),
      });
    } else if (now.getTime() - job.createdAt.getTime() > JOB_DEADLINE_MS) {
      await this.jobs.update(job, {
        ...seen,
        state: 'failed',
        error: `Node ${nodeId} of cloud '${job.cloud}' was not running ${JOB_DEADLINE_MS / 60_000} minutes after the start`,
      });
    } else {
      await this.jobs.update(job, {
        ...seen,
        state: 'running',
        nextPollAt: new Date(now.getTime() + pollDelayMs(seen.polls)),
      });
    }
  }
}

function messageOf(error: unknown): string {
  // Providers' DomainErrors are written for callers (no secret); anything else is ours and stays in the log.
  return error instanceof DomainError ? error.message : 'The start failed on our side';
}
