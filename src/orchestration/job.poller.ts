import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { ClaimTicker } from '../common/claim-ticker.js';
import { JobsRepository } from './jobs.repository.js';
import { JobsService } from './jobs.service.js';

const BATCH_SIZE = 50;
/** Longer than any cloud call of a step: a copy that dies mid-step leaves the job to others after it. */
export const JOB_CLAIM_MS = 2 * 60_000;
/** About every second: the first poll of a new node is due 1 s after its start. */
const TICK_MS = 1_000;

/**
 * Follows the asynchronous starts: every second or so, claim the jobs due for a step with a database
 * claim (several copies share them, one at a time per job) and hand each to JobsService.step.
 */
@Injectable()
export class JobPoller extends ClaimTicker {
  protected readonly logger = new Logger(JobPoller.name);

  constructor(
    private readonly jobs: JobsRepository,
    private readonly service: JobsService,
    clock: Clock,
  ) {
    super(clock, TICK_MS);
  }

  protected async run(now: Date): Promise<number> {
    const claimed = await this.jobs.claimDue(now, this.owner, BATCH_SIZE, JOB_CLAIM_MS);
    const results = await Promise.allSettled(claimed.map((job) => this.service.step(job, now)));
    for (const result of results) {
      if (result.status === 'rejected') {
        this.logger.warn(
          `a job step failed, its claim runs out and it is tried again: ${String(result.reason)}`,
        );
      }
    }
    return claimed.length;
  }
}
