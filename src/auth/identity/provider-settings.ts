import { ConfigMistakes, type IdentityProviderSettings } from '../../config/identity-providers-file.js';
import { isLoopbackHttp } from './provider-fetch.js';

/**
 * Reads one provider's own settings, collecting every mistake; `done()` throws them all at once,
 * one line each, naming the provider and the key.
 */
export class ProviderSettingsReader {
  private readonly mistakes: string[] = [];

  constructor(private readonly settings: IdentityProviderSettings) {}

  /**
   * An https URL (http only on loopback); without trailing slashes unless `exact` (an issuer is
   * compared with the provider's own spelling of it, slash included).
   */
  url(key: string, fallback?: string, exact = false): string {
    const value = this.settings.options[key] ?? fallback;
    if (value === undefined) {
      this.mistake(`needs '${key}' (an https URL)`);
      return '';
    }
    if (typeof value !== 'string') {
      this.mistake(`'${key}' must be a URL`);
      return '';
    }
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      this.mistake(`'${key}' is not a URL`);
      return '';
    }
    if (url.protocol !== 'https:' && !isLoopbackHttp(url)) {
      this.mistake(`'${key}' must be an https URL (plain http only on 127.0.0.1 or localhost)`);
    }
    if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
      this.mistake(`'${key}' must have no query, fragment or credentials`);
    }
    return exact ? value : value.replace(/\/+$/, '');
  }

  /** A space-separated list of scopes, or a YAML list of them. */
  scopes(key: string, fallback: string): string {
    const value = this.settings.options[key];
    if (value === undefined || value === null) {
      return fallback;
    }
    if (typeof value !== 'string' && !Array.isArray(value)) {
      this.mistake(`'${key}' must be scopes (a list, or words separated by spaces)`);
      return fallback;
    }
    const items: unknown[] = Array.isArray(value) ? value : value.split(/\s+/);
    if (!items.every((item) => typeof item === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(item))) {
      this.mistake(`'${key}' must be scopes (a list, or words separated by spaces)`);
      return fallback;
    }
    return (items as string[]).filter((item) => item !== '').join(' ');
  }

  /** Settings this type does not know: a typo (`isuer`) would otherwise be silently ignored. */
  only(...known: string[]): void {
    for (const key of Object.keys(this.settings.options)) {
      if (!known.includes(key)) {
        this.mistake(
          `has '${key}', which a provider of type ${this.settings.type} does not take (it takes ${known.join(', ')})`,
        );
      }
    }
  }

  mistake(detail: string): void {
    this.mistakes.push(`provider '${this.settings.name}' (type ${this.settings.type}) ${detail}`);
  }

  done(): void {
    if (this.mistakes.length > 0) {
      throw new ConfigMistakes('IDENTITY_PROVIDERS_FILE', this.mistakes);
    }
  }
}
