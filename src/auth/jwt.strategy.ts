import { createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import passport from 'passport';
import { Strategy } from 'passport-jwt';
import { AppConfig } from '../config/app-config.js';
import type { AuthUser, TokenCarrier } from './auth-user.js';
import { AuthService, type TokenClaims } from './auth.service.js';
import { extractApiKey, extractToken } from './token-carriers.js';

const carriers = new WeakMap<Request, TokenCarrier>();

/**
 * The secret as a KeyObject: given a string, jsonwebtoken first tries to parse it as a PEM
 * public key and catches the failure on every verification, which cost 14 % of a request's
 * CPU. passport-jwt's types predate KeyObject but hand the key to jsonwebtoken, which takes it.
 */
function verificationKey(secret: string): string | Buffer {
  const key: KeyObject = createSecretKey(Buffer.from(secret, 'utf8'));
  return key as never;
}

/**
 * Verifies the HS256 token from any accepted carrier, then re-checks the user in the database.
 * Second in the global guard's chain, after ApiKeyStrategy.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy) implements OnApplicationShutdown {
  /**
   * Passport keeps strategies in one process-wide registry, so a second app in the same
   * process (an embedding, a test) would take over a shared name and this app would verify
   * with the other's secret and database. Each app registers and uses its own name.
   */
  readonly passportName = `jwt-${randomUUID()}`;

  constructor(
    config: AppConfig,
    private readonly auth: AuthService,
  ) {
    super({
      jwtFromRequest: (request: Request) => {
        // A request with an API key is the API key strategy's alone, whatever token it carries too.
        if (extractApiKey(request).kind !== 'none') {
          return null;
        }
        const found = extractToken(request);
        if (!found) {
          return null;
        }
        carriers.set(request, found.via);
        return found.token;
      },
      secretOrKey: verificationKey(config.auth.jwtSecret),
      algorithms: ['HS256'],
      passReqToCallback: true,
    });
    passport.use(this.passportName, this);
  }

  // After the HTTP server has drained (Nest closes it between the destroy and shutdown hooks).
  onApplicationShutdown(): void {
    passport.unuse(this.passportName);
  }

  validate(request: Request, claims: TokenClaims): Promise<AuthUser> {
    return this.auth.principal(claims, carriers.get(request) ?? 'bearer');
  }
}
