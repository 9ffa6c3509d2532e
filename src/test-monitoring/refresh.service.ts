import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { BuildsRepository } from './builds.repository.js';
import { CheckStateRepository } from './check-state.repository.js';
import { InstanceChecker } from './instance-checker.js';
import { RefreshMetrics } from './refresh-metrics.js';
import { RefreshRun, type ClaimedBatch, type RefreshControl } from './refresh-run.js';
import { DEFAULT_REFRESH_INTERVAL_MS, regularPlanLimit } from './refresh-schedule.js';

/**
 * Starts refresh runs with what they need (the checker, the repositories, the metrics and the
 * interval); the run does the checking and recording, the timer (RefreshScheduler) the claiming.
 */
@Injectable()
export class RefreshService {
  private readonly logger = new Logger(RefreshService.name);

  constructor(
    private readonly builds: BuildsRepository,
    private readonly checkStates: CheckStateRepository,
    private readonly checker: InstanceChecker,
    private readonly metrics: RefreshMetrics,
    private readonly config: AppConfig,
  ) {}

  /** The refresh period; a tick run by hand while the scheduler is off uses the default. */
  get intervalMs(): number {
    const seconds = this.config.monitoring.refreshIntervalSeconds;
    return seconds > 0 ? seconds * 1000 : DEFAULT_REFRESH_INTERVAL_MS;
  }

  /**
   * Checks at the pace of the interval in force (API.md 12, settled details): instances planned
   * under a longer interval set before a restart are due at once, and then keep this one's pace.
   * Resolves how many were brought forward.
   */
  async keepToInterval(now: Date): Promise<number> {
    const moved = await this.checkStates.bringForward(regularPlanLimit(now, this.intervalMs), now);
    if (moved > 0) {
      this.logger.log(`${moved} instances planned under a longer refresh interval are due now`);
    }
    return moved;
  }

  /** Starts a refresh run, to which the timer adds batches as it claims them. */
  start(control: RefreshControl): RefreshRun {
    return new RefreshRun(
      {
        checker: this.checker,
        builds: this.builds,
        checkStates: this.checkStates,
        metrics: this.metrics,
        logger: this.logger,
        intervalMs: this.intervalMs,
        random: Math.random,
        nowMs: Date.now,
      },
      control,
    );
  }

  /** Checks one claimed batch and writes every outcome; never rejects for upstream trouble. */
  async refresh(batch: ClaimedBatch, control: RefreshControl): Promise<void> {
    const run = this.start(control);
    await run.add(batch);
    await run.finish();
  }
}
