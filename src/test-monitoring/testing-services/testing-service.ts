import { Inject, Injectable, type OnModuleInit, type Provider } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { registrationsProvider } from '../../common/discovered.js';
import type { BuildSelection } from '../build-selection.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { AppConfig } from '../../config/app-config.js';
import { ConfigError } from '../../config/config-error.js';
import {
  CREDENTIAL_KEYS,
  type CredentialKey,
  type TestingServiceCredentials,
} from '../../config/testing-services-file.js';
import {
  BUILD_STATUSES,
  type BuildStatus,
  type CrateServiceType,
  type TestingServiceCatalog,
} from '../../workflows/index.js';

// The registry's vocabulary, re-exported for the clients.
export { BUILD_STATUSES, type BuildStatus };

/** Finished builds have a final outcome; only those count in the aggregate status. */
export function isFinishedStatus(status: BuildStatus): boolean {
  return status !== 'running' && status !== 'waiting';
}

/** One build (or one attempt of a re-run build, where the service keeps attempts), as every client reports it. */
export interface Build {
  /** The build's id as its client derives it from the service's answer (see each client). */
  buildId: string;
  status: BuildStatus;
  /** When the build started (queued builds: when they were queued, as far as the service says). */
  startedAt: Date;
  /** Whole seconds; 0 while the build is waiting or running. */
  durationSeconds: number;
  /** The build's page on the CI service (`links.origin`). */
  url: string;
}

/** Builds asked for when the caller does not say. */
export const DEFAULT_BUILD_LIMIT = 10;
/** The most builds one check asks for (the largest page all three services serve). */
export const MAX_BUILD_LIMIT = 100;

/** What the caller knows about one test instance; clients keep no state between checks. */
export interface BuildCheckRequest {
  /** The API base URL of the service, from the crate (e.g. `https://ci.example.org/`). */
  serviceUrl: string;
  /** The instance's `resource`, e.g. `repos/o/r/actions/workflows/ci.yml`, `repo/o%2Fr`, `job/a/job/b`. */
  resource: string;
  /** The ETag of the last successful answer, sent as `If-None-Match`. */
  etag?: string;
  /**
   * The configured credentials for `serviceUrl` (see `findConfiguredService`). They are sent only
   * when their `url` is the same service URL, so a crate cannot borrow another service's token.
   */
  credentials?: TestingServiceCredentials;
  /** How many of the latest builds to ask for: 1 to MAX_BUILD_LIMIT, default DEFAULT_BUILD_LIMIT. */
  limit?: number;
  /**
   * Build ids stored already for this instance. A client that fetches re-run attempts uses them to fetch earlier re-run attempts
   * only once: finished attempts never change, so one listing request per check is the steady state.
   */
  knownBuildIds?: ReadonlySet<string>;
  /** The time of the check, for relative `Retry-After` values. Default: now. */
  now?: Date;
  /**
   * The builds of the instance's version only (API.md 7.2): clients of services that know refs
   * (GitHub, Travis) ask for the runs of the selection's ref, else of its registration window;
   * others ignore it. Absent: the latest builds, whatever their ref.
   */
  selection?: BuildSelection;
}

/**
 * The outcome of one check. Upstream trouble is a value, never a rejection, so that the
 * scheduler can store it per instance (stale flag, back-off, rate-limit pause).
 */
export type BuildCheckResult =
  /**
   * Builds newest first; `etag` goes into the next request when present. `workflowDisabled`: the
   * service says the workflow no longer runs (a GitHub workflow's `disabled_*` state), when it read that.
   */
  | { kind: 'builds'; builds: Build[]; etag?: string; workflowDisabled?: boolean }
  /** The answer is the same as the one behind the request's `etag`. */
  | { kind: 'not_modified'; workflowDisabled?: boolean }
  /** The service refuses calls until `until`: pause every instance of that service. */
  | { kind: 'rate_limited'; until: Date }
  /** Unreachable, timed out, 4xx/5xx, or an answer that is not what the API documents. */
  | { kind: 'failed'; reason: string; retryAfter?: Date };

/**
 * A client of one CI service (STYLE.md 6): stateless, instance and credentials come from the caller.
 * A new service is one class implementing this, marked @RegisterTestingService(), and one line in a
 * module's providers (docs/extending.md).
 */
