import { ConfigError } from './config-error.js';
import { isRecord, readYamlFile } from './yaml-file.js';

export type TestingServiceType = 'github' | 'travis' | 'jenkins';
export const TESTING_SERVICE_TYPES: readonly TestingServiceType[] = ['github', 'travis', 'jenkins'];

/** Credentials for one CI service, keyed by its API base URL. Configured services are trusted. */
export interface TestingServiceCredentials {
  readonly type: TestingServiceType;
  readonly url: string;
  readonly token?: string;
  readonly username?: string;
  readonly password?: string;
}

export function loadTestingServices(
  path: string | undefined,
  githubToken: string | undefined,
  env: NodeJS.ProcessEnv,
): TestingServiceCredentials[] {
  const services: TestingServiceCredentials[] = [];
  if (path) {
    const document = readYamlFile('TESTING_SERVICES_FILE', path, env);
    if (!isRecord(document) || !Array.isArray(document.services)) {
      throw new ConfigError('TESTING_SERVICES_FILE', `${path} must have a 'services' list`);
    }
    document.services.forEach((entry: unknown, index) => services.push(parseService(entry, index)));
  }
  if (githubToken && !services.some((s) => s.type === 'github' && s.url === 'https://api.github.com')) {
    services.push({ type: 'github', url: 'https://api.github.com', token: githubToken });
  }
  return services;
}

function parseService(entry: unknown, index: number): TestingServiceCredentials {
  const where = `services[${index}]`;
  if (!isRecord(entry)) {
    throw new ConfigError('TESTING_SERVICES_FILE', `${where} must be a mapping`);
  }
  const { type, url, token, username, password } = entry;
  if (typeof type !== 'string' || !TESTING_SERVICE_TYPES.includes(type as TestingServiceType)) {
    throw new ConfigError(
      'TESTING_SERVICES_FILE',
      `${where}.type must be one of ${TESTING_SERVICE_TYPES.join(', ')}`,
    );
  }
  if (typeof url !== 'string' || !/^https?:\/\/[^/]/.test(url)) {
    throw new ConfigError('TESTING_SERVICES_FILE', `${where}.url must be an http(s) URL`);
  }
  for (const [key, value] of Object.entries({ token, username, password })) {
    if (value !== undefined && typeof value !== 'string') {
      throw new ConfigError('TESTING_SERVICES_FILE', `${where}.${key} must be a string`);
    }
  }
  return {
    type: type as TestingServiceType,
    url,
    token: token as string | undefined,
    username: username as string | undefined,
    password: password as string | undefined,
  };
}
