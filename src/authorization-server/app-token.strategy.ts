import { randomUUID } from 'node:crypto';
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import passport from 'passport';
import type { AuthUser, TokenCarrier } from '../auth/auth-user.js';
import { MarkedTokenStrategy } from '../auth/marked-token.strategy.js';
import { RegisterTokenStrategy, type TokenStrategy } from '../auth/token-strategy.js';
import { isAccessTokenMarked } from './app-secrets.js';
import { AppTokensService } from './app-tokens.service.js';

/**
 * Access tokens of applications acting for a user (API.md 15), accepted by the same carriers as a
 * person's token and tried by the global guard beside the registry token strategy: the user, with
 * only the scopes granted.
 */
@RegisterTokenStrategy()
@Injectable()
export class AppTokenStrategy
  extends PassportStrategy(MarkedTokenStrategy)
  implements TokenStrategy, OnApplicationShutdown
{
  readonly passportName = `app-token-${randomUUID()}`;

  constructor(private readonly tokens: AppTokensService) {
    super('app-token', isAccessTokenMarked);
    passport.use(this.passportName, this);
  }

  onApplicationShutdown(): void {
    passport.unuse(this.passportName);
  }

  /** Rejects with DomainError unauthorized for a token that is not valid now. */
  validate(_request: Request, token: string, via: TokenCarrier): Promise<AuthUser> {
    return this.tokens.principal(token, via);
  }
}
