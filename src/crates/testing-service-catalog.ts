/**
 * How the registry learns which CI services a crate may name, without depending on test
 * monitoring: monitoring's (global) module exports this token (`useExisting` its registry of
 * clients) and the registry injects it, optionally. Without monitoring, no service is known and a
 * crate with test instances is refused.
 */
export const TESTING_SERVICE_CATALOG = Symbol('TESTING_SERVICE_CATALOG');

/** A CI service as the crates name it. */
export interface CrateServiceType {
  /** The stored and shown type: the term, lower-cased, without its trailing `Service`. */
  readonly type: string;
  /** The term of the Workflow Testing RO-Crate vocabulary (`https://w3id.org/ro/terms/test#<term>`). */
  readonly crateTerm: string;
  /**
   * The form an instance's service URL and resource are stored in, when the service accepts
   * other spellings of them (a web-site URL for its API, a full URL for a resource). Without
   * it they are stored as the crate gives them.
   */
  canonicalTarget?(target: InstanceTarget): InstanceTarget;
  /**
   * Why a resource (in its canonical form) names nothing this service can check, or undefined when
   * it is well formed. Without it every resource is taken; the checks tell.
   */
  resourceProblem?(resource: string): string | undefined;
  /** Other terms crates name it by (managed runs: LifeMonitor's `LifeMonitorService`), matched as `crateTerm` is. */
  readonly otherCrateTerms?: readonly string[];
  /** The resource of an instance whose crate gives none; without one such an instance is never checked. */
  readonly defaultResource?: string;
  /** The service runs the suites itself (API.md 17): its instances are `managed: true`. */
  readonly managed?: boolean;
  /**
   * Whether an instance URL is on a host only this service answers for: an instance whose
   * `runsOn` names no known service runs on the service that claims its URL.
   */
  claimsUrl?(url: string): boolean;
}

/** The registered service a crate's `runsOn` term names (its last segment, any namespace), if any. */
export function serviceTypeNamed(
  services: readonly CrateServiceType[],
  term: string,
): CrateServiceType | undefined {
  const wanted = term.toLowerCase();
  return services.find(
    (service) =>
      service.crateTerm.toLowerCase() === wanted ||
      (service.otherCrateTerms ?? []).some((other) => other.toLowerCase() === wanted),
  );
}

/** Where a test instance runs: the service's API base URL and the resource on it. */
export interface InstanceTarget {
  url: string;
  resource: string;
}

/**
 * The stored form of an instance's URL and resource (see CrateServiceType.canonicalTarget): for
 * crates and for instances added through the API alike.
 */
export function canonicalTarget(
  services: readonly CrateServiceType[],
  type: string,
  target: InstanceTarget,
): InstanceTarget {
  const service = services.find((candidate) => candidate.type === type);
  const canonical = service?.canonicalTarget?.(target) ?? target;
  return { url: canonical.url.replace(/\/+$/, ''), resource: canonical.resource };
}

/** Why `resource` names nothing the service of `type` can check (see CrateServiceType.resourceProblem). */
export function resourceProblem(
  services: readonly CrateServiceType[],
  type: string,
  resource: string,
): string | undefined {
  return services.find((candidate) => candidate.type === type)?.resourceProblem?.(resource);
}

export interface TestingServiceCatalog {
  /** Every registered CI service, in registration order. */
  serviceTypes(): readonly CrateServiceType[];
}
