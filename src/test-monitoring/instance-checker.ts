import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type { ClaimedInstance } from './check-records.js';
import {
  findConfiguredService,
  TestingServiceRegistry,
  type BuildCheckResult,
  type TestingService,
} from './testing-services/testing-service.js';

/** One check of one instance with its service's client; never rejects. */
@Injectable()
export class InstanceChecker {
  private readonly logger = new Logger(InstanceChecker.name);

  constructor(
    private readonly clients: TestingServiceRegistry,
    private readonly config: AppConfig,
  ) {}

  /** The client's outcome, or a failure when there is no client for the type or it threw. */
  async check(
    instance: ClaimedInstance,
    knownBuildIds: ReadonlySet<string> | undefined,
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
        finishedBuildIds,
        now,
        selection: instance.selection,
      });
    } catch (error) {
      // Clients report upstream trouble as values; a rejection is a bug, kept out of the reply.
      this.logger.error({ err: error }, `checking instance ${instance.id} threw`);
      return { kind: 'failed', reason: 'internal error while checking' };
    }
  }
}
