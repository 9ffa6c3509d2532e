import { ConfigError } from './config-error.js';
import { isRecord } from '../common/is-record.js';
import { readYamlFile } from './yaml-file.js';

/** One executor of EXECUTORS_FILE: its name, its type and the type's own settings. */
export interface ExecutorSettings {
  readonly name: string;
  readonly type: string;
  readonly options: Readonly<Record<string, unknown>>;
}

/** An executor's name, as a managed instance's `resource` gives it (API.md 17). */
export const EXECUTOR_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The executor of managed instances whose resource names none, and the only one without EXECUTORS_FILE. */
export const DEFAULT_EXECUTOR = 'local';

const LOCAL: ExecutorSettings = { name: DEFAULT_EXECUTOR, type: 'local', options: {} };

/**
 * The executors of EXECUTORS_FILE (`executors: {<name>: {type, ...}}`), or `local` alone when it is
 * not set. Types are checked against the registered executor types at start-up. A file that
 * defines no `local` keeps the built-in one: instances naming no executor run there.
 */
export function loadExecutors(path: string | undefined, env: NodeJS.ProcessEnv): ExecutorSettings[] {
  if (!path) {
    return [LOCAL];
  }
  const document = readYamlFile('EXECUTORS_FILE', path, env);
  if (!isRecord(document) || !isRecord(document.executors)) {
    throw new ConfigError('EXECUTORS_FILE', `${path} must have an 'executors' mapping of name to settings`);
  }
  const executors: ExecutorSettings[] = [];
  for (const [name, settings] of Object.entries(document.executors)) {
    if (!EXECUTOR_NAME.test(name)) {
      throw new ConfigError('EXECUTORS_FILE', `executor name '${name}' must match [A-Za-z0-9_-]{1,64}`);
    }
    if (!isRecord(settings) || typeof settings.type !== 'string' || settings.type === '') {
      throw new ConfigError('EXECUTORS_FILE', `executor '${name}' needs a 'type'`);
    }
    const { type, ...options } = settings;
    executors.push({ name, type, options });
  }
  if (!executors.some((executor) => executor.name === DEFAULT_EXECUTOR)) {
    executors.unshift(LOCAL);
  }
  return executors;
}
