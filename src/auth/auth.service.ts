import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import type { CookieOptions } from 'express';
import { AppConfig } from '../config/app-config.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import type { AuthUser, TokenCarrier } from './auth-user.js';
import { LoginAttempts, type Admission } from './login-attempts.js';
import type { UserEntity } from './entities/user.entity.js';
import { PasswordHasher } from './password-hasher.js';
import type { Role } from './roles.js';
import { UsersRepository } from './users.repository.js';

export interface TokenClaims {
  sub: string;
  username: string;
  roles: Role[];
  jti: string;
  iat: number;
  exp: number;
}

export interface IssuedToken {
  token: string;
  expiresIn: number;
  user: { id: number; username: string; roles: Role[] };
}

interface CachedPrincipal {
  user: { id: number; username: string; roles: Role[]; active: boolean } | undefined;
  until: number;
}

const BAD_CREDENTIALS = 'Wrong username or password, or the account is disabled';
/** How long a user's state and a token's revocation may be served from memory (API.md: at most 60 s). */
export const PRINCIPAL_TTL_MS = 30_000;
const CACHE_LIMIT = 10_000;

@Injectable()
export class AuthService {
  private readonly attempts: LoginAttempts;
  private readonly users = new Map<number, CachedPrincipal>();
  private readonly revocations = new Map<string, { revoked: boolean; until: number }>();

  constructor(
    private readonly repo: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly jwt: JwtService,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.attempts = new LoginAttempts(config.auth.rateLimit, 60_000, () => clock.nowMs());
  }

  /**
   * Checks a username and password and issues a token. Only failed attempts (not malformed
   * requests, not successes) count against the per-address and per-username limits.
   */
  async login(username: string, password: string, address: string): Promise<IssuedToken> {
    const admission = await this.attempts.enter([`address:${address}`, `username:${username.toLowerCase()}`]);
    if (!admission.admitted) {
      throw new DomainError(
        'rate_limited',
        'Too many failed login attempts; try again later',
        [],
        admission.retryAfterMs / 1000,
      );
    }
    let failed = false;
    try {
      const user = await this.repo.findByUsername(username);
      const valid = user
        ? await this.hasher.verify(password, user.passwordHash)
        : await this.hasher.verifyAgainstNothing(password);
      if (!user || !valid || !user.active) {
        failed = true;
        throw new DomainError('forbidden', BAD_CREDENTIALS);
      }
      return this.issue(user);
    } finally {
      // An attempt that ends in our own fault (the database) is not the caller's failure.
      admission.leave(failed);
    }
  }

  /**
   * Admits one more check of a secret under the login limit (API.md 1.3), for the other failed
   * authentications that must not be guessed faster than passwords (a registry client's secret):
   * the same per-address budget as logins, plus `keys` of their own. The caller reports whether
   * the check failed with `leave`.
   */
  enterAttempt(address: string, keys: string[]): Promise<Admission> {
    return this.attempts.enter([`address:${address}`, ...keys]);
  }

  /** Revokes a token until its expiry. An invalid or expired token is ignored: logout always succeeds. */
  async logout(token: string | undefined): Promise<void> {
    if (!token) {
      return;
    }
    let claims: TokenClaims;
    try {
      claims = await this.jwt.verifyAsync<TokenClaims>(token);
    } catch {
      return;
    }
    await this.repo.revoke(claims.jti, new Date(claims.exp * 1000));
    this.remember(this.revocations, claims.jti, {
      revoked: true,
      until: this.clock.nowMs() + PRINCIPAL_TTL_MS,
    });
  }

  /**
   * The caller a token stands for, verified and re-checked as the guard does; undefined when it
   * is not valid. For the routes open to anybody that act on a signed-in caller when there is one
   * (linking an identity: a stale session there must not stand in the way of signing in).
   */
  async callerOf(token: string, via: TokenCarrier): Promise<AuthUser | undefined> {
    try {
      return await this.principal(await this.jwt.verifyAsync<TokenClaims>(token), via);
    } catch {
      return undefined;
    }
  }

  /** Signs a new token for a user (login, or renewal of a cookie session). */
  issue(user: Pick<UserEntity, 'id' | 'username' | 'roles'>): IssuedToken {
    const expiresIn = this.config.auth.jwtExpiresInSeconds;
    const token = this.jwt.sign(
      { sub: String(user.id), username: user.username, roles: user.roles },
      { jwtid: randomUUID(), expiresIn },
    );
    return { token, expiresIn, user: { id: user.id, username: user.username, roles: user.roles } };
  }

  /**
   * Turns verified claims into the caller, re-checking the user and the token's revocation
   * against the database (through a short cache, so a change is seen within 30 s).
   */
  principal(claims: TokenClaims, via: TokenCarrier): AuthUser | Promise<AuthUser> {
    const id = Number(claims.sub);
    // Answered at once while both are cached (nearly every request of a caller): no promise to
    // wait for, so the guard lets the request on within the same turn.
    const user = this.fresh(this.users.get(id));
    const revocation = this.fresh(this.revocations.get(claims.jti));
    if (user && revocation) {
      return this.caller(claims, via, user.user, revocation.revoked);
    }
    return Promise.all([this.currentUser(id), this.isRevoked(claims.jti)]).then(([current, revoked]) =>
      this.caller(claims, via, current, revoked),
    );
  }

  private caller(
    claims: TokenClaims,
    via: TokenCarrier,
    user: CachedPrincipal['user'],
    revoked: boolean,
  ): AuthUser {
    if (!user || !user.active) {
      throw new DomainError('unauthorized', 'The token belongs to a disabled or deleted account');
    }
    if (revoked) {
      throw new DomainError('unauthorized', 'The token has been revoked');
    }
    return {
      id: Number(claims.sub),
      username: user.username,
      roles: user.roles,
      jti: claims.jti,
      exp: claims.exp,
      via,
    };
  }

  /** Forgets what is cached about a user, so a change made through this process applies at once. */
  forget(userId: number): void {
    this.users.delete(userId);
  }

  sessionCookieOptions(): CookieOptions {
    return {
      httpOnly: true,
      path: '/',
      sameSite: 'strict',
      secure: this.config.auth.cookieSecure,
      maxAge: this.config.auth.jwtExpiresInSeconds * 1000,
    };
  }

  private async currentUser(id: number): Promise<CachedPrincipal['user']> {
    const cached = this.fresh(this.users.get(id));
    if (cached) {
      return cached.user;
    }
    const row = await this.repo.findById(id);
    const user = row
      ? { id: row.id, username: row.username, roles: row.roles, active: row.active }
      : undefined;
    this.remember(this.users, id, { user, until: this.clock.nowMs() + PRINCIPAL_TTL_MS });
    return user;
  }

  private async isRevoked(jti: string): Promise<boolean> {
    const cached = this.fresh(this.revocations.get(jti));
    if (cached) {
      return cached.revoked;
    }
    const revoked = await this.repo.isRevoked(jti);
    this.remember(this.revocations, jti, { revoked, until: this.clock.nowMs() + PRINCIPAL_TTL_MS });
    return revoked;
  }

  private fresh<T extends { until: number }>(cached: T | undefined): T | undefined {
    return cached && cached.until > this.clock.nowMs() ? cached : undefined;
  }

  private remember<K, V>(cache: Map<K, V>, key: K, value: V): void {
    if (cache.size >= CACHE_LIMIT) {
      cache.clear();
    }
    cache.set(key, value);
  }
}
