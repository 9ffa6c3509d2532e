import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isPublicAddress } from '../common/net/address-guard.js';
import { DomainError } from '../common/errors/domain-error.js';
import type { ParsedCrate, ParsedSuite } from './crate/ro-crate-parser.js';
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
 * the insert (a 500), SQLite would keep them whole; either way the client deserves a 400.
 */
export function checkStorable(suites: readonly ParsedSuite[]): void {
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
 * Refuses test instances whose url is on a loopback, private, link-local or metadata address
 * (the monitoring would call it). A name that does not resolve now is accepted: it points
 * nowhere today, and test monitoring checks the address again on every call.
 */
export async function checkInstanceAddresses(
  suites: readonly ParsedSuite[],
  resolve: HostLookup = lookupHost,
): Promise<void> {
  const checked = new Map<string, string | null>();
  for (const instance of suites.flatMap((suite) => suite.instances)) {
    const host = new URL(instance.serviceUrl).hostname.replace(/^\[|\]$/g, '');
    if (!checked.has(host)) {
      const addresses = isIP(host) !== 0 ? [host] : await resolve(host);
      checked.set(host, addresses.find((address) => !isPublicAddress(address)) ?? null);
    }
    const refused = checked.get(host);
    if (refused) {
      // The host only: the address a name resolves to would map internal DNS for the caller.
      throw invalid(
        `the test instance ${quote(instance.id)} has a url on a private or reserved address (${host}), which this service does not call`,
      );
    }
  }
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
