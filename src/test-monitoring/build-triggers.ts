import { Injectable, Logger } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error.js';
import { minuteUp, utcMinute } from '../common/utc-minute.js';
import { AppConfig } from '../config/app-config.js';
import type { CheckTarget } from '../workflows/index.js';
import { buildSelectionOf } from './build-selection.js';
import { BuildsRepository } from './builds.repository.js';
import { CheckStateRepository } from './check-state.repository.js';
import {
  findConfiguredService,
  TestingServiceRegistry,
  type TestingService,
  type TriggerHow,
  type TriggerResult,
} from './testing-services/testing-service.js';

/** API.md 11: at most one trigger per instance in this long, whoever asks (an owner, an admin, the re-runs). */
export const TRIGGER_SPACING_MS = 10 * 60_000;

/**
 * Starts builds on the CI services (API.md 11), for the trigger route and the periodic re-runs
 * alike: the instance's trigger is taken in the database first (so that copies agree on the
 * 10-minute spacing and on each re-run's due time), then the service's class starts the build; a
 * build that did not start gives the trigger back. What the class answers becomes a DomainError:
 * `unavailable` a 409, a refusal a 502, a rate limit a 503 (and the service's pause, as a check's
 * would be), a timeout a 504.
 */
@Injectable()
export class BuildTriggers {
  private readonly logger = new Logger(BuildTriggers.name);

  constructor(
    private readonly services: TestingServiceRegistry,
    private readonly builds: BuildsRepository,
    private readonly checkStates: CheckStateRepository,
    private readonly config: AppConfig,
  ) {}

  /**
   * Starts a build of the target at `now`, unless a build was triggered on it after `notBefore`
   * (then `rate_limited`, with the seconds until the spacing allows another). Resolves how it was
   * started; throws DomainError otherwise, and then nothing counts as triggered, except for a
   * periodic re-run (`periodic`) the service refused: that one waits for its next due time rather
   * than asking again at every cycle (a rate limit pauses the service instead). A periodic re-run
   * asks the service to re-run the latest build, else to start a fresh one (API.md 16).
   */
  async start(target: CheckTarget, now: Date, notBefore: Date, periodic = false): Promise<TriggerHow> {
    let client: TestingService;
    try {
      client = this.services.for(target.service.type);
    } catch {
      throw new DomainError('conflict', `No client for the testing service type '${target.service.type}'`);
    }
    const at = new Date(Math.floor(now.getTime() / 1000) * 1000);
    const taken = await this.checkStates.takeTrigger(target.id, at, notBefore);
    if (taken === undefined) {
      throw new DomainError(
        'conflict',
        'The test instance is not monitored, so no build can be started on it',
      );
    }
    if (!taken.taken) {
      const wait = taken.last.getTime() + TRIGGER_SPACING_MS - now.getTime();
      throw new DomainError(
        'rate_limited',
        `A build of this test instance was started at ${utcMinute(taken.last)}: ` +
          'at most one start per instance per 10 minutes',
        [],
        Math.max(1, Math.ceil(wait / 1000)),
      );
    }
    let result: TriggerResult;
    try {
      const [latest] = await this.builds.latestBuilds(target.id, 1);
      result = await client.triggerBuild({
        instanceId: target.id,
        serviceUrl: target.service.url,
        resource: target.resource,
        credentials: findConfiguredService(this.config.monitoring.services, client.type, target.service.url),
        selection: buildSelectionOf(target.version),
        latestBuildId: latest?.buildId,
        rerun: periodic,
        now,
      });
    } catch (error) {
      if (!periodic) {
        await this.checkStates.giveBackTrigger(target.id, at, taken.previous);
      }
      throw error;
    }
    if (result.kind === 'triggered') {
      this.logger.log(`started a build (${result.how}) of instance ${target.id} on ${target.service.url}`);
      return result.how;
    }
    if (!periodic || result.kind === 'rate_limited') {
      await this.checkStates.giveBackTrigger(target.id, at, taken.previous);
    }
    if (result.kind === 'rate_limited') {
      this.logger.warn(
        `${target.service.type} service ${target.service.url} is rate-limited: paused until ${result.until.toISOString()}`,
      );
      await this.checkStates.pauseService(target.service.id, result.until);
    }
    throw this.errorOf(result, target, now);
  }

  private errorOf(
    result: Exclude<TriggerResult, { kind: 'triggered' }>,
    target: CheckTarget,
    now: Date,
  ): DomainError {
    const service = `the ${target.service.type} service ${target.service.url}`;
    switch (result.kind) {
      case 'unavailable':
        return new DomainError('conflict', `Cannot start a build: ${result.reason}`);
      case 'refused':
        return new DomainError('upstream_failed', `${service} did not start the build: ${result.reason}`);
      case 'rate_limited':
        return new DomainError(
          'upstream_rate_limited',
          `${service} is rate-limited until ${utcMinute(minuteUp(result.until))}: ${result.reason}`,
          [],
          Math.max(1, Math.ceil((result.until.getTime() - now.getTime()) / 1000)),
        );
      case 'timeout':
        return new DomainError('gateway_timeout', `${service} did not answer in time: ${result.reason}`);
    }
  }
}
