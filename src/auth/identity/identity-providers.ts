import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '../../common/errors/domain-error.js';
import { AppConfig } from '../../config/app-config.js';
import { ConfigMistakes } from '../../config/identity-providers-file.js';
import {
  IDENTITY_PROVIDER_FACTORIES,
  type IdentityProvider,
  type IdentityProviderFactory,
} from './identity-provider.js';

/**
 * The sign-in providers of IDENTITY_PROVIDERS_FILE, each made by the factory of its type; every
 * mistake of the file (an unknown type, a setting a type does not take) stops start-up, all of
 * them listed, one line each.
 */
@Injectable()
export class IdentityProviders {
  private readonly providers = new Map<string, IdentityProvider>();

  constructor(@Inject(IDENTITY_PROVIDER_FACTORIES) factories: IdentityProviderFactory[], config: AppConfig) {
    const byType = new Map(factories.map((factory) => [factory.type, factory]));
    const mistakes: string[] = [];
    for (const settings of config.auth.identityProviders) {
      const factory = byType.get(settings.type);
      if (!factory) {
        mistakes.push(
          `provider '${settings.name}' has unknown type '${settings.type}' (known: ${[...byType.keys()].join(', ')})`,
        );
        continue;
      }
      try {
        this.providers.set(settings.name, factory.create(settings));
      } catch (error) {
        if (!(error instanceof ConfigMistakes)) {
          throw error;
        }
        mistakes.push(...error.mistakes);
      }
    }
    if (mistakes.length > 0) {
      throw new ConfigMistakes('IDENTITY_PROVIDERS_FILE', mistakes);
    }
  }

  /** In the file's order. */
  all(): IdentityProvider[] {
    return [...this.providers.values()];
  }

  get(name: string): IdentityProvider {
    const provider = this.providers.get(name);
    if (!provider) {
      throw new DomainError('not_found', `There is no sign-in provider '${name}'`);
    }
    return provider;
  }
}
