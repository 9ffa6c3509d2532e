import type { CloudSettings } from '../../config/clouds-file.js';
import { ConfigError } from '../../config/config-error.js';

/** Reads the settings of one cloud of CLOUDS_FILE; every problem is a ConfigError naming the cloud and key. */
export interface SettingsReader {
  /** The value as a string, or undefined when absent or empty; a non-scalar is a ConfigError. */
  readonly optional: (key: string) => string | undefined;
  /** As `optional`, but absent is a ConfigError. */
  readonly required: (key: string) => string;
  /** A list of strings (or one string), empty when absent. */
  readonly list: (key: string) => string[];
  /** A ConfigError about this cloud, e.g. `needs 'auth_url' to be an http(s) URL`. */
  readonly problem: (detail: string) => ConfigError;
}

export function settingsReader(cloud: CloudSettings, type: string): SettingsReader {
  const problem = (detail: string): ConfigError =>
    new ConfigError('CLOUDS_FILE', `cloud '${cloud.name}' (type ${type}) ${detail}`);
  const optional = (key: string): string | undefined => {
    const value = cloud.options[key];
    if (value === undefined || value === null || value === '') {
      return undefined;
    }
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw problem(`needs '${key}' to be a string`);
    }
    return String(value);
  };
  return {
    optional,
    required(key) {
      const value = optional(key);
      if (value === undefined) {
        throw problem(`needs '${key}'`);
      }
      return value;
    },
    list(key) {
      const value = cloud.options[key];
      if (value === undefined || value === null) {
        return [];
      }
      const items = Array.isArray(value) ? value : [value];
      if (!items.every((item): item is string => typeof item === 'string' && item !== '')) {
        throw problem(`needs '${key}' to be a list of strings`);
      }
      return items;
    },
    problem,
  };
}
