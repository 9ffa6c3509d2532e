import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { BuildsRepository } from './builds.repository.js';
import { CheckStateRepository, type CheckRecord, type ClaimedInstance } from './check-state.repository.js';
import { hostKey, KeyedPool } from './per-key-pool.js';
import { RefreshMetrics } from './refresh-metrics.js';
import { DEFAULT_REFRESH_INTERVAL_MS, nextCheckAfterFailure, nextRegularCheck } from './refresh-schedule.js';
import {
  findConfiguredService,
  normalizeServiceUrl,
  TestingServiceRegistry,
  type BuildCheckResult,
  type TestingService,
} from './testing-services/testing-service.js';

/**
 * Requests in flight to one CI host from one copy of the service. At 20 ms per answer, 24 checks
 * 5,000 instances of one host in about 6 s (the goal is 10 s; 8 would be the bare minimum),
 * staying far below GitHub's secondary limit of 100 concurrent requests. A steady state spread
 * over the interval rarely needs more than one or two: the bound matters for catch-up bursts.
 */
export const MAX_CONCURRENCY_PER_HOST = 24;
/** Outcomes written per transaction: one commit per check would make SQLite the bottleneck. */
const WRITE_BATCH = 100;

/** What the scheduler tells a refresh about itself. */
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

/**
 * The rules of a refresh: check each claimed instance with its service's client (bounded per
 * host, paused services skipped), turn each outcome into the instance's next check time (the
 * regular slot, or back-off on failure) and write it.
 */
@Injectable()
export class RefreshService {
  private readonly logger = new Logger(RefreshService.name);

  constructor(
    private readonly builds: BuildsRepository,
    private readonly checkStates: CheckStateRepository,
    private readonly clients: TestingServiceRegistry,
    private readonly metrics: RefreshMetrics,
    private readonly config: AppConfig,
  ) {}

  /** The refresh period; a tick run by hand while the scheduler is off uses the default. */
  get intervalMs(): number {
    const seconds = this.config.monitoring.refreshIntervalSeconds;
    return seconds > 0 ? seconds * 1000 : DEFAULT_REFRESH_INTERVAL_MS;
  }

  /** Starts a refresh run, to which the scheduler adds batches as it claims them. */
  start(control: RefreshControl): RefreshRun {
    return new RefreshRun(this, this.builds, this.checkStates, control, this.logger);
  }

  /** Checks one claimed batch and writes every outcome; never rejects for upstream trouble. */
  async refresh(batch: ClaimedBatch, control: RefreshControl): Promise<void> {
    const run = this.start(control);
    await run.add(batch);
    await run.finish();
  }

  /** One check: the client's outcome, or a failure when there is no client or it threw. */
  async check(
    instance: ClaimedInstance,
    knownBuildIds: ReadonlySet<string> | undefined,
    now: Date,
  ): Promise<BuildCheckResult> {
    let client: TestingService;
    try {
      client = this.clients.for(instance.service.type);
    } catch {
      return { kind: 'failed', reason: `no client for service type '${instance.service.type}'` };
    }
    try {
      return await client.latestBuilds({
        serviceUrl: instance.service.url,
        resource: instance.resource,
        etag: instance.etag ?? undefined,
        credentials: findConfiguredService(
          this.config.monitoring.services,
          client.type,
          instance.service.url,
        ),
        knownBuildIds,
        now,
      });
    } catch (error) {
      // Clients report upstream trouble as values; a rejection is a bug, kept out of the reply.
      this.logger.error({ err: error }, `checking instance ${instance.id} threw`);
      return { kind: 'failed', reason: 'internal error while checking' };
    }
  }

  /** Counts the outcome and, for a rate limit, pauses the service (logged, stored for every copy). */
  async observe(instance: ClaimedInstance, result: BuildCheckResult): Promise<void> {
    this.metrics.countOutcome(instance.service.type, result.kind);
    if (result.kind !== 'rate_limited') {
      return;
    }
    this.logger.warn(
      `${instance.service.type} service ${instance.service.url} is rate-limited: ` +
        `paused until ${result.until.toISOString()}`,
    );
    try {
      await this.checkStates.pauseService(instance.service.id, result.until);
    } catch (error) {
      this.logger.error({ err: error }, `could not store the pause of service ${instance.service.id}`);
    }
  }

