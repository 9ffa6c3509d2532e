import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ClaimTicker } from '../../common/claim-ticker.js';
import { Clock } from '../../common/clock.js';
import { AppConfig } from '../../config/app-config.js';
import { FollowQueue } from './follow-queue.js';
import { FollowedRepositoriesService } from './followed-repositories.service.js';
import { FollowsRepository } from './follows.repository.js';

/** Repositories polled, and refs registered, per claim. */
const BATCH_SIZE = 20;
/** Polls of one copy at once: each is a request or two to a host. */
const POLLS_AT_ONCE = 4;

/**
 * Following repositories' timer (API.md 12), a sibling of the refresh scheduler: every few
 * seconds (at most a quarter of REFRESH_INTERVAL_SECONDS) it claims the repositories due for a
 * poll and polls them, then claims the pending registrations and makes them, one at a time; a
 * webhook's new tag or a follow just set wakes it at once. Claims in the database let several
 * copies share the work, each poll and each registration made by one copy. Nothing is sent to
 * a host while its rate limit's pause lasts (the service puts those polls and refs off). REFRESH_INTERVAL_SECONDS=0 turns the timer off:
 * only wake-ups run it then.
 */
@Injectable()
export class FollowScheduler extends ClaimTicker implements OnModuleInit {
  protected readonly logger = new Logger(FollowScheduler.name);

  constructor(
    private readonly follows: FollowsRepository,
    private readonly service: FollowedRepositoriesService,
    private readonly queue: FollowQueue,
    private readonly config: AppConfig,
    clock: Clock,
  ) {
    const seconds = config.monitoring.refreshIntervalSeconds;
    super(clock, seconds === 0 ? 0 : Math.min(5_000, Math.max(250, (seconds * 1000) / 4)));
  }

  onModuleInit(): void {
    this.queue.onWake(() => this.kick());
  }

  /** Polls planned under a longer interval before a restart are due at once. */
  protected override async beforeTicks(): Promise<void> {
    try {
      await this.service.keepToInterval(new Date(this.clock.nowMs()));
    } catch (error) {
      // Polling still runs, at the times planned before.
      this.logger.error({ err: error }, 'bringing polls forward to the interval failed');
    }
  }

  /** A poll reads a page or two: a claim outlives many answers' timeouts. */
  private get pollClaimMs(): number {
    return 2 * 60_000 + 4 * this.config.registry.downloadTimeoutMs;
  }

  /** A registration reads the host's API and downloads the archive: a claim outlives both timeouts. */
  private get registrationClaimMs(): number {
    return 2 * 60_000 + 4 * this.config.registry.downloadTimeoutMs;
  }

  protected async run(now: Date): Promise<number> {
    let done = 0;
    for (;;) {
      const claimed = await this.follows.claimDuePolls(now, this.owner, BATCH_SIZE, this.pollClaimMs);
      for (let at = 0; at < claimed.length && !this.isStopping; at += POLLS_AT_ONCE) {
        await Promise.all(claimed.slice(at, at + POLLS_AT_ONCE).map((poll) => this.service.poll(poll, now)));
      }
      done += claimed.length;
      if (claimed.length < BATCH_SIZE || this.isStopping) {
        break;
      }
    }
    while (!this.isStopping) {
      const claimed = await this.follows.claimDueRefs(now, this.owner, BATCH_SIZE, this.registrationClaimMs);
      for (const ref of claimed) {
        if (this.isStopping) {
          break; // the claims run out and the refs are due again
        }
        await this.service.attempt(ref, now);
        done++;
      }
      if (claimed.length < BATCH_SIZE) {
        break;
      }
    }
    return done;
  }
}
