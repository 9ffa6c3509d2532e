import { Inject, Injectable, type OnModuleInit, type Provider } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { registrationsProvider } from '../../common/discovered.js';
import type { BuildSelection } from '../build-selection.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { safeHref } from '../../common/safe-href.js';
import { AppConfig } from '../../config/app-config.js';
import { ConfigError } from '../../config/config-error.js';
import {
  CREDENTIAL_KEYS,
  type CredentialKey,
  type TestingServiceCredentials,
} from '../../config/testing-services-file.js';
import { BUILD_STATUSES, type BuildStatus } from '../../workflows/index.js';
import type { BuildFailure } from '../failures/failure-classifier.js';
import { type CrateServiceType, type TestingServiceCatalog } from '../../crates/index.js';

// The registry's vocabulary, re-exported for the clients.
export { BUILD_STATUSES, type BuildStatus };
// How configured services are matched, re-exported for the clients.
export { findConfiguredService, normalizeServiceUrl } from '../../config/testing-services-file.js';

/** Finished builds have a final outcome; only those count in the aggregate status. */
export function isFinishedStatus(status: BuildStatus): boolean {
  return status !== 'running' && status !== 'waiting';
}

/** Failing builds: finished without passing (`failed`, `error`, `aborted`). */
export function isFailingStatus(status: BuildStatus): boolean {
  return isFinishedStatus(status) && status !== 'passed';
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
  /**
   * The build's page (`links.origin`): an absolute URL on the CI service, or a path on this
   * service (a managed run's log), which every view of builds puts after its own base URL
   * (`absoluteLinkOf`): a check has no request to tell this service's address.
   */
  url: string;
  /** The commit it ran on (GitHub's `head_sha`, Travis's `commit.sha`), when the listing says. */
  headSha?: string;
  /**
   * When the instance selects jobs (API.md 16): the matching jobs its status and duration come
   * from, as the CI reported them, for whoever classifies its failure.
   */
  jobs?: BuildJob[];
  /**
   * A failing build's own fields as the service reports them, `name: value` (`conclusion:
   * cancelled`, `state: errored`, `result: ABORTED`): what the failure classifier reads first.
   */
  ciFields?: readonly string[];
  /** Why a failing build failed (API.md 16), once the check classified it. */
  failure?: BuildFailure;
}

/** A step of a job (GitHub's steps; Travis has none), as the CI reports it. */
export interface BuildStep {
  name: string;
  /** In the build statuses' words; `skipped` for a step that did not run. */
  status: JobStatus;
  /** The CI's own word: GitHub's conclusion (its status while unfinished). */
  conclusion: string | null;
}

/** A job's state in the build statuses' words; `skipped` for one that did not run. */
export type JobStatus = BuildStatus | 'skipped';

/** One job of a build, as the CI reports it (API.md 16). */
export interface BuildJob {
  name: string;
  status: JobStatus;
  /** The CI's own word: GitHub's conclusion (its status while unfinished), Travis's state. */
  conclusion: string | null;
  startedAt?: Date;
  finishedAt?: Date;
  /** Its web page, when the CI gives one. */
  url?: string;
  steps: BuildStep[];
  /** What ran it, as far as the job's record tells (GitHub: labels and runner name; Travis: os, dist). */
  runner?: RunnerInfo;
  /** The CI's id of the job, for reading more of it (GitHub's job log). */
  id?: number;
  /**
   * The job's own fields for the failure classifier, `name: value`, where its conclusion alone
   * does not say why it failed (a pipeline job's `status` and `failure_reason`).
   */
  ciFields?: readonly string[];
}

/** The machine a build ran on, as the CI reports it (API.md 16); null where it does not say. */
export interface RunnerInfo {
  /** The operating system (GitHub's log header "Operating System", Travis's `os`). */
  os: string | null;
  /** The image (GitHub's "Runner Image" → "Image:", Travis's `dist`). */
  image: string | null;
  /** The image's version (GitHub's "Runner Image" → "Version:"). */
  version: string | null;
  /** GitHub's `runs-on` labels of the job; empty elsewhere. */
  labels: string[];
}

/** Builds asked for when the caller does not say. */
export const DEFAULT_BUILD_LIMIT = 10;
/** The most builds one check asks for (the largest page all three services serve). */
export const MAX_BUILD_LIMIT = 100;

