import { ConfigError } from './config-error.js';
import { isRecord } from '../common/is-record.js';
import { readYamlFile } from './yaml-file.js';

/** One cloud of CLOUDS_FILE: its name, its provider type and the provider's own settings. */
export interface CloudSettings {
  readonly name: string;
  readonly type: string;
  readonly options: Readonly<Record<string, unknown>>;
}

export const CLOUD_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The cloud of the paths that name none (API.md 3). */
export const DEFAULT_CLOUD = 'default';

/**
 * The clouds of CLOUDS_FILE, or undefined when it is not set (the orchestration then serves one
 * cloud named `default`). Types are checked against the registered providers at start-up.
 */
export function loadClouds(path: string | undefined, env: NodeJS.ProcessEnv): CloudSettings[] | undefined {
  if (!path) {
    return undefined;
  }
  const document = readYamlFile('CLOUDS_FILE', path, env);
  if (!isRecord(document) || !isRecord(document.clouds)) {
    throw new ConfigError('CLOUDS_FILE', `${path} must have a 'clouds' mapping of name to settings`);
  }
  const clouds: CloudSettings[] = [];
  for (const [name, settings] of Object.entries(document.clouds)) {
    if (!CLOUD_NAME.test(name)) {
      throw new ConfigError('CLOUDS_FILE', `cloud name '${name}' must match [A-Za-z0-9_-]{1,64}`);
    }
    if (!isRecord(settings) || typeof settings.type !== 'string' || settings.type === '') {
      throw new ConfigError('CLOUDS_FILE', `cloud '${name}' needs a 'type'`);
    }
    const { type, ...options } = settings;
    clouds.push({ name, type, options });
  }
  if (clouds.length === 0) {
    throw new ConfigError('CLOUDS_FILE', `${path} defines no cloud`);
  }
  // The paths without a cloud segment (`/api/v1/nodes`) name it (API.md 3): without it they could
  // only fail, request after request, long after a start-up that said nothing.
  if (!clouds.some((cloud) => cloud.name === DEFAULT_CLOUD)) {
    throw new ConfigError(
      'CLOUDS_FILE',
      `${path} has no cloud named '${DEFAULT_CLOUD}' (the paths without a cloud segment use it): ` +
        `rename one of ${clouds.map((cloud) => `'${cloud.name}'`).join(', ')} to '${DEFAULT_CLOUD}', or add a cloud named '${DEFAULT_CLOUD}'`,
    );
  }
  return clouds;
}
