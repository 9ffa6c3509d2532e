import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../auth/auth-user.js';
import type { Viewer } from '../auth/optional-auth.decorator.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { minuteUp, utcMinute } from '../common/utc-minute.js';
import { AppConfig } from '../config/app-config.js';
import { RegisteredInstances, WorkflowAccess } from '../workflows/index.js';
import { BuildTriggers, TRIGGER_SPACING_MS } from './build-triggers.js';
import { BuildsRepository } from './builds.repository.js';
import { CheckStateRepository } from './check-state.repository.js';
import { LogTail } from './log-tail.js';
import { Rechecks } from './rechecks.js';
import {
  findConfiguredService,
  LogStreamError,
  TestingServiceRegistry,
  type BuildLogResult,
  type TestingService,
  type TriggerHow,
} from './testing-services/testing-service.js';

/** A build started through the API (API.md 11). */
export interface StartedBuild {
  instanceUuid: string;
  requested: Date;
  how: TriggerHow;
}

/** A build asked to stop (API.md 17). */
export interface CancelledBuild {
  instanceUuid: string;
  buildId: string;
  requested: Date;
}

/** The tail of a build's log, as the log route sends it. */
export interface BuildLogTail {
  contentType: string;
  body: Buffer;
}

/**
 * Tests that run, through the API (API.md 11): a build started by the owner of a workflow or an
 * admin, and checked for at once, so that the next check finds the new run; and the tail of a
 * build's log, read from its CI service as it comes, for whoever may see the build.
 */
