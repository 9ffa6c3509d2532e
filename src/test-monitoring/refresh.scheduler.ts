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
import { CheckStateRepository } from './check-state.repository.js';
import { leaseDeadline, leaseMs, tickMs } from './refresh-decisions.js';
import { formatCycleReport, RefreshMetrics, type CycleReport } from './refresh-metrics.js';
import { RefreshService } from './refresh.service.js';
import { PeriodicReruns } from './periodic-reruns.js';
import { Clock } from '../common/clock.js';

/**
 * Instances claimed at once; a tick claims again while batches come back full. Small batches
 * keep copies sharing the work evenly; the next is claimed before the last one is done.
 */
export const BATCH_SIZE = 250;
/** The next batch is claimed once fewer checks than this are queued or running. */
const REFILL_BELOW = 100;
const TIMER_NAME = 'test-monitoring-refresh';

/**
 * The refresh timer (STYLE.md 7): every second or so, claim the due instances with a database
 * lease (so several copies share the work, each instance checked by one of them), add them to a
 * RefreshRun (which checks and records them), and log the cycle's figures. The arithmetic of
 * ticks and leases is in refresh-decisions.ts. The tick is short and independent of the refresh
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
    private readonly checkStates: CheckStateRepository,
    private readonly refresher: RefreshService,
    private readonly metrics: RefreshMetrics,
    private readonly config: AppConfig,
    private readonly clock: Clock = new Clock(),
    private readonly reruns?: PeriodicReruns,
  ) {}

  /** How often the tick runs (see refresh-decisions.ts). */
  get tickMs(): number {
    return tickMs(this.refresher.intervalMs);
  }

  get leaseMs(): number {
    return leaseMs(this.config.monitoring.upstreamTimeoutMs);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.monitoring.refreshIntervalSeconds === 0) {
      return; // 0 turns the scheduler off
    }
    try {
      await this.refresher.keepToInterval(new Date(this.clock.nowMs()));
    } catch (error) {
      // The checks still run, at the times planned before.
      this.logger.error({ err: error }, 'bringing checks forward to the refresh interval failed');
    }
    this.scheduleTick();
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
    if (this.registry.doesExist('timeout', TIMER_NAME)) {
      this.registry.deleteTimeout(TIMER_NAME);
    }
  }

  /** Waits for the checks in flight and their writes, before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.current?.catch(() => undefined);
  }

  /**
   * The next tick in 0.75–1.25 tick periods. The jitter keeps the ticks of several copies from
   * locking into one phase, where the copy ticking first after most slots would do all the work.
   */
  private scheduleTick(): void {
    if (this.stopping) {
      return;
    }
    const delay = Math.round(this.tickMs * (0.75 + 0.5 * Math.random()));
    const timer = setTimeout(() => {
      if (this.registry.doesExist('timeout', TIMER_NAME)) {
        this.registry.deleteTimeout(TIMER_NAME);
      }
      this.tick()
        .catch((error: unknown) => this.logger.error({ err: error }, 'refresh tick failed'))
        .finally(() => this.scheduleTick());
    }, delay);
    this.registry.addTimeout(TIMER_NAME, timer);
  }

  /** Periodic re-runs (API.md 11); their failure never stops the checks of the cycle. */
  private async startReruns(now: Date): Promise<void> {
    try {
      await this.reruns?.run(now);
    } catch (error) {
      this.logger.error({ err: error }, 'periodic re-runs failed');
    }
  }

  private async cycle(fixedNow: Date | undefined): Promise<CycleReport | undefined> {
    const started = performance.now();
    const before = this.metrics.snapshot();
    const run = this.refresher.start({ stopping: () => this.stopping });
    let claimedAny = false;
    let now = fixedNow ?? new Date(this.clock.nowMs());
    try {
      // Before the claims: the instances it starts builds of are due, and checked in this cycle.
      await this.startReruns(now);
      while (!this.stopping) {
        now = fixedNow ?? new Date(this.clock.nowMs());
        const instances = await this.checkStates.claimDue(now, this.owner, BATCH_SIZE, this.leaseMs);
        if (instances.length === 0) {
          break;
        }
        claimedAny = true;
        await run.add({
          instances,
          now,
          // Wall time on purpose: the run compares it with the time that really passes while it checks.
          leaseDeadline: leaseDeadline(Date.now(), this.leaseMs, this.config.monitoring.upstreamTimeoutMs),
        });
        if (instances.length < BATCH_SIZE) {
          break;
        }
        // Claim the next batch while this one's last checks run, so that no host idles in between.
        await run.whenBacklogBelow(REFILL_BELOW);
      }
    } finally {
      await run.finish();
    }
    if (!claimedAny) {
      return undefined;
    }
    const report = this.metrics.endCycle(
      before,
      await this.checkStates.pausedServiceCount(now),
      Math.round(performance.now() - started),
    );
    this.logger.log(formatCycleReport(report));
    return report;
  }
}
