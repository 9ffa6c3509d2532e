import { Injectable } from '@nestjs/common';
import type { Viewer } from '../auth/optional-auth.decorator.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { minuteUp, utcMinute } from '../common/utc-minute.js';
import { AppConfig } from '../config/app-config.js';
import { WorkflowAccess, type LastChecks, type TestInstanceEntity } from '../workflows/index.js';
import { buildChanges, type BuildChanges } from './build-changes.js';
import { BuildsRepository, type StoredBuild } from './builds.repository.js';
import { CheckStateRepository } from './check-state.repository.js';
import {
  findConfiguredService,
  TestingServiceRegistry,
  type BuildDetails,
} from './testing-services/testing-service.js';
import { TestStatusService } from './test-status.service.js';

/** A build's changes with the instance and last check its replies show. */
export interface BuildChangesView extends BuildChanges {
  instance: TestInstanceEntity;
  lastChecks: LastChecks;
}

/**
 * API.md 16: what changed between a build and its instance's last passing build before it. The
 * builds come from the database (the last passing one by index); their commits, runners and jobs
 * from the CI service, asked on demand (a user asked: the refresh cycle never reads these).
 */
@Injectable()
export class BuildChangesService {
  constructor(
    private readonly access: WorkflowAccess,
    private readonly builds: BuildsRepository,
    private readonly checkStates: CheckStateRepository,
    private readonly services: TestingServiceRegistry,
    private readonly status: TestStatusService,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /**
   * Throws not_found for an instance the caller cannot see or a build that is not the instance's;
   * upstream_failed, upstream_rate_limited, gateway_timeout when the CI service refuses, limits or
   * does not answer. What the service cannot tell (Jenkins, an expired run) is null. With
   * `workflowUuid` (a status page's address), an instance of another workflow is not_found too,
   * before the CI service is asked.
   */
  async changes(
    instanceUuid: string,
    buildId: string,
    user: Viewer,
    workflowUuid?: string,
  ): Promise<BuildChangesView> {
    const instance = await this.access.visibleInstance(instanceUuid, user);
    if (workflowUuid !== undefined && instance.suite?.version?.workflow?.uuid !== workflowUuid) {
      throw new DomainError('not_found', `The workflow ${workflowUuid} has no test instance ${instanceUuid}`);
    }
    const build = await this.builds.findBuild(instance.id, buildId);
    if (!build) {
      throw new DomainError('not_found', `The test instance ${instanceUuid} has no build '${buildId}'`);
    }
    const lastPassing = (await this.builds.lastPassingBefore(instance.id, build.startedAt)) ?? null;
    // One after the other: GitHub asks integrators not to send concurrent requests.
    const after = await this.details(instance, build);
    const before = lastPassing === null ? undefined : await this.details(instance, lastPassing);
    return {
      ...buildChanges(build, lastPassing, after, before),
      instance,
      lastChecks: await this.status.lastChecks([instance.id]),
    };
  }

  private async details(instance: TestInstanceEntity, build: StoredBuild): Promise<BuildDetails | undefined> {
    const service = instance.service;
    if (!service || !this.services.has(service.type)) {
      return undefined;
    }
    const client = this.services.for(service.type);
    const now = new Date(this.clock.nowMs());
    const result = await client.buildDetails({
      instanceId: instance.id,
      serviceUrl: service.url,
      resource: instance.resource,
      buildId: build.buildId,
      credentials: findConfiguredService(this.config.monitoring.services, client.type, service.url),
      now,
    });
    const where = `the ${service.type} service ${service.url}`;
    switch (result.kind) {
      case 'details':
        return result.details;
      case 'none':
      case 'unavailable':
        return undefined;
      case 'refused':
        throw new DomainError(
          'upstream_failed',
          `${where} did not tell what build '${build.buildId}' ran: ${result.reason}`,
        );
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
