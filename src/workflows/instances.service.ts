import { Inject, Injectable, Optional } from '@nestjs/common';
import type { AuthUser } from '../auth/auth-user.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { AppConfig } from '../config/app-config.js';
import { COLUMN_LENGTHS } from './columns.js';
import { loaded } from './dto/loaded.js';
import type { InstanceView } from './dto/suite-response.dto.js';
import type { TestInstanceEntity, WorkflowEntity } from './entities/registry.entities.js';
import { checkServiceAddress, configuredServices, lookupHost } from './registration-rules.js';
import { jobSelectorProblem } from '../common/job-selector.js';
import {
  canonicalTarget,
  resourceProblem,
  TESTING_SERVICE_CATALOG,
  type TestingServiceCatalog,
} from '../crates/index.js';
import { canEdit, WorkflowAccess } from './workflow-access.service.js';
import { VersionStatusReader } from './version-status.reader.js';
import { InstancesRepository } from './instances.repository.js';

export interface NewInstanceInput {
  name: string;
  serviceType: string;
  serviceUrl: string;
  resource: string;
  /** LifeMonitor's flag, when the client sent it: it must say what the service type says. */
  managed?: boolean;
}

export interface InstanceChanges {
  name?: string;
  resource?: string;
}

/**
 * Test instances through the API (API.md 7.3): added to a suite by the workflow's owner or an
 * admin with the checks of registration (a known service, the address guard, a resource the
 * service can check), changed and deleted likewise, the crate's own instances too (API.md 7.3 as
 * settled): the stored crate stays as registered, and each instance says where it came from
 * (`origin`: its `roc_instance`, kept through a change).
 */
@Injectable()
export class InstancesService {
  constructor(
    private readonly access: WorkflowAccess,
    private readonly repo: InstancesRepository,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly statuses: VersionStatusReader,
    @Optional()
    @Inject(TESTING_SERVICE_CATALOG)
    private readonly catalog: TestingServiceCatalog | null = null,
  ) {}

  /**
   * Adds an instance (`managed` when its service runs the tests itself) and makes it due for a check at once. Throws not_found
   * for a suite the caller cannot see, forbidden for one they may see but not change, invalid_input for an unknown service type, a URL on a
   * private address (unless allowed), a resource the service cannot check or values too long.
   */
  async add(suiteUuid: string, input: NewInstanceInput, user: AuthUser): Promise<InstanceView> {
    const suite = await this.access.visibleSuite(suiteUuid, user);
    const version = suite.version;
    refuseUnlessEditable(version?.workflow, user);
    if (!version) {
      throw new DomainError('not_found', `No test suite ${suiteUuid}`);
    }
    const services = this.catalog?.serviceTypes() ?? [];
    const known = services.map((service) => service.type);
    if (!known.includes(input.serviceType)) {
      throw invalid(
        'service.type',
        `service.type '${input.serviceType}' is not a testing service of this deployment (one of ${known.join(', ') || 'none'})`,
      );
    }
    const managed = services.find((service) => service.type === input.serviceType)?.managed === true;
    if (input.managed !== undefined && input.managed !== managed) {
      throw invalid(
        'managed',
        managed
          ? `managed must be true (or left out): the ${input.serviceType} service runs the tests itself`
          : `managed must be false (or left out): the ${input.serviceType} service is a CI this service watches; service.type managed runs tests here`,
      );
    }
    const target = canonicalTarget(services, input.serviceType, {
      url: input.serviceUrl,
      resource: input.resource,
    });
    this.checkTarget(input.serviceType, target.url, target.resource);
    // A managed instance's URL names no service this one calls: nothing to guard. A configured
    // service is called wherever it is (API.md 2.8).
    if (!managed && !this.config.registry.allowPrivateNetworkLinks) {
      await checkServiceAddress(
        input.serviceType,
        target.url,
        lookupHost,
        configuredServices(this.config.monitoring.services),
      );
    }
    const uuid = await this.repo.addInstance({
      suiteId: suite.id,
      versionId: version.id,
      name: input.name,
      serviceType: input.serviceType,
      serviceUrl: target.url,
      resource: target.resource,
      managed,
      now: new Date(this.clock.nowMs()),
    });
    return this.visible(uuid, user);
  }

