import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { ClaimTicker } from '../common/claim-ticker.js';
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
 * Carries out the leases that ran out: every few seconds, claim the expired leases with a database
 * claim (several copies share the work; each expiry is claimed by one), hand each to
 * OrchestrationService.expire, and remove it once done.
 */
@Injectable()
export class LeaseScheduler extends ClaimTicker {
  protected readonly logger = new Logger(LeaseScheduler.name);

  constructor(
    private readonly leases: LeasesRepository,
    private readonly orchestration: OrchestrationService,
    clock: Clock,
  ) {
    super(clock, TICK_MS);
  }

  protected async run(now: Date): Promise<number> {
    let done = 0;
    while (!this.isStopping) {
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
}