/** What the caller knows about one test instance; clients keep no state between checks. */
export interface BuildCheckRequest {
  /** The registry's id of the instance: what a service that keeps records per instance (managed runs) reads by. */
  instanceId?: number;
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
  /**
   * Of those, the ones stored finished; given for instances that select jobs (API.md 16): a client
   * reads a build's jobs until it is stored finished (finished jobs never change), and leaves such
   * builds out of its result, so that the stored job-made status stays.
   */
  finishedBuildIds?: ReadonlySet<string>;
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
   * Builds newest first; `etag` goes into the next request when present. `workflowDisabled`, when
   * this check read the workflow's state: true when the service no longer runs the workflow (a
   * GitHub workflow's `disabled_*` state), false when it does; absent when the state was not read.
   */
  | { kind: 'builds'; builds: Build[]; etag?: string; workflowDisabled?: boolean }
  /** The answer is the same as the one behind the request's `etag`. */
  | { kind: 'not_modified'; workflowDisabled?: boolean }
  /** The service refuses calls until `until`: pause every instance of that service. */
  | { kind: 'rate_limited'; until: Date }
  /**
   * Unreachable, timed out (`timeout`), 4xx/5xx, or an answer that is not what the API documents.
   */
  | { kind: 'failed'; reason: string; retryAfter?: Date; timeout?: true };

/** Where a test instance lives: its service's API base URL and the resource there. */
export interface ResourceTarget {
  serviceUrl: string;
  resource: string;
  /** The registry's id of the instance: what a service that keeps records per instance (managed runs) reads by. */
  instanceId?: number;
}

/** How a build was started (API.md 11): a workflow dispatch, a re-run, a Travis request, a Jenkins build. */
export const TRIGGER_HOWS = ['dispatch', 'rerun', 'request', 'build'] as const;
export type TriggerHow = (typeof TRIGGER_HOWS)[number];

/** A trigger of a new build of one test instance. */
export interface TriggerRequest extends ResourceTarget {
  /** The configured credentials for `serviceUrl`, as for a check; a trigger is never sent without. */
  credentials?: TestingServiceCredentials;
  /**
   * The version's refs (API.md 7.2): the build runs on the first that is a branch or tag of the
   * repository, else on its default branch (services that know refs).
   */
  selection?: BuildSelection;
  /** The instance's latest stored build, newest first by start: what a re-run would run again. */
  latestBuildId?: string;
  /**
   * A periodic re-run (API.md 11, 16): a service that re-runs builds runs `latestBuildId` again
   * (the same commit, to see whether what it depends on has changed), and when it refuses to (GitHub:
   * a run created over a month ago, a disabled workflow) starts a fresh build on the version's ref
   * instead. Services without re-runs start a fresh build either way.
   */
  rerun?: boolean;
  /** The time of the trigger, for relative `Retry-After` values. Default: now. */
  now?: Date;
}

/**
 * Upstream trouble of a trigger or a log read, as values: `refused` (the service answered an
 * error, or could not be reached: the reply says its status and message, never a credential),
 * `rate_limited` (pause the service until `until`), `timeout` (no answer within the upstream
 * timeout).
 */
export type UpstreamFault =
  | { kind: 'refused'; reason: string; status?: number }
  | { kind: 'rate_limited'; until: Date; reason: string }
  | { kind: 'timeout'; reason: string };

/**
 * What this service cannot do for this instance here: the operation is not one it has, or it
 * needs credentials that are not configured (the reason names the service URL and the setting).
 * Nothing was sent. The area's filter answers it with a 409.
 */
export interface Unavailable {
  kind: 'unavailable';
  reason: string;
}

export type TriggerResult = { kind: 'triggered'; how: TriggerHow } | Unavailable | UpstreamFault;

/** A read of one build's log. */
export interface BuildLogRequest extends ResourceTarget {
  credentials?: TestingServiceCredentials;
  /** The build, as `Build.buildId` reported it. */
  buildId: string;
  /** Aborted when nobody waits for the log any more: the client stops reading upstream. */
  signal: AbortSignal;
  now?: Date;
}

export type BuildLogResult =
  /**
   * The log as the service sends it: `contentType` from its first answer, `chunks` read from
   * upstream as they are consumed (never all at once), each valid only until the next is asked
   * for (UpstreamHttp.open reuses one buffer). Iterating rejects with a `LogStreamError`
   * when the service stops answering or the request is aborted.
   */
  | { kind: 'log'; contentType: string; chunks: AsyncIterable<Buffer> }
  /** The service keeps no log of this build (expired, never written, or no such build). */
  | { kind: 'none'; reason: string }
  | Unavailable
  | UpstreamFault;

/** A read of what one build ran (API.md 16), on demand: a user asked what changed. */
export interface BuildDetailsRequest extends ResourceTarget {
  credentials?: TestingServiceCredentials;
  /** The build, as `Build.buildId` reported it. */
  buildId: string;
  now?: Date;
}

/** What one build ran: its commit, the repository's web page, the machine and the jobs (selected ones only). */
export interface BuildDetails {
  headSha?: string;
  /** The repository's web page (`https://github.com/o/r`), where commits are compared. */
  repositoryPage?: string;
  runner?: RunnerInfo;
  jobs: BuildJob[];
}

export type BuildDetailsResult =
  | { kind: 'details'; details: BuildDetails }
  /** The service keeps no record of this build. */
  | { kind: 'none'; reason: string }
  | Unavailable
  | UpstreamFault;

/** A request to stop one queued or running build (API.md 17). */
export interface CancelRequest extends ResourceTarget {
  credentials?: TestingServiceCredentials;
  /** The build, as `Build.buildId` reported it. */
  buildId: string;
  now?: Date;
}

export type CancelResult =
  /** The build stops (at once when it had not started, else within a few seconds). */
  | { kind: 'cancelled' }
  /** No such build of the instance, or it ended already: nothing to stop. */
  | { kind: 'none'; reason: string }
  | Unavailable
  | UpstreamFault;

/** A log stream that broke off: the service went silent (`timeout`), failed, or nobody waits (`aborted`). */
export class LogStreamError extends Error {
  constructor(
    readonly reason: 'timeout' | 'refused' | 'aborted',
    message: string,
  ) {
    super(message);
    this.name = 'LogStreamError';
  }
}

/**
 * A client of one CI service (STYLE.md 6): stateless, instance and credentials come from the caller.
 * A new service is one class implementing this, marked @RegisterTestingService(), and one line in a
 * module's providers (docs/extending.md). What a CI service can do is its class's to tell: the
 * scheduler, the trigger and log routes and the status pages only ask it.
 */
export interface TestingService extends CrateServiceType {
  /** The settings of TESTING_SERVICES_FILE it reads; any other one given for it stops the start-up. */
  readonly settings: readonly CredentialKey[];

