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
  return clouds;
}
