import { Inject, Injectable, type OnModuleInit, type Provider } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error.js';
import { registrationsProvider } from '../common/discovered.js';
import { AppConfig } from '../config/app-config.js';
import { DEFAULT_CLOUD, type CloudSettings } from '../config/clouds-file.js';
import { ConfigError } from '../config/config-error.js';
import { MetricsService } from '../metrics/metrics.service.js';
import {
  CLOUD_PROVIDER_FACTORIES,
  RegisterCloudProvider,
  type CloudProvider,
  type CloudProviderFactories,
  type CloudProviderFactory,
} from './providers/cloud-provider.js';
import { MeteredCloudProvider } from './providers/metered.provider.js';

/** The name a cloud segment defaults to when a path leaves it out. */
export { DEFAULT_CLOUD };

/** CLOUD_PROVIDER_FACTORIES as the app provides it: every class marked with RegisterCloudProvider. */
export const CLOUD_PROVIDER_FACTORIES_PROVIDER: Provider = registrationsProvider(
  CLOUD_PROVIDER_FACTORIES,
  RegisterCloudProvider,
);

/**
 * The providers of the clouds of CLOUDS_FILE, each built once at start-up by the factory of its type.
 * A cloud of an unknown type, or one its factory refuses, stops the start-up with a ConfigError.
 * Built in `onModuleInit`: a factory registered by any module exists by then.
 */
@Injectable()
export class CloudRegistry implements OnModuleInit {
  private readonly clouds = new Map<string, CloudProvider>();

  constructor(
    @Inject(CLOUD_PROVIDER_FACTORIES) private readonly factories: CloudProviderFactories,
    private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  onModuleInit(): void {
    const byType = new Map<string, CloudProviderFactory>();
    for (const factory of this.factories()) {
      if (byType.has(factory.type)) {
        throw new Error(`Two cloud provider factories for type '${factory.type}'`);
      }
      byType.set(factory.type, factory);
    }
    this.clouds.clear();
    for (const cloud of this.config.orchestration.clouds ?? [defaultCloud(byType)]) {
      const factory = byType.get(cloud.type);
      if (!factory) {
        throw new ConfigError(
          'CLOUDS_FILE',
          `cloud '${cloud.name}' has unknown type '${cloud.type}' (known: ${[...byType.keys()].join(', ')})`,
        );
      }
      this.clouds.set(cloud.name, new MeteredCloudProvider(factory.create(cloud), this.metrics));
    }
  }

  /** The provider of a configured cloud. Throws DomainError 'invalid_route' (the seed's 500) for any other name. */
  get(name: string): CloudProvider {
    const cloud = this.clouds.get(name);
    if (!cloud) {
      throw new DomainError('invalid_route', `Cloud '${name}' is not valid or the path is wrong`);
    }
    return cloud;
  }

  /** Every configured cloud, in CLOUDS_FILE order. */
  list(): CloudProvider[] {
    return [...this.clouds.values()];
  }
}

/** Without CLOUDS_FILE: one cloud named `default`, of the type whose factory serves it. */
function defaultCloud(byType: ReadonlyMap<string, CloudProviderFactory>): CloudSettings {
  const serving = [...byType.values()].filter((factory) => factory.servesDefaultCloud === true);
  if (serving.length !== 1) {
    throw new ConfigError(
      'CLOUDS_FILE',
      `is not set, and ${serving.length === 0 ? 'no' : 'more than one'} registered cloud provider serves the default cloud`,
    );
  }
  return { name: DEFAULT_CLOUD, type: serving[0].type, options: {} };
}
