import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ConfigError } from './config-error.js';

/**
 * Reads an operator YAML file, replacing `${VAR}` with the environment's value
 * (a variable that is not set is an error, so a missing secret never becomes "").
 */
export function readYamlFile(setting: string, path: string, env: NodeJS.ProcessEnv): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(setting, `cannot read ${path}: ${(error as Error).message}`);
  }
  const expanded = text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
    const value = env[name];
    if (value === undefined) {
      throw new ConfigError(setting, `${path} refers to \${${name}}, which is not set`);
    }
    return value;
  });
  try {
    return parse(expanded) as unknown;
  } catch (error) {
    throw new ConfigError(setting, `${path} is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