export interface TestingService extends CrateServiceType {
  /** The settings of TESTING_SERVICES_FILE it reads; any other one given for it stops the start-up. */
  readonly settings: readonly CredentialKey[];

  /**
   * Fetches the latest builds of one test instance, in one upstream request in the steady state.
   * Never rejects for upstream problems: those are `failed`/`rate_limited` results. Every call has
   * the configured upstream timeout and passes the private-address guard unless the service URL is
   * configured (trusted) or private links are allowed.
   */
  latestBuilds(request: BuildCheckRequest): Promise<BuildCheckResult>;
}

/** Registers a TestingService class: with this decorator and listed in any module's providers. */
export const RegisterTestingService = DiscoveryService.createDecorator<void>();

/** Injection token of the function listing every registered TestingService. */
export const TESTING_SERVICES = Symbol('TESTING_SERVICES');

/** Every registered client, in registration order; complete once the app's providers exist. */
export type TestingServices = () => readonly TestingService[];

/** TESTING_SERVICES as the app provides it: every class marked with RegisterTestingService. */
export const TESTING_SERVICES_PROVIDER: Provider = registrationsProvider(
  TESTING_SERVICES,
  RegisterTestingService,
);

/**
 * Picks the client of a service type, and tells the registry which services crates may name.
 * Built in `onModuleInit` (a client registered by any module exists by then), where it also checks
 * TESTING_SERVICES_FILE against the registered services.
 */
@Injectable()
export class TestingServiceRegistry implements TestingServiceCatalog, OnModuleInit {
  private readonly byType = new Map<string, TestingService>();

  constructor(
    @Inject(TESTING_SERVICES) private readonly services: TestingServices,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.byType.clear();
    for (const service of this.services()) {
      if (this.byType.has(service.type)) {
        throw new Error(`Two testing service clients for type '${service.type}'`);
      }
      this.byType.set(service.type, service);
    }
    this.config.monitoring.services.forEach((configured, index) => this.checkConfigured(configured, index));
  }

  /** The client for `type`; throws DomainError 'invalid_input' for a type no client serves. */
  for(type: string): TestingService {
    const service = this.byType.get(type);
    if (!service) {
      throw new DomainError('invalid_input', `Unknown testing service type '${type}'`);
    }
    return service;
  }

  has(type: string): boolean {
    return this.byType.has(type);
  }

  types(): string[] {
    return [...this.byType.keys()];
  }

  serviceTypes(): CrateServiceType[] {
    return [...this.byType.values()].map((service) => ({
      type: service.type,
      crateTerm: service.crateTerm,
      canonicalTarget: service.canonicalTarget?.bind(service),
      resourceProblem: service.resourceProblem?.bind(service),
    }));
  }

  private checkConfigured(configured: TestingServiceCredentials, index: number): void {
    const where = `services[${index}]`;
    const service = this.byType.get(configured.type);
    if (!service) {
      throw new ConfigError(
        'TESTING_SERVICES_FILE',
        `${where}.type must be one of ${this.types().join(', ')}`,
      );
    }
    for (const key of CREDENTIAL_KEYS) {
      if (configured[key] !== undefined && !service.settings.includes(key)) {
        throw new ConfigError(
          'TESTING_SERVICES_FILE',
          `${where}.${key} is not a setting of ${service.type} (it takes ${service.settings.join(', ')})`,
        );
      }
    }
  }
}

/**
 * A service URL in the form used to compare it with configured ones: origin plus path without
 * trailing slashes, so `https://ci.example.org/` and `https://CI.example.org` are one service.
 */
export function normalizeServiceUrl(url: string): string {
  try {
    const parsed = new URL(url.trim());
    return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
  } catch {
    return url.trim().replace(/\/+$/, '');
  }
}

/** The configured service (credentials, trust) for an instance's service type and URL, if any. */
export function findConfiguredService(
  services: readonly TestingServiceCredentials[],
  type: string,
  url: string,
): TestingServiceCredentials | undefined {
  const wanted = normalizeServiceUrl(url);
  return services.find((service) => service.type === type && normalizeServiceUrl(service.url) === wanted);
}
