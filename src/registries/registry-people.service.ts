import { Injectable } from '@nestjs/common';
import type { RegistryPeople } from '../auth/identity/registry-people.js';
import type { RegistryEntity } from './entities/registry.entity.js';
import { RegistriesRepository } from './registries.repository.js';

/**
 * REGISTRY_PEOPLE (API.md 15): a SEEK provider whose url is a registry's uri is that registry, so
 * the account the registry made for one of its users and the account of that person signing in
 * with it are one. Registries are few and this runs once per sign-in: they are read whole (the uri
 * is too long a column to index).
 */
@Injectable()
export class RegistryPeopleService implements RegistryPeople {
  constructor(private readonly repo: RegistriesRepository) {}

  async accountOf(uri: string, externalId: string): Promise<number | undefined> {
    const registry = await this.registryAt(uri);
    return registry ? (await this.repo.findIdentity(registry.id, externalId))?.userId : undefined;
  }

  async adopt(uri: string, externalId: string, userId: number): Promise<void> {
    const registry = await this.registryAt(uri);
    if (!registry || (await this.repo.findIdentity(registry.id, externalId))) {
      return;
    }
    await this.repo.adoptPerson(registry.id, userId, externalId);
  }

  private async registryAt(uri: string): Promise<RegistryEntity | undefined> {
    return (await this.repo.list()).find((registry) => registry.uri === uri);
  }
}
