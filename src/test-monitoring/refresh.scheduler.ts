import { randomUUID } from 'node:crypto';
import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppConfig } from '../config/app-config.js';
import { BuildsRepository } from './builds.repository.js';
import { formatCycleReport, RefreshMetrics, type CycleReport } from './refresh-metrics.js';
import { RefreshService } from './refresh.service.js';

/** Instances claimed at once; a tick claims again while batches come back full. */
export const BATCH_SIZE = 500;
/**
 * How long a claim holds its instances (longer with long upstream timeouts). A copy that dies
 * leaves its leases to run out, then any copy takes the instances; a live copy leaves the checks
 * it could not start in time to others.
 */
export const LEASE_MS = 5 * 60_000;
/** Upstream timeouts a check may take (a GitHub check can send several requests). */
const CHECK_TIMEOUTS = 4;
const INTERVAL_NAME = 'test-monitoring-refresh';

/**
 * The refresh tick (STYLE.md 7): every second or so, claim the due instances with a database
 * lease (so several copies share the work, each instance checked by one of them), hand them to
 * RefreshService, and log the cycle's figures. The tick is short and independent of the refresh
 * interval; when instances are due is the business of their `next_check_at`.
 */
@Injectable()
export class RefreshScheduler implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown {
  /** This copy's identity in `lease_owner`. */
  readonly owner = randomUUID();
  private readonly logger = new Logger(RefreshScheduler.name);
  private current?: Promise<CycleReport | undefined>;
  private stopping = false;

  constructor(
    private readonly registry: SchedulerRegistry,
    private readonly builds: BuildsRepository,
    private readonly refresher: RefreshService,
    private readonly metrics: RefreshMetrics,
    private readonly config: AppConfig,
  ) {}

  /** How often the tick runs: a twentieth of the interval, between 0.2 and 1 s. */
  get tickMs(): number {
    return Math.min(1000, Math.max(200, Math.floor(this.refresher.intervalMs / 20)));
  }

  get leaseMs(): number {
    return Math.max(LEASE_MS, 2 * CHECK_TIMEOUTS * this.config.monitoring.upstreamTimeoutMs);
  }

  onApplicationBootstrap(): void {
    if (this.config.monitoring.refreshIntervalSeconds === 0) {
      return; // 0 turns the scheduler off
    }
    const run = (): void => {
      this.tick().catch((error: unknown) => this.logger.error({ err: error }, 'refresh tick failed'));
    };
    this.registry.addInterval(INTERVAL_NAME, setInterval(run, this.tickMs));
  }

  /**
   * One cycle: claims due instances batch by batch and checks them. `now` fixes the clock (tests);
   * without it each batch uses the current time. A tick while another runs does nothing (a slow
   * cycle skips ticks rather than overlapping), and so does a tick after shutdown began. Resolves
   * with the cycle's figures, or undefined when nothing was due.
   */
  tick(now?: Date): Promise<CycleReport | undefined> {
    if (this.current || this.stopping) {
      return Promise.resolve(undefined);
    }
    this.current = this.cycle(now).finally(() => {
      this.current = undefined;
    });
    return this.current;
  }

  /** No new claims; checks not started yet are released. */
  onModuleDestroy(): void {
    this.stopping = true;
    if (this.registry.doesExist('interval', INTERVAL_NAME)) {
      this.registry.deleteInterval(INTERVAL_NAME);
    }
  }

  /** Waits for the checks in flight and their writes, before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.current?.catch(() => undefined);
  }

  private async cycle(fixedNow: Date | undefined): Promise<CycleReport | undefined> {
    const started = performance.now();
    const before = this.metrics.snapshot();
    let claimedAny = false;
    let now = fixedNow ?? new Date();
    while (!this.stopping) {
      now = fixedNow ?? new Date();
      const claimed = await this.builds.claimDue(now, this.owner, BATCH_SIZE, this.leaseMs);
      if (claimed.length === 0) {
        break;
      }
      claimedAny = true;
      await this.refresher.refresh(claimed, now, {
        stopping: () => this.stopping,
        leaseDeadline: Date.now() + this.leaseMs - CHECK_TIMEOUTS * this.config.monitoring.upstreamTimeoutMs,
      });
      if (claimed.length < BATCH_SIZE) {
        break;
      }
    }
    if (!claimedAny) {
      return undefined;
    }
    const report = this.metrics.endCycle(
      before,
      await this.builds.pausedServiceCount(now),
      Math.round(performance.now() - started),
    );
    this.logger.log(formatCycleReport(report));
    return report;
  }
}
