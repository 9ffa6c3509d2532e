import { Injectable, Logger } from '@nestjs/common';
import { ClaimTicker } from '../common/claim-ticker.js';
import { Clock } from '../common/clock.js';
import { Rechecks } from '../test-monitoring/index.js';
import { ManagedRunsRepository } from './managed-runs.repository.js';

/** About every second: a run's new status shows within a second or two, not at the next refresh. */
const TICK_MS = 1_000;
/**
 * Changes are read again this far back: a runner's clock may lag ours, and a change written with
 * an earlier time may commit after a later one was read. Each change is acted on once.
 */
const OVERLAP_MS = 30_000;

/**
 * Checks a managed instance as soon as one of its runs changes (a runner started or finished it,
 * a cancel), so that results need not wait for the next regular refresh (REFRESH_INTERVAL_SECONDS):
 * one indexed read of managed_runs' `changed_at` per tick, and a recheck (Rechecks) of the
 * instances whose runs changed. It claims nothing: every copy reads, and the check itself is
 * claimed once across copies.
 */
@Injectable()
export class ManagedRunWatcher extends ClaimTicker {
  protected readonly logger = new Logger(ManagedRunWatcher.name);
  /** The latest change seen, by the runs' own times. */
  private latest?: Date;
  /**
   * The changes acted on within the overlap: run id → its changed_at and status. The status tells
   * apart two changes within one second: MariaDB's DATETIME keeps whole seconds.
   */
  private readonly seen = new Map<number, { at: number; status: string }>();

  constructor(
    private readonly runs: ManagedRunsRepository,
    private readonly rechecks: Rechecks,
    clock: Clock,
  ) {
    super(clock, TICK_MS);
  }

  /** Changes before the start are the regular checks' (every instance is due at start-up anyway). */
  protected override beforeTicks(): Promise<void> {
    this.latest = new Date(this.clock.nowMs());
    return Promise.resolve();
  }

  protected async run(now: Date): Promise<number> {
    const from = new Date((this.latest ?? now).getTime() - OVERLAP_MS);
    const changed = await this.runs.changedSince(from);
    const instances = new Set<number>();
    for (const run of changed) {
      const at = run.changedAt.getTime();
      const seen = this.seen.get(run.id);
      if (seen?.at !== at || seen.status !== run.status) {
        this.seen.set(run.id, { at, status: run.status });
        instances.add(run.instanceId);
      }
      if (!this.latest || at > this.latest.getTime()) {
        this.latest = run.changedAt;
      }
    }
    for (const [id, { at }] of this.seen) {
      if (at < from.getTime()) {
        this.seen.delete(id);
      }
    }
    await this.rechecks.now([...instances]);
    return instances.size;
  }
}
