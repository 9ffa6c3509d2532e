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
