import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module.js';
import { IdentityModule } from '../auth/identity/identity.module.js';
import { REGISTRY_PEOPLE } from '../auth/identity/registry-people.js';
import { Clock } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { REGISTRY_DIRECTORY, WorkflowsModule } from '../workflows/index.js';
import { SeekClient } from './clients/seek.client.js';
import { RegistryIdentityEntity } from './entities/registry-identity.entity.js';
import { RegistryTokenEntity } from './entities/registry-token.entity.js';
import { RegistryEntity } from './entities/registry.entity.js';
import { ClientCredentialsGrant } from './oauth2/client-credentials.grant.js';
import { RegistriesController } from './registries.controller.js';
import { RegistriesRepository } from './registries.repository.js';
import { RegistriesService } from './registries.service.js';
import { RegistryDirectoryService } from './registry-directory.service.js';
import { RegistryPeopleService } from './registry-people.service.js';
import { RegistryTokenStrategy } from './registry-token.strategy.js';
import { RegistrySecretHasher, RegistryTokensService } from './registry-tokens.service.js';
import { RegistryUsersController } from './registry-users.controller.js';

/** The clients of each registry type (a new type: one class marked @RegisterRegistryClient(), and a line here). */
const CLIENTS = [SeekClient];

/**
 * Registries (API.md 10.1): their clients and tokens, the registry token strategy of the global
 * guard, the clients that read registries, and the identities of their users. Global so that the
 * registry (workflows/) can inject REGISTRY_DIRECTORY without importing this module (which imports
 * it): the dependency runs one way, the registry's description flows back by token.
 */
@Global()
@Module({
  imports: [
    DiscoveryModule,
    AuthModule,
    IdentityModule,
    WorkflowsModule,
    TypeOrmModule.forFeature([RegistryEntity, RegistryTokenEntity, RegistryIdentityEntity]),
  ],
  controllers: [RegistriesController, RegistryUsersController],
  providers: [
    Clock,
    ...CLIENTS,
    {
      provide: RegistrySecretHasher,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        new RegistrySecretHasher(config.auth.jwtSecret, 'registry secret hashing v1'),
    },
    RegistriesRepository,
    RegistryDirectoryService,
    RegistriesService,
    RegistryTokensService,
    RegistryTokenStrategy,
    ClientCredentialsGrant,
    { provide: REGISTRY_DIRECTORY, useExisting: RegistryDirectoryService },
    RegistryPeopleService,
    { provide: REGISTRY_PEOPLE, useExisting: RegistryPeopleService },
  ],
  exports: [REGISTRY_DIRECTORY, REGISTRY_PEOPLE],
})
export class RegistriesModule {}
