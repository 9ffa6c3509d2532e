import { ConfigError } from './config-error.js';

/**
 * How the example files (`.env.example`, `docker/env.example`, `docker/k8s-secret.example.yaml`)
 * fill a secret they cannot know: `change-me…`, `replace-me…`, `replace-with-…`. A test keeps every
 * secret of those files matched by it.
 */
const PLACEHOLDER = /^(change-me|replace-me|replace-with-)/i;

/** The settings that are secrets as a whole. */
const SECRETS = [
  'JWT_SECRET',
  'ADMIN_PASSWORD',
  'METRICS_TOKEN',
  'GITHUB_WEBHOOK_SECRET',
  'GITLAB_WEBHOOK_SECRET',
] as const;
/** The settings that are URLs with a password in them. */
const URLS_WITH_PASSWORD = ['DATABASE_URL', 'SMTP_URL'] as const;

export function isPlaceholder(value: string): boolean {
  return PLACEHOLDER.test(value.trim());
}

/**
 * Production refuses a secret still holding an example file's placeholder, naming the setting:
 * copied as it is, it would be a secret everybody knows (the admin's password, the key that signs
 * tokens). Outside production they are accepted, so that a fresh clone starts.
 */
export function refusePlaceholderSecrets(settings: Partial<Record<string, string>>): void {
  for (const name of SECRETS) {
    const value = settings[name];
    if (value !== undefined && isPlaceholder(value)) {
      throw new ConfigError(
        name,
        `is the placeholder '${value}' of an example file; production needs a secret of your own`,
      );
    }
  }
  for (const name of URLS_WITH_PASSWORD) {
    const password = passwordOf(settings[name]);
    if (password !== undefined && isPlaceholder(password)) {
      throw new ConfigError(
        name,
        `holds the placeholder password '${password}' of an example file; production needs a password of your own`,
      );
    }
  }
}

function passwordOf(url: string | undefined): string | undefined {
  if (url === undefined) {
    return undefined;
  }
  try {
    const password = new URL(url).password;
    return password === '' ? undefined : decodeURIComponent(password);
  } catch {
    return undefined;
  }
}
