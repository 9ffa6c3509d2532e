import { Injectable, Logger } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error.js';
import { AppConfig } from '../config/app-config.js';
import { RegisteredInstances, type CheckTarget } from '../workflows/index.js';
import { BuildTriggers } from './build-triggers.js';
import { CheckStateRepository } from './check-state.repository.js';

const DAY_MS = 24 * 60 * 60_000;
/** Instances re-run per interval and search; the next cycle takes the rest. */
const RERUNS_PER_SEARCH = 50;
/**
 * Due times are days apart: a search for due re-runs once a minute (of the clock the cycle is
 * given), or once a refresh interval when that is shorter, is soon enough.
 */
export const RERUN_SEARCH_SPACING_MS = 60_000;

/**
 * Periodic re-runs (API.md 11, "software collapse"): at a refresh cycle, a build is started on
 * every instance whose latest build started longer ago than its workflow's `rerun_interval_days`
 * (else RERUN_INTERVAL_DAYS), on its version's ref. The trigger is taken in the database against
 * that due time, so of several copies one starts it, once; instances of a paused service wait.
 * The instances started are made due, so that the cycle's claims check them at once.
 */
@Injectable()
export class PeriodicReruns {
  private readonly logger = new Logger(PeriodicReruns.name);
  private lastSearch?: number;

  constructor(
    private readonly checkStates: CheckStateRepository,
    private readonly registered: RegisteredInstances,
    private readonly triggers: BuildTriggers,
    private readonly config: AppConfig,
  ) {}

  /** Starts the builds due at `now`, once a minute at most; resolves the instances started. */
  async run(now: Date): Promise<number[]> {
    if (
      this.lastSearch !== undefined &&
      Math.abs(now.getTime() - this.lastSearch) < RERUN_SEARCH_SPACING_MS
    ) {
      return [];
    }
    this.lastSearch = now.getTime();
    const intervals = (await this.checkStates.rerunIntervalsInUse()).map((days) => ({ own: true, days }));
    const fallback = this.config.monitoring.rerunIntervalDays;
    if (fallback !== undefined) {
      intervals.push({ own: false, days: fallback });
    }
    const started: number[] = [];
    for (const interval of intervals) {
      const cutoff = new Date(now.getTime() - interval.days * DAY_MS);
      const due = await this.checkStates.dueReruns(interval, cutoff, now, RERUNS_PER_SEARCH);
      if (due.length === 0) {
        continue;
      }
      const targets = await this.registered.checkTargets(due);
      for (const id of due) {
        const target = targets.get(id);
        if (target && (await this.rerun(target, now, cutoff))) {
          started.push(id);
        }
      }
    }
    if (started.length > 0) {
      await this.checkStates.makeDue(started, now);
    }
    return started;
  }

  private async rerun(target: CheckTarget, now: Date, cutoff: Date): Promise<boolean> {
    try {
      const how = await this.triggers.start(target, now, cutoff, true);
      this.logger.log(`periodic re-run (${how}) of instance ${target.id}`);
      return true;
    } catch (error) {
      if (!(error instanceof DomainError)) {
        throw error;
      }
      // Another copy took this due time ('rate_limited'), or the service would not start it.
      if (error.kind !== 'rate_limited') {
        this.logger.warn(`periodic re-run of instance ${target.id} not started: ${error.message}`);
      }
      return false;
    }
  }
}
