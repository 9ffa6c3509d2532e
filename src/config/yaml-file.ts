import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ConfigError } from './config-error.js';
import { isRecord } from '../common/is-record.js';

/**
 * Reads an operator YAML file, replacing `${VAR}` with the environment's value
 * (a variable that is not set is an error, so a missing secret never becomes "").
 * The file is parsed first and only its strings are expanded: expanding the text would let a
 * value change type (`0123` becomes a number), cut it at a `#`, and expand comments.
 */
export function readYamlFile(setting: string, path: string, env: NodeJS.ProcessEnv): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(setting, `cannot read ${path}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = parse(text) as unknown;
  } catch (error) {
    throw new ConfigError(setting, `${path} is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  const expand = (value: string): string =>
    value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
      const found = env[name];
      if (found === undefined) {
        throw new ConfigError(setting, `${path} refers to \${${name}}, which is not set`);
      }
      return found;
    });
  return expandStrings(parsed, expand);
}

function expandStrings(value: unknown, expand: (text: string) => string): unknown {
  if (typeof value === 'string') {
    return expand(value);
  }
  if (Array.isArray(value)) {
    return value.map((item: unknown) => expandStrings(item, expand));
  }
  if (isRecord(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [expand(key), expandStrings(item, expand)]),
    );
  }
  return value;
}
