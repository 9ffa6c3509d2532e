import { randomUUID } from 'node:crypto';
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import passport from 'passport';
import { ApiKeysService } from './api-keys.service.js';
import type { AuthUser } from './auth-user.js';
import { extractApiKey } from './token-carriers.js';

/** The failure of a request that carries no API key: the JWT strategy, next in the chain, decides. */
export const NO_API_KEY = { message: 'No API key' };

/** The failure of a request that carries an API key the wrong way; its message says how to send it. */
export class ApiKeyRefusal {
  constructor(readonly message: string) {}
}

type Verify = (request: Request, key: string, done: (error: unknown, user?: AuthUser) => void) => void;

/** The passport side: finds the key in the request and hands it to `verify`. */
class HeaderApiKeyStrategy extends passport.Strategy {
  override name = 'apikey';

  constructor(private readonly verify: Verify) {
    super();
  }

  override authenticate(request: Request): void {
    const presented = extractApiKey(request);
    if (presented.kind === 'none') {
      this.fail(NO_API_KEY, 401);
      return;
    }
    if (presented.kind === 'malformed') {
      this.fail(new ApiKeyRefusal(presented.reason), 401);
      return;
    }
    this.verify(request, presented.key, (error, user) => {
      if (error || !user) {
        this.error(error ?? new Error('the API key check returned no user'));
        return;
      }
      this.success(user);
    });
  }
}

/**
 * Authenticates requests carrying an API key (`Authorization: ApiKey <key>` or `X-API-Key`).
 * The global guard runs it before the JWT strategy: a request with a key is decided by the key
 * alone (the JWT strategy then finds no token), one without goes on to the JWT strategy.
 */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy(HeaderApiKeyStrategy) implements OnApplicationShutdown {
  /** Per app, as JwtStrategy's: passport's registry of strategies is process-wide. */
  readonly passportName = `apikey-${randomUUID()}`;

  constructor(private readonly keys: ApiKeysService) {
    super();
    passport.use(this.passportName, this);
  }

  onApplicationShutdown(): void {
    passport.unuse(this.passportName);
  }

  /** Rejects with DomainError unauthorized (one message) for a key that is not valid now. */
  validate(_request: Request, key: string): Promise<AuthUser> {
    return this.keys.principal(key);
  }
}
