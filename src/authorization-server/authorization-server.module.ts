import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module.js';
import { Clock } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { AppSecretHasher } from './app-secrets.js';
import { AppTokenStrategy } from './app-token.strategy.js';
import { AppTokensService } from './app-tokens.service.js';
import { ApprovalsController } from './approvals.controller.js';
import { ApprovalsService } from './approvals.service.js';
import { AuthorizationService } from './authorization.service.js';
import { ClientsController } from './clients.controller.js';
import { ClientsRepository } from './clients.repository.js';
import { ClientsService } from './clients.service.js';
import { OAuthClientEntity } from './entities/oauth-client.entity.js';
import { OAuthGrantEntity } from './entities/oauth-grant.entity.js';
import { OAuthTokenEntity } from './entities/oauth-token.entity.js';
import { AuthorizationCodeGrant } from './grants/authorization-code.grant.js';
import { RefreshTokenGrant } from './grants/refresh-token.grant.js';
import { GrantsRepository } from './grants.repository.js';
import { MetadataController } from './metadata.controller.js';

/**
 * The OAuth2 authorization server for other applications (API.md 15): the clients people
 * register and the approvals they give, the rules of the authorization endpoint (whose consent page is status-pages'), the
 * authorization-code and refresh-token grants of `POST /oauth2/token` (AuthModule's, beside the
 * registries' client credentials), the application token strategy of the global guard, and RFC
 * 8414's metadata.
 */
@Module({
  imports: [AuthModule, TypeOrmModule.forFeature([OAuthClientEntity, OAuthGrantEntity, OAuthTokenEntity])],
  controllers: [ClientsController, ApprovalsController, MetadataController],
  providers: [
    Clock,
    {
      provide: AppSecretHasher,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        new AppSecretHasher(config.auth.jwtSecret, 'application secret hashing v1'),
    },
    ClientsRepository,
    GrantsRepository,
    ClientsService,
    ApprovalsService,
    AppTokensService,
    AuthorizationService,
    AuthorizationCodeGrant,
    RefreshTokenGrant,
    AppTokenStrategy,
  ],
  exports: [ClientsService, ApprovalsService, AuthorizationService],
})
export class AuthorizationServerModule {}
