import type { Logger } from '@nestjs/common';
import type { BuildsRepository } from './builds.repository.js';
import type { CheckRecord, ClaimedInstance } from './check-records.js';
import type { CheckStateRepository } from './check-state.repository.js';
import type { InstanceChecker, KnownBuilds } from './instance-checker.js';
import { hostKey, KeyedPool } from './per-key-pool.js';
import { recordOf, skipReason } from './refresh-decisions.js';
import type { RefreshMetrics } from './refresh-metrics.js';
import { normalizeServiceUrl, type BuildCheckResult } from './testing-services/testing-service.js';
import { splitJobSelector } from '../common/job-selector.js';

function selectsJobs(resource: string): boolean {
  return splitJobSelector(resource).glob !== undefined;
}

/**
 * Requests in flight to one CI host from one copy of the service. At 20 ms per answer, 24 checks
 * 5,000 instances of one host in about 6 s (the goal is 10 s; 8 would be the bare minimum),
 * staying far below the 100 concurrent requests that public CI APIs allow. A steady state spread
 * over the interval rarely needs more than one or two: the bound matters for catch-up bursts.
 */
export const MAX_CONCURRENCY_PER_HOST = 24;
/** Outcomes written per transaction: one commit per check would make SQLite the bottleneck. */
const WRITE_BATCH = 100;

/** What the timer tells a run about the copy. */
export interface RefreshControl {
  /** True once the copy is shutting down: checks not started yet are released, not made. */
  stopping(): boolean;
}

/** A claimed batch: the time it was claimed for, and the `Date.now()` after which its lease may be gone. */
export interface ClaimedBatch {
  instances: readonly ClaimedInstance[];
  now: Date;
  leaseDeadline: number;
}

/** Everything a run uses; it calls nothing else (in particular not whoever started it). */
export interface RefreshRunDependencies {
  checker: Pick<InstanceChecker, 'check'>;
  builds: Pick<BuildsRepository, 'buildIdsOf' | 'finishedBuildIdsOf'>;
  checkStates: Pick<CheckStateRepository, 'recordChecks' | 'pauseService'>;
  metrics: Pick<RefreshMetrics, 'countOutcome'>;
  logger: Pick<Logger, 'warn' | 'error'>;
  /** The refresh period, for the next check times. */
  intervalMs: number;
  /** In [0, 1): spreads back-offs. */
  random: () => number;
  /** `Date.now()`, for the lease deadline. */
  nowMs: () => number;
}

/**
 * One tick's checks: check each claimed instance (bounded per host, paused services skipped)
 * and record each outcome. Batches are added as they are claimed and share one per-host pool,
 * so the per-host limit holds across batches and no host idles at a batch boundary; outcomes
 * are written a batch of WRITE_BATCH per transaction, one transaction at a time.
 */
export class RefreshRun {
  private readonly pool: KeyedPool;
  /** Services rate-limited during this run, by type and URL: no further request goes to them. */
  private readonly paused = new Map<string, Date>();
  private pending: CheckRecord[] = [];
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: RefreshRunDependencies,
    private readonly control: RefreshControl,
  ) {
    this.pool = new KeyedPool(MAX_CONCURRENCY_PER_HOST, (error) =>
      this.deps.logger.error({ err: error }, 'a check failed unexpectedly'),
    );
  }

  /** Checks queued or running. */
  get backlog(): number {
    return this.pool.size;
  }

  /**
   * Queues a claimed batch's checks (after reading the build ids its instances have stored, and
   * which of them are finished for the instances that select jobs).
   */
  async add(batch: ClaimedBatch): Promise<void> {
    const known = await this.deps.builds.buildIdsOf(batch.instances.map((instance) => instance.id));
    const selecting = batch.instances.filter((instance) => selectsJobs(instance.resource));
    const finished = await this.deps.builds.finishedBuildIdsOf(selecting.map((instance) => instance.id));
    for (const instance of batch.instances) {
      this.pool.add(hostKey(instance.service.url), () =>
        this.checkOne(instance, known.get(instance.id), finished.get(instance.id), batch),
      );
    }
  }

  /** Resolves once fewer than `count` checks are queued or running. */
  whenBacklogBelow(count: number): Promise<void> {
    return this.pool.whenBelow(count);
  }

  /** Waits for every check and every write. */
  async finish(): Promise<void> {
    await this.pool.idle();
    this.flush();
    await this.writing;
  }

  private async checkOne(
    instance: ClaimedInstance,
    known: KnownBuilds | undefined,
    finished: ReadonlySet<string> | undefined,
    batch: ClaimedBatch,
  ): Promise<void> {
    const serviceKey = `${instance.service.type} ${normalizeServiceUrl(instance.service.url)}`;
    const skip = skipReason({
      stopping: this.control.stopping(),
      nowMs: this.deps.nowMs(),
      leaseDeadline: batch.leaseDeadline,
      pausedUntil: this.paused.get(serviceKey),
      claimedFor: batch.now,
    });
    if (skip !== undefined) {
      this.write({ kind: 'released', instanceId: instance.id, leaseToken: instance.leaseToken });
      return;
    }
    const result = await this.deps.checker.check(instance, known, batch.now, finished);
    if (result.kind === 'rate_limited') {
      this.paused.set(serviceKey, result.until);
    }
    await this.observe(instance, result);
    this.write(recordOf(instance, result, batch.now, this.deps.intervalMs, this.deps.random()));
  }

  /** Counts the outcome and, for a rate limit, pauses the service (logged, stored for every copy). */
  private async observe(instance: ClaimedInstance, result: BuildCheckResult): Promise<void> {
    this.deps.metrics.countOutcome(instance.service.type, result.kind);
    if (result.kind !== 'rate_limited') {
      return;
    }
    this.deps.logger.warn(
      `${instance.service.type} service ${instance.service.url} is rate-limited: ` +
        `paused until ${result.until.toISOString()}`,
    );
    try {
      await this.deps.checkStates.pauseService(instance.service.id, result.until);
    } catch (error) {
      this.deps.logger.error({ err: error }, `could not store the pause of service ${instance.service.id}`);
    }
  }

  private write(record: CheckRecord): void {
    this.pending.push(record);
    if (this.pending.length >= WRITE_BATCH) {
      this.flush();
    }
  }

  private flush(): void {
    if (this.pending.length === 0) {
      return;
    }
    const records = this.pending;
    this.pending = [];
    this.writing = this.writing.then(() =>
      this.deps.checkStates.recordChecks(records).catch((error: unknown) => {
        // The leases run out and the instances are checked again: nothing is lost for good.
        this.deps.logger.error({ err: error }, `could not write ${records.length} check outcomes`);
      }),
    );
  }
}
