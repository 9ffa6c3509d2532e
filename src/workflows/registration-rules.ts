import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { jobSelectorProblem } from '../common/job-selector.js';
import { isPublicAddress } from '../common/net/address-guard.js';
import { DomainError } from '../common/errors/domain-error.js';
import { findConfiguredService, type TestingServiceCredentials } from '../config/testing-services-file.js';
import {
  type CrateServiceType,
  type ParsedCrate,
  type ParsedSuite,
  type ParsedWorkflow,
  resourceProblem,
} from '../crates/index.js';
import { COLUMN_LENGTHS } from './columns.js';

/** The body's name, else the root dataset's, else the main workflow's. */
export function registrationName(bodyName: string | undefined, crate: ParsedCrate): string {
  const name = bodyName ?? crate.name ?? crate.mainWorkflow?.name;
  if (name === undefined) {
    throw invalid(
      'the workflow has no name: give one in the body (name), or name the root dataset or the main workflow of the crate',
    );
  }
  if (name.length > LIMITS.name) {
    throw invalid(
      `the crate's name is longer than ${LIMITS.name} characters: give a shorter one in the body (name)`,
    );
  }
  return name;
}

const LIMITS = COLUMN_LENGTHS;

/**
 * Refuses crate values the database cannot hold, with the value named: MariaDB would fail
 * the insert (a 500), SQLite would keep them whole; either way the client deserves a 400. So is
 * a resource's job selector that selects nothing (API.md 16: an empty or invalid `#job=` glob).
 */
export function checkStorable(suites: readonly ParsedSuite[], mainWorkflow?: ParsedWorkflow): void {
  tooLong(mainWorkflow?.id, LIMITS.path, 'the main workflow has an @id');
  for (const suite of suites) {
    const where = `the test suite ${quote(suite.id)}`;
    tooLong(suite.id, LIMITS.rocId, `${where} has an @id`);
    tooLong(suite.name, LIMITS.name, `${where} has a name`);
    tooLong(suite.definition?.path, LIMITS.path, `${where} has a definition @id`);
    tooLong(suite.definition?.engineType, LIMITS.engine, `${where} has a test engine type`);
    tooLong(suite.definition?.engineVersion, LIMITS.engine, `${where} has a test engine version`);
    for (const instance of suite.instances) {
      const at = `the test instance ${quote(instance.id)}`;
      tooLong(instance.id, LIMITS.rocId, `${at} has an @id`);
      tooLong(instance.name, LIMITS.name, `${at} has a name`);
      tooLong(instance.resource, LIMITS.resource, `${at} has a resource`);
      tooLong(instance.serviceUrl, LIMITS.serviceUrl, `${at} has a url`);
      const jobs = jobSelectorProblem(instance.resource);
      if (jobs !== undefined) {
        throw invalid(`${at} has a resource whose job selector cannot be used: ${jobs}`);
      }
    }
  }
}

export type HostLookup = (host: string) => Promise<string[]>;

/** How long one name lookup may take; a resolver that does not answer should not hold a registration. */
const LOOKUP_TIMEOUT_MS = 5000;

/** All addresses of a host name; none when it does not resolve (or not in time). */
export const lookupHost: HostLookup = async (host) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), LOOKUP_TIMEOUT_MS);
  });
  try {
    const found = lookup(host, { all: true, verbatim: true }).then(
      (addresses) => addresses.map((entry) => entry.address),
      () => [],
    );
    return await Promise.race([found, timeout]);
  } finally {
    clearTimeout(timer);
  }
};

/**
 * Whether a service of `type` at `url` is one the operator configured (TESTING_SERVICES_FILE):
 * monitoring calls those wherever they are (API.md 2.8), so registration lets them be.
 */
export type ConfiguredService = (type: string, url: string) => boolean;

const NONE_CONFIGURED: ConfiguredService = () => false;

/** The services of TESTING_SERVICES_FILE as a ConfiguredService. */
export function configuredServices(services: readonly TestingServiceCredentials[]): ConfiguredService {
  return (type, url) => findConfiguredService(services, type, url) !== undefined;
}

/**
 * Refuses test instances whose url is on a loopback, private, link-local or metadata address
 * (the monitoring would call it), unless the instance is a configured service: the same type
 * and url, which monitoring trusts. A name that does not resolve now is accepted: it points
 * nowhere today, and test monitoring checks the address again on every call.
 */
export async function checkInstanceAddresses(
  suites: readonly ParsedSuite[],
  resolve: HostLookup = lookupHost,
  configured: ConfiguredService = NONE_CONFIGURED,
): Promise<void> {
  const checked = new Map<string, boolean>();
  for (const instance of suites.flatMap((suite) => suite.instances)) {
    if (configured(instance.serviceType, instance.serviceUrl)) {
      continue;
    }
    const host = await refusedHost(instance.serviceUrl, resolve, checked);
    if (host !== undefined) {
      throw invalid(
        `the test instance ${quote(instance.id)} has a url on a private or reserved address (${host}), which this service does not call`,
      );
    }
  }
}

/** checkInstanceAddresses for one service of `type` at `url` given through the API (field `service.url`). */
export async function checkServiceAddress(
  type: string,
  url: string,
  resolve: HostLookup = lookupHost,
  configured: ConfiguredService = NONE_CONFIGURED,
): Promise<void> {
  if (configured(type, url)) {
    return;
  }
  const host = await refusedHost(url, resolve, new Map());
  if (host !== undefined) {
    const message = `service.url is on a private or reserved address (${host}), which this service does not call`;
    throw new DomainError('invalid_input', message, [{ field: 'service.url', message }]);
  }
}

/**
 * The host of `url` when it is, or resolves to, a non-public address. The host only, never the
 * address: the address a name resolves to would map internal DNS for the caller.
 */
async function refusedHost(
  url: string,
  resolve: HostLookup,
  checked: Map<string, boolean>,
): Promise<string | undefined> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (!checked.has(host)) {
    const addresses = isIP(host) !== 0 ? [host] : await resolve(host);
    checked.set(
      host,
      addresses.some((address) => !isPublicAddress(address)),
    );
  }
  return checked.get(host) ? host : undefined;
}

/**
 * The suites with each instance whose resource its service cannot check (the service's
 * `resourceProblem`) marked as never checked, with the service's reason: it is registered, with
 * an issue, and never checked (API.md 12), instead of being checked in vain at every refresh.
 */
export function markUncheckable(
  suites: readonly ParsedSuite[],
  services: readonly CrateServiceType[],
): ParsedSuite[] {
  return suites.map((suite) => ({
    ...suite,
    instances: suite.instances.map((instance) => {
      if (instance.uncheckedReason !== undefined) {
        return instance;
      }
      const problem = resourceProblem(services, instance.serviceType, instance.resource);
      return problem === undefined
        ? instance
        : {
            ...instance,
            uncheckedReason: `its resource cannot be checked on ${instance.serviceType}: ${problem}`,
          };
    }),
  }));
}

function tooLong(value: string | null | undefined, limit: number, what: string): void {
  if (value !== undefined && value !== null && value.length > limit) {
    throw invalid(`${what} longer than ${limit} characters`);
  }
}

function quote(text: string): string {
  return text.length > 100 ? `'${text.slice(0, 100)}…'` : `'${text}'`;
}

function invalid(detail: string): DomainError {
  return new DomainError('invalid_input', detail);
}