  /** What the outcome changes in the instance's row: builds, bookkeeping, the next check. */
  toRecord(instance: ClaimedInstance, result: BuildCheckResult, now: Date): CheckRecord {
    const base = { instanceId: instance.id, leaseToken: instance.leaseToken };
    switch (result.kind) {
      case 'builds':
        return {
          ...base,
          kind: 'builds',
          checkedAt: now,
          nextCheckAt: nextRegularCheck(instance.id, now, this.intervalMs),
          etag: result.etag ?? null,
          builds: result.builds,
        };
      case 'not_modified':
        return {
          ...base,
          kind: 'not_modified',
          checkedAt: now,
          nextCheckAt: nextRegularCheck(instance.id, now, this.intervalMs),
        };
      case 'failed': {
        const failureCount = instance.failureCount + 1;
        return {
          ...base,
          kind: 'failed',
          failureCount,
          reason: result.reason,
          nextCheckAt: nextCheckAfterFailure(
            failureCount,
            now,
            this.intervalMs,
            Math.random(),
            result.retryAfter,
          ),
        };
      }
      case 'rate_limited':
        // Not the instance's failure: it stays due and is checked once its service's pause ends.
        return { ...base, kind: 'released' };
    }
  }
}

/**
 * One tick's checks. Batches are added as they are claimed and share one per-host pool, so the
 * per-host limit holds across batches and no host idles at a batch boundary; outcomes are
 * written a batch of WRITE_BATCH per transaction, one transaction at a time.
 */
export class RefreshRun {
  private readonly pool: KeyedPool;
  /** Services rate-limited during this run, by type and URL: no further request goes to them. */
  private readonly paused = new Map<string, Date>();
  private pending: CheckRecord[] = [];
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly service: RefreshService,
    private readonly builds: BuildsRepository,
    private readonly checkStates: CheckStateRepository,
    private readonly control: RefreshControl,
    private readonly logger: Logger,
  ) {
    this.pool = new KeyedPool(MAX_CONCURRENCY_PER_HOST, (error) =>
      this.logger.error({ err: error }, 'a check failed unexpectedly'),
    );
  }

  /** Checks queued or running. */
  get backlog(): number {
    return this.pool.size;
  }

  /** Queues a claimed batch's checks (after reading the build ids its instances have stored). */
  async add(batch: ClaimedBatch): Promise<void> {
    const known = await this.builds.buildIdsOf(batch.instances.map((instance) => instance.id));
    for (const instance of batch.instances) {
      this.pool.add(hostKey(instance.service.url), () =>
        this.checkOne(instance, known.get(instance.id), batch),
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
    known: ReadonlySet<string> | undefined,
    batch: ClaimedBatch,
  ): Promise<void> {
    const serviceKey = `${instance.service.type} ${normalizeServiceUrl(instance.service.url)}`;
    const pausedUntil = this.paused.get(serviceKey);
    if (
      this.control.stopping() ||
      Date.now() > batch.leaseDeadline ||
      (pausedUntil !== undefined && pausedUntil > batch.now)
    ) {
      this.write({ kind: 'released', instanceId: instance.id, leaseToken: instance.leaseToken });
      return;
    }
    const result = await this.service.check(instance, known, batch.now);
    if (result.kind === 'rate_limited') {
      this.paused.set(serviceKey, result.until);
    }
    await this.service.observe(instance, result);
    this.write(this.service.toRecord(instance, result, batch.now));
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
      this.checkStates.recordChecks(records).catch((error: unknown) => {
        // The leases run out and the instances are checked again: nothing is lost for good.
        this.logger.error({ err: error }, `could not write ${records.length} check outcomes`);
      }),
    );
  }
}
