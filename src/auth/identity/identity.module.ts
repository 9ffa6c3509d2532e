import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Clock } from '../../common/clock.js';
import { AuthModule } from '../auth.module.js';
import { ExpiryJanitor } from '../expiry.janitor.js';
import { IdentityEntity } from './entities/identity.entity.js';
import { SignInFlowEntity } from './entities/sign-in-flow.entity.js';
import { GithubProviderFactory } from './github.provider.js';
import { IdentitiesController } from './identities.controller.js';
import { IdentitiesRepository } from './identities.repository.js';
import { IdentitiesService } from './identities.service.js';
import { IDENTITY_PROVIDER_FACTORIES, type IdentityProviderFactory } from './identity-provider.js';
import { IdentityProviders } from './identity-providers.js';
import { OidcProviderFactory } from './oidc.provider.js';
import { ProviderFetch } from './provider-fetch.js';
import { SeekProviderFactory } from './seek.provider.js';
import { ProvidersController, SignInController } from './sign-in.controller.js';
import { SignInService } from './sign-in.service.js';

/** The provider types of IDENTITY_PROVIDERS_FILE: a new type is one class and a line here. */
const FACTORIES = [OidcProviderFactory, GithubProviderFactory, SeekProviderFactory];

/**
 * Sign-in with identity providers and linked identities (API.md 15). Its own module beside
 * AuthModule (whose token and session it uses): the command-line tool builds AuthModule alone,
 * without providers or registries. A SEEK provider that is a registry reaches the registries
 * through REGISTRY_PEOPLE, provided by their (global) module. The expiry janitor (of sign-in states,
 * and of every module's expiring rows) runs here for the same reason: the tool has no scheduler.
 */
@Module({
  imports: [AuthModule, DiscoveryModule, TypeOrmModule.forFeature([IdentityEntity, SignInFlowEntity])],
  controllers: [SignInController, ProvidersController, IdentitiesController],
  providers: [
    Clock,
    ProviderFetch,
    ...FACTORIES,
    {
      provide: IDENTITY_PROVIDER_FACTORIES,
      useFactory: (...factories: IdentityProviderFactory[]) => factories,
      inject: FACTORIES,
    },
    IdentityProviders,
    IdentitiesRepository,
    IdentitiesService,
    SignInService,
    ExpiryJanitor,
  ],
  exports: [IdentityProviders, IdentitiesService, SignInService],
})
export class IdentityModule {}
