import { randomUUID } from 'node:crypto';
import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { JobsRepository } from './jobs.repository.js';
import { JobsService } from './jobs.service.js';

const BATCH_SIZE = 50;
/** Longer than any cloud call of a step: a copy that dies mid-step leaves the job to others after it. */
export const JOB_CLAIM_MS = 2 * 60_000;
/** About every second: the first poll of a new node is due 1 s after its start. */
const TICK_MS = 1_000;

/**
 * Follows the asynchronous starts (STYLE.md 7): every second or so, claim the jobs due for a step with
 * a database claim (several copies share them, one at a time per job) and hand each to JobsService.step.
 * Tests call `tick(now)`.
 */
@Injectable()
export class JobPoller implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown {
  readonly owner = randomUUID();
  private readonly logger = new Logger(JobPoller.name);
  private current?: Promise<number>;
  private timer?: NodeJS.Timeout;
  private stopping = false;

  constructor(
    private readonly jobs: JobsRepository,
    private readonly service: JobsService,
    private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.scheduleTick();
  }

  onModuleDestroy(): void {
    this.stopping = true;
    clearTimeout(this.timer);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.current?.catch(() => undefined);
  }

  /** Steps every job due at `now`; resolves with how many were stepped. Does nothing while a tick runs. */
  tick(now = new Date(this.clock.nowMs())): Promise<number> {
    if (this.current || this.stopping) {
      return Promise.resolve(0);
    }
    this.current = this.run(now).finally(() => {
      this.current = undefined;
    });
    return this.current;
  }

  private async run(now: Date): Promise<number> {
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

  private scheduleTick(): void {
    if (this.stopping) {
      return;
    }
    this.timer = setTimeout(
      () => {
        this.tick()
          .catch((error: unknown) => this.logger.error({ err: error }, 'job tick failed'))
          .finally(() => this.scheduleTick());
      },
      Math.round(TICK_MS * (0.75 + 0.5 * Math.random())),
    );
  }
}
