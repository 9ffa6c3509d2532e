import { ConfigError } from './config-error.js';
import { isRecord } from '../common/is-record.js';
import { readYamlFile } from './yaml-file.js';

/** The credential settings of TESTING_SERVICES_FILE; which of them a service takes, its class says. */
export const CREDENTIAL_KEYS = ['token', 'username', 'password'] as const;
export type CredentialKey = (typeof CREDENTIAL_KEYS)[number];

/**
 * Credentials for one CI service, keyed by its API base URL. Configured services are trusted.
 * The type and the settings are checked against the registered CI services at start-up.
 */
export interface TestingServiceCredentials {
  readonly type: string;
  readonly url: string;
  readonly token?: string;
  readonly username?: string;
  readonly password?: string;
}

export function loadTestingServices(
  path: string | undefined,
  env: NodeJS.ProcessEnv,
): TestingServiceCredentials[] {
  if (!path) {
    return [];
  }
  const document = readYamlFile('TESTING_SERVICES_FILE', path, env);
  if (!isRecord(document) || !Array.isArray(document.services)) {
    throw new ConfigError('TESTING_SERVICES_FILE', `${path} must have a 'services' list`);
  }
  return document.services.map((entry: unknown, index) => parseService(entry, index));
}

function parseService(entry: unknown, index: number): TestingServiceCredentials {
  const where = `services[${index}]`;
  if (!isRecord(entry)) {
    throw new ConfigError('TESTING_SERVICES_FILE', `${where} must be a mapping`);
  }
  const { type, url } = entry;
  if (typeof type !== 'string' || type === '') {
    throw new ConfigError('TESTING_SERVICES_FILE', `${where}.type must be the type of a CI service`);
  }
  if (typeof url !== 'string' || !/^https?:\/\/[^/]/.test(url)) {
    throw new ConfigError('TESTING_SERVICES_FILE', `${where}.url must be an http(s) URL`);
  }
  const credentials: { -readonly [K in keyof TestingServiceCredentials]: TestingServiceCredentials[K] } = {
    type,
    url,
  };
  for (const key of CREDENTIAL_KEYS) {
    const value = entry[key];
    if (value !== undefined && typeof value !== 'string') {
      throw new ConfigError('TESTING_SERVICES_FILE', `${where}.${key} must be a string`);
    }
    credentials[key] = value;
  }
  return credentials;
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
