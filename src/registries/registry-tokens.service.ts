import { Injectable } from '@nestjs/common';
import { ApiKeyHasher } from '../auth/api-key-secrets.js';
import type { AuthUser, TokenCarrier } from '../auth/auth-user.js';
import { AuthService } from '../auth/auth.service.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { AppConfig } from '../config/app-config.js';
import { OAuthError } from '../auth/oauth2/oauth-error.js';
import type { IssuedTokens } from '../auth/oauth2/token-grant.js';
import { RegistriesRepository } from './registries.repository.js';
import { generateAccessToken, hasTokenShape } from './registry-secrets.js';

/** Secrets of registries are hashed with a pepper of their own (see ApiKeyHasher). */
export class RegistrySecretHasher extends ApiKeyHasher {}

/** A client-credentials request (RFC 6749 4.4.2), its client authenticated by either method of 2.3.1. */
export interface ClientCredentialsRequest {
  clientId: string;
  clientSecret: string;
  /** The scopes asked for (all when the request named none). */
  scopes: string[];
  /** Whether the client authenticated with HTTP Basic. */
  basic: boolean;
}

const NOT_VALID = 'The token is not valid';
const BAD_CLIENT = 'Client authentication failed: unknown client or wrong secret';

/**
 * Registry client tokens (API.md 10.1): issued for a client's id and secret (RFC 6749 4.4), random
 * and stored as a keyed hash, checked against the database on every request, so that deleting the
 * registry (or disabling its account) stops them at once. They live as long as a login token
 * (JWT_EXPIRES_IN).
 */
@Injectable()
export class RegistryTokensService {
  constructor(
    private readonly repo: RegistriesRepository,
    private readonly hasher: RegistrySecretHasher,
    private readonly auth: AuthService,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /**
   * Issues a token for a client-credentials request. Failed authentications count against the
   * login limit (per address and per client id); past it, a 429 until the window ends.
   */
  async issue(request: ClientCredentialsRequest, address: string): Promise<IssuedTokens> {
    const admission = await this.auth.enterAttempt(address, [`client:${request.clientId}`]);
    if (!admission.admitted) {
      throw new OAuthError(
        'temporarily_unavailable',
        429,
        'Too many failed client authentications; try again later',
        false,
        admission.retryAfterMs / 1000,
      );
    }
    let failed = false;
    try {
      const registry = await this.repo.findByClientId(request.clientId);
      // Compared even without a registry, so that an unknown client id does not answer faster.
      const matches = this.hasher.matches(request.clientSecret, registry?.clientSecretHash ?? '0'.repeat(64));
      if (!registry || !matches) {
        failed = true;
        throw new OAuthError('invalid_client', 401, BAD_CLIENT, request.basic);
      }
      const accessToken = generateAccessToken();
      const expiresIn = this.config.auth.jwtExpiresInSeconds;
      await this.repo.saveToken({
        registryId: registry.id,
        tokenHash: this.hasher.hash(accessToken),
        scopes: request.scopes.join(' '),
        expiresAt: new Date(Math.floor(this.clock.nowMs() / 1000) * 1000 + expiresIn * 1000),
      });
      return { accessToken, expiresIn, scopes: request.scopes };
    } finally {
      admission.leave(failed);
    }
  }

  /**
   * The caller a registry token stands for: the registry's account, acting for the registry with
   * the token's scopes. Throws DomainError unauthorized for a token that is unknown, expired, of a
   * deleted registry, or whose registry's account is disabled.
   */
  async principal(token: string, via: TokenCarrier): Promise<AuthUser> {
    const row = hasTokenShape(token) ? await this.repo.findToken(this.hasher.hash(token)) : null;
    const registry = row?.registry;
    const account = registry?.user;
    if (!row || !registry || !account || !account.active) {
      throw new DomainError('unauthorized', NOT_VALID);
    }
    if (row.expiresAt.getTime() <= this.clock.nowMs()) {
      throw new DomainError('unauthorized', 'The token has expired');
    }
    return {
      id: account.id,
      username: account.username,
      roles: account.roles.filter((role) => role !== 'admin'),
      jti: `registry-token:${row.id}`,
      exp: Math.floor(row.expiresAt.getTime() / 1000),
      via,
      scopes: new Set(row.scopes.split(' ')),
      registry: { id: registry.id, uuid: registry.uuid },
    };
  }
}
