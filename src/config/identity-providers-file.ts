import { ConfigError } from './config-error.js';
import { isRecord } from '../common/is-record.js';
import { readYamlFile } from './yaml-file.js';

const SETTING = 'IDENTITY_PROVIDERS_FILE';

/**
 * One sign-in provider of IDENTITY_PROVIDERS_FILE (API.md 15): what every type has, and the
 * type's own settings (`issuer`, `url`, `scopes`, …), which the provider class of that type checks
 * at start-up.
 */
export interface IdentityProviderSettings {
  readonly name: string;
  readonly type: string;
  /** "Sign in with <label>"; the name when the file gives none. */
  readonly label: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Longest wait for one call to the provider (discovery, token, user). */
  readonly timeoutMs: number;
  readonly options: Readonly<Record<string, unknown>>;
}

/** A provider's name is a path segment (`/oauth2/login/{provider}`) and a stored column. */
export const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

const DEFAULT_TIMEOUT_SECONDS = 10;
const COMMON_KEYS = new Set(['type', 'label', 'client_id', 'client_secret', 'timeout_seconds']);

/**
 * A file's mistakes, all of them, one line each: an operator fixes the file once instead of
 * restarting once per mistake.
 */
export class ConfigMistakes extends ConfigError {
  constructor(
    setting: string,
    readonly mistakes: readonly string[],
  ) {
    super(setting, mistakes.join(`\nInvalid setting ${setting}: `));
  }
}

/**
 * The providers of IDENTITY_PROVIDERS_FILE, in the file's order; none when it is not set
 * (password sign-in only). Throws ConfigMistakes listing every mistake of the common settings;
 * the settings of each type are checked by its provider class when the app starts.
 */
export function loadIdentityProviders(
  path: string | undefined,
  env: NodeJS.ProcessEnv,
): IdentityProviderSettings[] {
  if (!path) {
    return [];
  }
  const document = readYamlFile(SETTING, path, env);
  if (!isRecord(document) || !isRecord(document.providers)) {
    throw new ConfigError(SETTING, `${path} must have a 'providers' mapping of name to settings`);
  }
  const mistakes: string[] = [];
  const providers: IdentityProviderSettings[] = [];
  for (const [name, settings] of Object.entries(document.providers)) {
    const where = `provider '${name}'`;
    if (!PROVIDER_NAME.test(name)) {
      mistakes.push(
        `${where}: the name must be 1-32 of a-z, 0-9, '_' and '-', starting with a letter or digit`,
      );
    }
    if (!isRecord(settings)) {
      mistakes.push(`${where} must be a mapping of settings`);
      continue;
    }
    const text = (key: string): string | undefined => {
      const value = settings[key];
      if (value === undefined || value === null || value === '') {
        return undefined;
      }
      if (typeof value !== 'string' && typeof value !== 'number') {
        mistakes.push(`${where}: '${key}' must be a string`);
        return undefined;
      }
      return String(value);
    };
    const type = text('type');
    const clientId = text('client_id');
    const clientSecret = text('client_secret');
    if (type === undefined) {
      mistakes.push(`${where} needs a 'type' (oidc, github or seek)`);
    }
    if (clientId === undefined) {
      mistakes.push(`${where} needs a 'client_id' (the client registered at the provider)`);
    }
    if (clientSecret === undefined) {
      mistakes.push(`${where} needs a 'client_secret' (write it as \${ENV_NAME} to keep it out of the file)`);
    }
    const timeout = settings.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS;
    if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > 120) {
      mistakes.push(`${where}: 'timeout_seconds' must be an integer between 1 and 120`);
    }
    const options = Object.fromEntries(Object.entries(settings).filter(([key]) => !COMMON_KEYS.has(key)));
    providers.push({
      name,
      type: type ?? '',
      label: text('label') ?? name,
      clientId: clientId ?? '',
      clientSecret: clientSecret ?? '',
      timeoutMs: (typeof timeout === 'number' ? timeout : DEFAULT_TIMEOUT_SECONDS) * 1000,
      options,
    });
  }
  if (providers.length === 0 && mistakes.length === 0) {
    mistakes.push(`${path} defines no provider (leave ${SETTING} unset for password sign-in only)`);
  }
  if (mistakes.length > 0) {
    throw new ConfigMistakes(SETTING, mistakes);
  }
  return providers;
}
