import { randomUUID } from 'node:crypto';
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import passport from 'passport';
import type { AuthUser, TokenCarrier } from '../auth/auth-user.js';
import { MarkedTokenStrategy } from '../auth/marked-token.strategy.js';
import { RegisterTokenStrategy, type TokenStrategy } from '../auth/token-strategy.js';
import { isMarkedToken } from './registry-secrets.js';
import { RegistryTokensService } from './registry-tokens.service.js';

/**
 * Registry client tokens (API.md 10.1), accepted by the same carriers as a person's token
 * (`Authorization: Bearer`, `X-Auth-Token`, the session cookie). Tried by the global guard between
 * the API key strategy and the JWT strategy; a token without the registry mark goes on to the JWT
 * strategy.
 */
@RegisterTokenStrategy()
@Injectable()
export class RegistryTokenStrategy
  extends PassportStrategy(MarkedTokenStrategy)
  implements TokenStrategy, OnApplicationShutdown
{
  readonly passportName = `registry-token-${randomUUID()}`;

  constructor(private readonly tokens: RegistryTokensService) {
    super('registry-token', isMarkedToken);
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
