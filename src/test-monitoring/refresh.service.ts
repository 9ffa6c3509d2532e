import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { BuildsRepository, type CheckRecord, type ClaimedInstance } from './builds.repository.js';
import { hostKey, runPerKey } from './per-key-pool.js';
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
 * Requests in flight to one CI host from one copy of the service. 16 keeps a cycle of 5,000
 * instances on one host under 10 s at 20 ms per answer while staying far below GitHub's
 * secondary limit of 100 concurrent requests.
 */
export const MAX_CONCURRENCY_PER_HOST = 16;
/** Outcomes written per transaction: one commit per check would make SQLite the bottleneck. */
const WRITE_BATCH = 100;

/** What the scheduler tells a refresh about itself. */
export interface RefreshControl {
  /** True once the copy is shutting down: checks not started yet are released, not made. */
  stopping(): boolean;
  /** `Date.now()` after which this copy's lease may be gone: later checks are left to others. */
  leaseDeadline: number;
}

/**
 * The rules of one refresh: check each claimed instance with its service's client (bounded per
 * host, paused services skipped), turn each outcome into the instance's next check time (the
 * regular slot, or back-off on failure) and write it.
 */
@Injectable()
export class RefreshService {
  private readonly logger = new Logger(RefreshService.name);

  constructor(
    private readonly repo: BuildsRepository,
    private readonly clients: TestingServiceRegistry,
    private readonly metrics: RefreshMetrics,
    private readonly config: AppConfig,
  ) {}

  /** The refresh period; a tick run by hand while the scheduler is off uses the default. */
  get intervalMs(): number {
    const seconds = this.config.monitoring.refreshIntervalSeconds;
    return seconds > 0 ? seconds * 1000 : DEFAULT_REFRESH_INTERVAL_MS;
  }

  /** Checks the claimed instances and writes every outcome; never rejects for upstream trouble. */
  async refresh(claimed: readonly ClaimedInstance[], now: Date, control: RefreshControl): Promise<void> {
    const known = await this.repo.buildIdsOf(claimed.map((instance) => instance.id));
    /** Services rate-limited during this refresh, by type and URL: no further request goes to them. */
    const paused = new Map<string, Date>();
    const writer = new RecordWriter(this.repo, this.logger);

    await runPerKey(
      claimed,
      (instance) => hostKey(instance.service.url),
      MAX_CONCURRENCY_PER_HOST,
      async (instance) => {
        const serviceKey = `${instance.service.type} ${normalizeServiceUrl(instance.service.url)}`;
        const pausedUntil = paused.get(serviceKey);
        if (control.stopping() || Date.now() > control.leaseDeadline || (pausedUntil && pausedUntil > now)) {
          writer.add({ kind: 'released', instanceId: instance.id, leaseToken: instance.leaseToken });
          return;
        }
        const result = await this.check(instance, known.get(instance.id), now);
        this.metrics.countOutcome(instance.service.type, result.kind);
        if (result.kind === 'rate_limited') {
          paused.set(serviceKey, result.until);
          await this.pause(instance, result.until);
        }
        writer.add(this.toRecord(instance, result, now));
      },
    );
    await writer.close();
  }

  private async check(
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

  private async pause(instance: ClaimedInstance, until: Date): Promise<void> {
    this.logger.warn(
      `${instance.service.type} service ${instance.service.url} is rate-limited: paused until ${until.toISOString()}`,
    );
    try {
      await this.repo.pauseService(instance.service.id, until);
    } catch (error) {
      this.logger.error({ err: error }, `could not store the pause of service ${instance.service.id}`);
    }
  }

  private toRecord(instance: ClaimedInstance, result: BuildCheckResult, now: Date): CheckRecord {
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

/** Collects outcomes and writes them a batch per transaction, one transaction at a time. */
class RecordWriter {
  private pending: CheckRecord[] = [];
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly repo: BuildsRepository,
    private readonly logger: Logger,
  ) {}

  add(record: CheckRecord): void {
    this.pending.push(record);
    if (this.pending.length >= WRITE_BATCH) {
      this.flush();
    }
  }

  async close(): Promise<void> {
    this.flush();
    await this.writing;
  }

  private flush(): void {
    if (this.pending.length === 0) {
      return;
    }
    const batch = this.pending;
    this.pending = [];
    this.writing = this.writing.then(() =>
      this.repo.recordChecks(batch).catch((error: unknown) => {
        // The leases run out and the instances are checked again: nothing is lost for good.
        this.logger.error({ err: error }, `could not write ${batch.length} check outcomes`);
      }),
    );
  }
}
