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

/** How many verified tokens one process keeps; beyond, the least recently used goes. */
export const VERIFIED_LIMIT = 10_000;

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

  /**
   * Verified claims by token string, least recently used first. A token's signature and claims
   * never change, so verifying it again proves nothing new: what can change (the user disabled,
   * the token revoked) is re-checked by AuthService.principal on every request either way.
   */
  private readonly verified = new Map<string, TokenClaims>();

  /**
   * The claims of a token this strategy verified before and that has not expired since, else
   * undefined (the caller then goes through passport, which verifies and answers every failure).
   * Expiry is judged as jsonwebtoken judges it when verifying: against the system time, in
   * whole seconds, without tolerance.
   */
  cachedClaims(token: string): TokenClaims | undefined {
    const claims = this.verified.get(token);
    if (claims === undefined) {
      return undefined;
    }
    this.verified.delete(token);
    if (Math.floor(Date.now() / 1000) >= claims.exp) {
      return undefined;
    }
    this.verified.set(token, claims);
    return claims;
  }

  // After the HTTP server has drained (Nest closes it between the destroy and shutdown hooks).
  onApplicationShutdown(): void {
    passport.unuse(this.passportName);
  }

  validate(request: Request, claims: TokenClaims): AuthUser | Promise<AuthUser> {
    const token = extractToken(request)?.token;
    // Only tokens with an expiry and no not-before are kept: those are the ones cachedClaims judges right.
    if (token !== undefined && typeof claims.exp === 'number' && !('nbf' in claims)) {
      if (this.verified.size >= VERIFIED_LIMIT) {
        const oldest = this.verified.keys().next();
        if (!oldest.done) {
          this.verified.delete(oldest.value);
        }
      }
      this.verified.set(token, claims);
    }
    return this.auth.principal(claims, carriers.get(request) ?? 'bearer');
  }
}