  /**
   * Fetches the latest builds of one test instance, in one upstream request in the steady state.
   * Never rejects for upstream problems: those are `failed`/`rate_limited` results. Every call has
   * the configured upstream timeout and passes the private-address guard unless the service URL is
   * configured (trusted) or private links are allowed. Each build's `url` is its web page.
   */
  latestBuilds(request: BuildCheckRequest): Promise<BuildCheckResult>;

  /**
   * The web page of the instance's resource (a workflow, a repository, a job) on the service's web
   * site, or undefined when it cannot be told. Makes no request.
   */
  resourcePage(target: ResourceTarget): string | undefined;

  /**
   * Starts a new build of the instance's resource. Sends nothing and answers `unavailable` without
   * credentials configured for the service URL, or when the service cannot start builds. Never
   * rejects for upstream problems; the same timeout and address guard as `latestBuilds`.
   */
  triggerBuild(request: TriggerRequest): Promise<TriggerResult>;

  /**
   * Opens the log of one build (the service's whole log, in its order: the caller keeps what it
   * needs of it). `unavailable` when the service keeps no logs it can serve. Never rejects for
   * upstream problems before the log starts; the headers come within the upstream timeout, and
   * every pause in the log's bytes is bounded by it too.
   */
  buildLog(request: BuildLogRequest): Promise<BuildLogResult>;

  /**
   * What one build ran (API.md 16): its commit, runner and jobs, the instance's job selection
   * applied. A few upstream requests, made only when a user asks; `unavailable` when the service
   * tells none of it. Never rejects for upstream problems; the same timeout and address guard.
   */
  buildDetails(request: BuildDetailsRequest): Promise<BuildDetailsResult>;

  /**
   * Stops a queued or running build (API.md 17). `unavailable` when the service cannot stop
   * builds here; `none` for a build that is not the instance's or has ended. Never rejects for
   * upstream problems; the same timeout and address guard as `triggerBuild`.
   */
  cancelBuild(request: CancelRequest): Promise<CancelResult>;
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

  /**
   * The web page of an instance's resource as its service's class tells it (API.md 5.4), when it
   * is an http(s) URL; undefined for a type no client serves or a page it cannot tell.
   */
  resourcePage(type: string, serviceUrl: string, resource: string): string | undefined {
    return safeHref(this.byType.get(type)?.resourcePage({ serviceUrl, resource }));
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
      otherCrateTerms: service.otherCrateTerms,
      defaultResource: service.defaultResource,
      managed: service.managed,
      claimsUrl: service.claimsUrl?.bind(service),
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
