import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error.js';
import { AppConfig } from '../config/app-config.js';
import { ConfigError } from '../config/config-error.js';
import { MetricsService } from '../metrics/metrics.service.js';
import {
  CLOUD_PROVIDER_FACTORIES,
  type CloudProvider,
  type CloudProviderFactory,
} from './providers/cloud-provider.js';
import { MeteredCloudProvider } from './providers/metered.provider.js';

/** The name a cloud segment defaults to when a path leaves it out. */
export const DEFAULT_CLOUD = 'default';

/**
 * The providers of the clouds of CLOUDS_FILE, each built once at start-up by the factory of its type.
 * A cloud of an unknown type, or one its factory refuses, stops the start-up with a ConfigError.
 */
@Injectable()
export class CloudRegistry {
  private readonly clouds = new Map<string, CloudProvider>();

  constructor(
    @Inject(CLOUD_PROVIDER_FACTORIES) factories: CloudProviderFactory[],
    config: AppConfig,
    metrics: MetricsService,
  ) {
    const byType = new Map(factories.map((factory) => [factory.type, factory]));
    for (const cloud of config.orchestration.clouds) {
      const factory = byType.get(cloud.type);
      if (!factory) {
        throw new ConfigError(
          'CLOUDS_FILE',
          `cloud '${cloud.name}' has unknown type '${cloud.type}' (known: ${[...byType.keys()].join(', ')})`,
        );
      }
      this.clouds.set(cloud.name, new MeteredCloudProvider(factory.create(cloud), metrics));
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