  /**
   * Renames an instance or points it at another resource of the same service (its builds are
   * forgotten and a check is due at once). Throws not_found, forbidden, invalid_input for a
   * resource the service cannot check.
   */
  async update(uuid: string, changes: InstanceChanges, user: AuthUser): Promise<InstanceView> {
    const instance = await this.changeable(uuid, user);
    const stored: InstanceChanges = {};
    if (changes.name !== undefined) {
      stored.name = changes.name;
    }
    if (changes.resource !== undefined) {
      const service = instance.service;
      const services = this.catalog?.serviceTypes() ?? [];
      const type = service?.type ?? '';
      const target = canonicalTarget(services, type, { url: service?.url ?? '', resource: changes.resource });
      if (target.url !== service?.url) {
        throw invalid(
          'resource',
          `the resource names another service (${target.url}) than the instance's (${service?.url ?? '?'}); add a new instance for it`,
        );
      }
      this.checkTarget(type, target.url, target.resource);
      stored.resource = target.resource;
    }
    if (!(await this.repo.updateInstance(instance.id, stored, new Date(this.clock.nowMs())))) {
      throw new DomainError('not_found', `No test instance ${uuid}`);
    }
    return this.visible(uuid, user);
  }

  /** Deletes an instance, with its builds and check state. Throws not_found, forbidden. */
  async remove(uuid: string, user: AuthUser): Promise<void> {
    const instance = await this.changeable(uuid, user);
    if (!(await this.repo.deleteInstance(instance.id))) {
      throw new DomainError('not_found', `No test instance ${uuid}`);
    }
  }

  private async changeable(uuid: string, user: AuthUser): Promise<TestInstanceEntity> {
    const instance = await this.access.visibleInstance(uuid, user);
    const version = instance.suite?.version;
    refuseUnlessEditable(version?.workflow, user);
    if (!version) {
      throw new DomainError('not_found', `No test instance ${uuid}`);
    }
    return instance;
  }

  private checkTarget(type: string, url: string, resource: string): void {
    if (url.length > COLUMN_LENGTHS.serviceUrl) {
      throw invalid('service.url', `service.url is longer than ${COLUMN_LENGTHS.serviceUrl} characters`);
    }
    if (resource.length > COLUMN_LENGTHS.resource) {
      throw invalid('resource', `resource is longer than ${COLUMN_LENGTHS.resource} characters`);
    }
    const jobs = jobSelectorProblem(resource);
    if (jobs !== undefined) {
      throw invalid('resource', jobs);
    }
    const problem = resourceProblem(this.catalog?.serviceTypes() ?? [], type, resource);
    if (problem !== undefined) {
      throw invalid('resource', `the resource cannot be checked on ${type}: ${problem}`);
    }
  }

  private async visible(uuid: string, user: AuthUser): Promise<InstanceView> {
    const instance = await this.access.visibleInstance(uuid, user);
    const version = loaded(instance.suite?.version, 'instance.suite.version');
    return { instance, lastChecks: await this.statuses.lastChecksOf([instance], version.registeredAt) };
  }
}

/**
 * Writes are the owner's and admins' (API.md 5.1). A workflow the caller cannot see was not_found
 * already; one they see (it is public) but may not change is forbidden, as for the workflow itself.
 */
function refuseUnlessEditable(workflow: WorkflowEntity | undefined, user: AuthUser): void {
  if (workflow && !canEdit(workflow, user)) {
    throw new DomainError(
      'forbidden',
      `Only the owner of the workflow ${workflow.uuid} or an admin may change it`,
    );
  }
}

function invalid(field: string, message: string): DomainError {
  return new DomainError('invalid_input', message, [{ field, message }]);
}
