import { randomUUID } from 'node:crypto';
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import passport from 'passport';
import type { AuthUser, TokenCarrier } from '../auth/auth-user.js';
import { extractApiKey, extractToken } from '../auth/token-carriers.js';
import { NOT_THIS_KIND, RegisterTokenStrategy, type TokenStrategy } from '../auth/token-strategy.js';
import { isMarkedToken } from './registry-secrets.js';
import { RegistryTokensService } from './registry-tokens.service.js';

type Verify = (
  request: Request,
  token: string,
  via: TokenCarrier,
  done: (error: unknown, user?: AuthUser) => void,
) => void;

/** The passport side: a marked token from any carrier of a person's token is this strategy's to decide. */
class MarkedTokenStrategy extends passport.Strategy {
  override name = 'registry-token';

  constructor(private readonly verify: Verify) {
    super();
  }

  override authenticate(request: Request): void {
    // A request with an API key is the API key strategy's alone.
    const found = extractApiKey(request).kind === 'none' ? extractToken(request) : undefined;
    if (!found || !isMarkedToken(found.token)) {
      this.fail(NOT_THIS_KIND, 401);
      return;
    }
    this.verify(request, found.token, found.via, (error, user) => {
      if (error || !user) {
        this.error(error ?? new Error('the registry token check returned no caller'));
        return;
      }
      this.success(user);
    });
  }
}

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
    super();
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
