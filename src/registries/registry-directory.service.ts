import { Injectable } from '@nestjs/common';
import type { RegistryDirectory, RegistrySummary } from '../workflows/index.js';
import type { RegistryEntity } from './entities/registry.entity.js';
import { RegistriesRepository } from './registries.repository.js';

/**
 * The registry's view of registries (REGISTRY_DIRECTORY): the `registry` member of workflow
 * replies. Registries are few and never change (they are only deleted, and a deleted registry's
 * workflows no longer name it), so each is read once per process.
 */
@Injectable()
export class RegistryDirectoryService implements RegistryDirectory {
  private readonly known = new Map<number, RegistrySummary>();

  constructor(private readonly repo: RegistriesRepository) {}

  async describe(registryId: number): Promise<RegistrySummary | undefined> {
    const known = this.known.get(registryId);
    if (known) {
      return known;
    }
    const registry = await this.repo.findById(registryId);
    if (!registry) {
      return undefined;
    }
    const summary = summaryOf(registry);
    this.known.set(registryId, summary);
    return summary;
  }

  /** Read each time (one indexed row): a name may pass to a new registry when one is deleted. */
  async idOf(name: string): Promise<number | undefined> {
    return (await this.repo.findByName(name))?.id;
  }

  forget(registryId: number): void {
    this.known.delete(registryId);
  }
}

export function summaryOf(registry: RegistryEntity): RegistrySummary {
  return { uuid: registry.uuid, name: registry.name, type: registry.type, uri: registry.uri };
}
