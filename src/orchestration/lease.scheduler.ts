import { randomUUID } from 'node:crypto';
import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { LeasesRepository } from './leases.repository.js';
import { OrchestrationService } from './orchestration.service.js';

/** Expiries claimed at once. */
const BATCH_SIZE = 50;
/**
 * How long a claim holds an expiry. A copy that dies while carrying one out leaves it to run out,
 * then another copy takes the expiry; longer than any cloud call (power off, destroy) it makes.
 */
export const CLAIM_MS = 5 * 60_000;
/** A failed expiry (cloud down) is tried again this much later. */
export const RETRY_MS = 30_000;
/** About every 5 s: an expiry is carried out within 60 s of its time with room for a slow cloud. */
export const TICK_MS = 5_000;

/**
 * Carries out the leases that ran out (STYLE.md 7): every few seconds, claim the expired leases with a
 * database claim (several copies share the work; each expiry is claimed by one), hand each to
 * OrchestrationService.expire, and remove it once done. Tests call `tick(now)`.
 */
@Injectable()
export class LeaseScheduler implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown {
  /** This copy's identity in `claim_owner`. */
  readonly owner = randomUUID();
  private readonly logger = new Logger(LeaseScheduler.name);
  private current?: Promise<number>;
  private timer?: NodeJS.Timeout;
  private stopping = false;

  constructor(
    private readonly leases: LeasesRepository,
    private readonly orchestration: OrchestrationService,
    private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.scheduleTick();
  }

  onModuleDestroy(): void {
    this.stopping = true;
    clearTimeout(this.timer);
  }

  /** Waits for the expiries in flight, before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.current?.catch(() => undefined);
  }

  /**
   * Claims the leases expired at `now` and carries them out; resolves with how many were done. A tick
   * while another runs, or after shutdown began, does nothing.
   */
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
    let done = 0;
    while (!this.stopping) {
      const claimed = await this.leases.claimExpired(now, this.owner, BATCH_SIZE, CLAIM_MS);
      for (const lease of claimed) {
        try {
          await this.orchestration.expire(lease);
          await this.leases.finish(lease);
          done += 1;
        } catch (error) {
          this.logger.warn(
            `the lease of node ${lease.nodeId} of cloud '${lease.cloud}' could not be ended (${lease.onExpiry}), ` +
              `trying again in ${RETRY_MS / 1000} s: ${String(error)}`,
          );
          await this.leases.retryLater(lease, new Date(now.getTime() + RETRY_MS));
        }
      }
      if (claimed.length < BATCH_SIZE) {
        break;
      }
    }
    return done;
  }

  /** The next tick in 0.75–1.25 periods: the jitter keeps copies from ticking in one phase. */
  private scheduleTick(): void {
    if (this.stopping) {
      return;
    }
    this.timer = setTimeout(
      () => {
        this.tick()
          .catch((error: unknown) => this.logger.error({ err: error }, 'lease tick failed'))
          .finally(() => this.scheduleTick());
      },
      Math.round(TICK_MS * (0.75 + 0.5 * Math.random())),
    );
  }
}
