import { Module } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Clock } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { ApiKeyHasher } from './api-key-secrets.js';
import { ApiKeyStrategy } from './api-key.strategy.js';
import { ApiKeysController } from './api-keys.controller.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeysService } from './api-keys.service.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { CurrentUserController } from './current-user.controller.js';
import { ApiKeyEntity } from './entities/api-key.entity.js';
import { RevokedTokenEntity } from './entities/revoked-token.entity.js';
import { UserEntity } from './entities/user.entity.js';
import { JwtAuthGuard } from './jwt-auth.guard.js';
import { JwtStrategy } from './jwt.strategy.js';
import { TokenController } from './oauth2/token.controller.js';
import { TokenGrants } from './oauth2/token-grant.js';
import { PasswordHasher } from './password-hasher.js';
import { RolesGuard } from './roles.guard.js';
import { ScopesGuard } from './scopes.guard.js';
import { UsersController } from './users.controller.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';

@Module({
  imports: [
    DiscoveryModule,
    PassportModule,
    JwtModule.registerAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        secret: config.auth.jwtSecret,
        signOptions: { algorithm: 'HS256' },
        verifyOptions: { algorithms: ['HS256'] },
      }),
    }),
    TypeOrmModule.forFeature([UserEntity, RevokedTokenEntity, ApiKeyEntity]),
  ],
  controllers: [AuthController, UsersController, CurrentUserController, ApiKeysController, TokenController],
  providers: [
    Clock,
    PasswordHasher,
    UsersRepository,
    AuthService,
    UsersService,
    JwtStrategy,
    {
      provide: ApiKeyHasher,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => new ApiKeyHasher(config.auth.jwtSecret),
    },
    ApiKeysRepository,
    ApiKeysService,
    ApiKeyStrategy,
    TokenGrants,
    { provide: APP_GUARD, useClass: JwtAuthGuard },
    { provide: APP_GUARD, useClass: ScopesGuard },
    { provide: APP_GUARD, useClass: RolesGuard },
  ],
  exports: [AuthService, UsersService, ApiKeyHasher, TokenGrants],
})
export class AuthModule {}
