import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Clock } from '../common/clock.js';
import { discovered } from '../common/discovered.js';
import { AppConfig } from '../config/app-config.js';
import { RemovesExpiredRows, type ExpiringRows } from './expiring-rows.js';

const INTERVAL_NAME = 'expiry-janitor';
const SWEEP_EVERY_MS = 10 * 60 * 1000;
/** Rows deleted per statement: short statements, short locks, beside the requests that write those tables. */
export const EXPIRY_BATCH = 500;

/**
 * Deletes what expired and nobody will present again: sign-in states never finished,
 * authorization codes never exchanged, applications' tokens and the grants left alone past their
 * refresh tokens' life. Writes already drop some of them as they go; this clears the rest when
 * nobody writes. Every ten minutes, in batches of EXPIRY_BATCH, from every repository that carries
 * @RemovesExpiredRows(); deletes are idempotent, so several copies sweeping at once only repeat a
 * little work. Off, like the refresh scheduler, when REFRESH_INTERVAL_SECONDS is 0: tests then call
 * sweep() with the time they choose.
 */
@Injectable()
export class ExpiryJanitor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ExpiryJanitor.name);
  private sweeping: Promise<unknown> = Promise.resolve();
  private stopping = false;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scheduler: SchedulerRegistry,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.monitoring.refreshIntervalSeconds === 0) {
      return;
    }
    this.scheduler.addInterval(
      INTERVAL_NAME,
      setInterval(() => {
        this.sweeping = this.sweepAndLog();
      }, SWEEP_EVERY_MS).unref(),
    );
  }

  /** Lets a sweep in progress finish its batch before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.scheduler.doesExist('interval', INTERVAL_NAME)) {
      this.scheduler.deleteInterval(INTERVAL_NAME);
    }
    await this.sweeping;
  }

  /** Removes every row expired before `now`, batch by batch; resolves with how many went, by kind of row. */
  async sweep(now = new Date(this.clock.nowMs())): Promise<Record<string, number>> {
    const removed: Record<string, number> = {};
    for (const source of discovered<ExpiringRows>(this.discovery, RemovesExpiredRows)) {
      let total = 0;
      for (;;) {
        const batch = await source.removeExpired(now, EXPIRY_BATCH);
        total += batch;
        if (batch < EXPIRY_BATCH || this.stopping) {
          break;
        }
      }
      removed[source.expiringRows] = total;
    }
    return removed;
  }

  private async sweepAndLog(): Promise<void> {
    try {
      const removed = Object.entries(await this.sweep()).filter(([, count]) => count > 0);
      if (removed.length > 0) {
        this.logger.log(`removed expired ${removed.map(([rows, count]) => `${rows}: ${count}`).join(', ')}`);
      }
    } catch (error) {
      this.logger.error({ err: error }, 'the sweep of expired sign-in states, codes and tokens failed');
    }
  }
}