@Injectable()
export class TestRunsService {
  constructor(
    private readonly access: WorkflowAccess,
    private readonly registered: RegisteredInstances,
    private readonly triggers: BuildTriggers,
    private readonly rechecks: Rechecks,
    private readonly builds: BuildsRepository,
    private readonly checkStates: CheckStateRepository,
    private readonly services: TestingServiceRegistry,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /**
   * The last MAX_LOG_BYTES of a build's log (from the next line break within its first KiB when
   * the log is longer), read from the CI service as it comes and never held whole. `signal` aborts
   * the reading (the client went away). Throws not_found for an instance the caller cannot see, a
   * build that is not the instance's, a log the service keeps none of or that is not text;
   * conflict when the service serves no logs; upstream_failed, upstream_rate_limited,
   * gateway_timeout for the service's trouble.
   */
  async log(instanceUuid: string, buildId: string, user: Viewer, signal: AbortSignal): Promise<BuildLogTail> {
    const instance = await this.access.visibleInstance(instanceUuid, user);
    const build = await this.builds.findBuild(instance.id, buildId);
    const service = instance.service;
    if (!build || !service) {
      throw new DomainError('not_found', `The test instance ${instanceUuid} has no build '${buildId}'`);
    }
    let client: TestingService;
    try {
      client = this.services.for(service.type);
    } catch {
      throw new DomainError('conflict', `No client for the testing service type '${service.type}'`);
    }
    const now = new Date(this.clock.nowMs());
    const result = await client.buildLog({
      instanceId: instance.id,
      serviceUrl: service.url,
      resource: instance.resource,
      buildId,
      credentials: findConfiguredService(this.config.monitoring.services, client.type, service.url),
      signal,
      now,
    });
    const where = `the ${service.type} service ${service.url}`;
    switch (result.kind) {
      case 'log':
        return this.tail(result, buildId, build.url, where);
      case 'none':
        throw new DomainError('not_found', `No log of build '${buildId}': ${result.reason}`);
      case 'unavailable':
        throw new DomainError('conflict', `No log of build '${buildId}' here: ${result.reason}`);
      case 'refused':
        throw new DomainError('upstream_failed', `${where} did not send the log: ${result.reason}`);
      case 'rate_limited':
        await this.checkStates.pauseService(service.id, result.until);
        throw new DomainError(
          'upstream_rate_limited',
          `${where} is rate-limited until ${utcMinute(minuteUp(result.until))}: ${result.reason}`,
          [],
          Math.max(1, Math.ceil((result.until.getTime() - now.getTime()) / 1000)),
        );
      case 'timeout':
        throw new DomainError('gateway_timeout', `${where} did not answer in time: ${result.reason}`);
    }
  }

  private async tail(
    log: Extract<BuildLogResult, { kind: 'log' }>,
    buildId: string,
    page: string,
    where: string,
  ): Promise<BuildLogTail> {
    const type = log.contentType.toLowerCase();
    if (!type.startsWith('text/')) {
      // Started and ended at its first chunk, so that it lets go of its connection now.
      try {
        for await (const _chunk of log.chunks) {
          break;
        }
      } catch {
        // A stream that broke off changes nothing: the log is not served either way.
      }
      throw new DomainError(
        'not_found',
        `The log of build '${buildId}' is not text (${log.contentType}): see it on its CI page ${page}`,
      );
    }
    const tail = new LogTail(this.config.monitoring.maxLogBytes);
    try {
      for await (const chunk of log.chunks) {
        tail.push(chunk);
      }
    } catch (error) {
      if (!(error instanceof LogStreamError)) {
        throw error;
      }
      throw new DomainError(
        error.reason === 'timeout' ? 'gateway_timeout' : 'upstream_failed',
        `${where} broke off the log: ${error.message}`,
      );
    }
    return { contentType: 'text/plain; charset=utf-8', body: tail.bytes() };
  }

  /**
   * Starts a build of the instance on its CI service. Throws not_found for an instance the caller
   * cannot see, forbidden for one they only see, and what BuildTriggers.start throws.
   */
  async trigger(instanceUuid: string, user: AuthUser): Promise<StartedBuild> {
    const instance = await this.access.editableInstance(instanceUuid, user);
    if (instance.uncheckedReason !== null) {
      // Registered from a crate that gave it nothing its service can check (API.md 12).
      throw new DomainError(
        'conflict',
        `The test instance ${instanceUuid} is never checked (${instance.uncheckedReason}): no build can be started on it`,
      );
    }
    const target = (await this.registered.checkTargets([instance.id])).get(instance.id);
    if (!target) {
      throw new DomainError('not_found', `No test instance ${instanceUuid}`);
    }
    const now = new Date(this.clock.nowMs());
    const how = await this.triggers.start(target, now, new Date(now.getTime() - TRIGGER_SPACING_MS));
    await this.rechecks.now([instance.id]);
    return { instanceUuid, requested: now, how };
  }

  /**
   * Stops a queued or running build of the instance (API.md 17); it is checked at once, so that
   * its end shows as soon as its runner records it. Throws not_found for an instance the caller
   * cannot see or a build that is not the instance's, forbidden for one they only see, conflict
   * for a build that ended or a service that cannot stop builds.
   */
  async cancel(instanceUuid: string, buildId: string, user: AuthUser): Promise<CancelledBuild> {
    const instance = await this.access.editableInstance(instanceUuid, user);
    const service = instance.service;
    if (!service || !this.services.has(service.type)) {
      throw new DomainError('conflict', `No client for the testing service type '${service?.type ?? '?'}'`);
    }
    const client = this.services.for(service.type);
    const now = new Date(this.clock.nowMs());
    const result = await client.cancelBuild({
      instanceId: instance.id,
      serviceUrl: service.url,
      resource: instance.resource,
      buildId,
      credentials: findConfiguredService(this.config.monitoring.services, client.type, service.url),
      now,
    });
    const where = `the ${service.type} service ${service.url}`;
    switch (result.kind) {
      case 'cancelled':
        await this.rechecks.now([instance.id]);
        return { instanceUuid, buildId, requested: now };
      case 'none': {
        const stored = await this.builds.findBuild(instance.id, buildId);
        throw stored
          ? new DomainError('conflict', `The build '${buildId}' cannot be stopped: ${result.reason}`)
          : new DomainError('not_found', `The test instance ${instanceUuid} has no build '${buildId}'`);
      }
      case 'unavailable':
        throw new DomainError('conflict', `Cannot stop build '${buildId}': ${result.reason}`);
      case 'refused':
        throw new DomainError('upstream_failed', `${where} did not stop the build: ${result.reason}`);
      case 'rate_limited':
        await this.checkStates.pauseService(service.id, result.until);
        throw new DomainError(
          'upstream_rate_limited',
          `${where} is rate-limited until ${utcMinute(minuteUp(result.until))}: ${result.reason}`,
          [],
          Math.max(1, Math.ceil((result.until.getTime() - now.getTime()) / 1000)),
        );
      case 'timeout':
        throw new DomainError('gateway_timeout', `${where} did not answer in time: ${result.reason}`);
    }
  }
}
