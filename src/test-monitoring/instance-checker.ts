import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type { ClaimedInstance } from './check-records.js';
import { FailureClassifier } from './failures/failure-classifier.js';
import { LogTail } from './log-tail.js';
import {
  findConfiguredService,
  isFailingStatus,
  TestingServiceRegistry,
  type Build,
  type BuildCheckResult,
  type TestingService,
} from './testing-services/testing-service.js';

/** What is stored of an instance's builds before its check. */
export interface KnownBuilds {
  ids: ReadonlySet<string>;
  /** Builds stored with a failure class: never classified, nor their log read, again. */
  classified: ReadonlySet<string>;
}

/**
 * Logs read per check to classify new failures, newest first: the first check of an instance
 * with a long failing history costs a few requests more, not one per build. Failing builds past
 * it are classified from their CI fields alone.
 */
export const MAX_LOG_READS_PER_CHECK = 2;
/**
 * The tail of a log the classifier reads: the failing step is near the end, and the patterns'
 * cost is that of the tail whatever the log's length.
 */
export const CLASSIFIED_TAIL_BYTES = 64 * 1024;

/** One check of one instance with its service's client; never rejects. */
@Injectable()
export class InstanceChecker {
  private readonly logger = new Logger(InstanceChecker.name);

  constructor(
    private readonly clients: TestingServiceRegistry,
    private readonly config: AppConfig,
    private readonly classifier: FailureClassifier,
  ) {}

  /**
   * The client's outcome, or a failure when there is no client for the type or it threw. New
   * failing builds come with their `failure` (API.md 16), from the fields the client reported and,
   * when those do not decide, the tail of the build's log read from the client once.
   */
  async check(
    instance: ClaimedInstance,
    known: KnownBuilds | undefined,
    now: Date,
    finishedBuildIds?: ReadonlySet<string>,
  ): Promise<BuildCheckResult> {
    let client: TestingService;
    try {
      client = this.clients.for(instance.service.type);
    } catch {
      return { kind: 'failed', reason: `no client for service type '${instance.service.type}'` };
    }
    try {
      const result = await client.latestBuilds({
        instanceId: instance.id,
        serviceUrl: instance.service.url,
        resource: instance.resource,
        etag: instance.etag ?? undefined,
        credentials: this.credentials(client, instance),
        knownBuildIds: known?.ids,
        finishedBuildIds,
        now,
        selection: instance.selection,
      });
      if (result.kind !== 'builds') {
        return result;
      }
      return { ...result, builds: await this.classified(client, instance, result.builds, known, now) };
    } catch (error) {
      // Clients report upstream trouble as values; a rejection is a bug, kept out of the reply.
      this.logger.error({ err: error }, `checking instance ${instance.id} threw`);
      return { kind: 'failed', reason: 'internal error while checking' };
    }
  }

  private credentials(client: TestingService, instance: ClaimedInstance) {
    return findConfiguredService(this.config.monitoring.services, client.type, instance.service.url);
  }

  /** The builds, each failing one not classified before with its `failure`. */
  private async classified(
    client: TestingService,
    instance: ClaimedInstance,
    builds: readonly Build[],
    known: KnownBuilds | undefined,
    now: Date,
  ): Promise<Build[]> {
    let logReads = 0;
    const out: Build[] = [];
    for (const build of builds) {
      if (!isFailingStatus(build.status) || known?.classified.has(build.buildId)) {
        out.push(build);
        continue;
      }
      const fields = build.ciFields ?? [];
      let failure = this.classifier.decidedByFields(fields);
      if (failure === undefined && logReads < MAX_LOG_READS_PER_CHECK) {
        logReads += 1;
        failure = this.classifier.classify({ fields, log: await this.logTail(client, instance, build, now) });
      }
      out.push({ ...build, failure: failure ?? this.classifier.classify({ fields }) });
    }
    return out;
  }

  /** The last CLASSIFIED_TAIL_BYTES of the build's log; undefined when the service gives none. */
  private async logTail(
    client: TestingService,
    instance: ClaimedInstance,
    build: Build,
    now: Date,
  ): Promise<string | undefined> {
    const abort = new AbortController();
    try {
      const result = await client.buildLog({
        instanceId: instance.id,
        serviceUrl: instance.service.url,
        resource: instance.resource,
        credentials: this.credentials(client, instance),
        buildId: build.buildId,
        signal: abort.signal,
        now,
      });
      if (result.kind !== 'log') {
        return undefined;
      }
      const tail = new LogTail(CLASSIFIED_TAIL_BYTES);
      for await (const chunk of result.chunks) {
        tail.push(chunk);
      }
      return tail.bytes().toString('utf8');
    } catch {
      // A log that broke off classifies as no log: the fields still speak.
      return undefined;
    } finally {
      abort.abort();
    }
  }
}
