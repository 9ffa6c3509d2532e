import { Injectable } from '@nestjs/common';
import type { AuthUser, TokenCarrier } from '../auth/auth-user.js';
import { OAuthError } from '../auth/oauth2/oauth-error.js';
import type { IssuedTokens } from '../auth/oauth2/token-grant.js';
import { parseScopes, type TokenRequest } from '../auth/oauth2/token-request.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { AppConfig } from '../config/app-config.js';
import {
  AppSecretHasher,
  generateAccessToken,
  generateRefreshToken,
  hasAccessTokenShape,
  verifiesChallenge,
} from './app-secrets.js';
import { ClientsService } from './clients.service.js';
import { GrantsRepository, type NewToken } from './grants.repository.js';

/** How long a refresh token (and so a grant nobody refreshes) lives: a month of an application left alone. */
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
const NOT_VALID = 'The token is not valid';

/**
 * Tokens of applications acting for a user (API.md 15): issued for an authorization code with
 * PKCE, rotated at every refresh, each stored as a keyed hash and checked against the database on
 * every request, so that a revoked grant, a deleted client or a disabled user stops them at once.
 * A code or refresh token presented a second time revokes its whole grant (RFC 6749 4.1.2 and
 * 10.4, RFC 9700 4.14.2). Access tokens live as long as a login token (JWT_EXPIRES_IN).
 */
@Injectable()
export class AppTokensService {
  constructor(
    private readonly grants: GrantsRepository,
    private readonly clients: ClientsService,
    private readonly hasher: AppSecretHasher,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /** RFC 6749 4.1.3 with RFC 7636 4.5. Throws OAuthError: invalid_client, invalid_request, invalid_grant. */
  async exchangeCode(request: TokenRequest, address: string): Promise<IssuedTokens> {
    const client = await this.clients.authenticate(request.client, address);
    const code = required(request, 'code');
    const redirectUri = required(request, 'redirect_uri');
    const verifier = request.param('code_verifier');
    const grant = await this.grants.findByCode(this.hasher.hash(code));
    const now = this.now();
    if (!grant) {
      throw invalidGrant('The code is not valid (unknown, or expired and forgotten)');
    }
    if (grant.codeUsedAt !== null) {
      await this.grants.revoke(grant.id);
      throw invalidGrant('The code was used already: every token issued for it is revoked');
    }
    if (grant.expiresAt.getTime() <= now.getTime()) {
      throw invalidGrant('The code has expired (codes live 60 s)');
    }
    if (grant.oauthClientId !== client.id) {
      throw invalidGrant('The code was issued to another client');
    }
    if (grant.redirectUri !== redirectUri) {
      throw invalidGrant("redirect_uri is not the authorization request's, exactly");
    }
    if (!grant.user?.active) {
      throw invalidGrant('The account the code was issued for is disabled');
    }
    if (
      grant.codeChallenge === null
        ? verifier !== undefined
        : !verifiesChallenge(verifier ?? '', grant.codeChallenge)
    ) {
      throw invalidGrant(
        grant.codeChallenge === null
          ? 'code_verifier was sent, but the authorization request had no code_challenge'
          : 'code_verifier does not match the code_challenge (PKCE S256)',
      );
    }
    const scopes = grant.scopes.split(' ');
    const issued = this.newTokens(scopes);
    if (!(await this.grants.redeemCode(grant.id, now, this.refreshExpiry(now), issued.rows))) {
      // Another request spent the code between the read and here: a replay all the same.
      await this.grants.revoke(grant.id);
      throw invalidGrant('The code was used already: every token issued for it is revoked');
    }
    return issued.reply;
  }

  /** RFC 6749 6, the refresh token rotated. Throws OAuthError: invalid_client, invalid_request, invalid_grant, invalid_scope. */
  async refresh(request: TokenRequest, address: string): Promise<IssuedTokens> {
    const client = await this.clients.authenticate(request.client, address);
    const presented = required(request, 'refresh_token');
    const row = await this.grants.findToken(this.hasher.hash(presented));
    const grant = row?.grant;
    const now = this.now();
    if (!row || row.kind !== 'refresh' || !grant) {
      throw invalidGrant('The refresh token is not valid');
    }
    if (grant.oauthClientId !== client.id) {
      throw invalidGrant('The refresh token was issued to another client');
    }
    if (row.usedAt !== null) {
      await this.grants.revoke(grant.id);
      throw invalidGrant('The refresh token was used already: every token of its grant is revoked');
    }
    if (row.expiresAt.getTime() <= now.getTime()) {
      throw invalidGrant('The refresh token has expired');
    }
    if (!grant.user?.active) {
      throw invalidGrant('The account the grant acts for is disabled');
    }
    const scopes = parseScopes(request.param('scope'), grant.scopes.split(' '));
    const issued = this.newTokens(scopes, grant.scopes);
    if (!(await this.grants.rotate(row.id, grant.id, now, this.refreshExpiry(now), issued.rows))) {
      await this.grants.revoke(grant.id);
      throw invalidGrant('The refresh token was used already: every token of its grant is revoked');
    }
    return issued.reply;
  }

  /**
   * The caller an access token stands for: the user, with the scopes granted and never the admin
   * role. Throws DomainError unauthorized for a token that is unknown, expired, revoked (its grant
   * or client gone), or whose user is disabled.
   */
  async principal(token: string, via: TokenCarrier): Promise<AuthUser> {
    const row = hasAccessTokenShape(token) ? await this.grants.findToken(this.hasher.hash(token)) : null;
    const user = row?.grant?.user;
    if (!row || row.kind !== 'access' || !user || !user.active) {
      throw new DomainError('unauthorized', NOT_VALID);
    }
    if (row.expiresAt.getTime() <= this.clock.nowMs()) {
      throw new DomainError('unauthorized', 'The token has expired');
    }
    return {
      id: user.id,
      username: user.username,
      roles: user.roles.filter((role) => role !== 'admin'),
      jti: `app-token:${row.id}`,
      exp: Math.floor(row.expiresAt.getTime() / 1000),
      via,
      scopes: new Set(row.scopes.split(' ')),
    };
  }

  /** An access token with `scopes` and a refresh token keeping the grant's (RFC 6749 6). */
  private newTokens(
    scopes: string[],
    grantScopes = scopes.join(' '),
  ): { reply: IssuedTokens; rows: NewToken[] } {
    const now = this.now();
    const accessToken = generateAccessToken();
    const refreshToken = generateRefreshToken();
    const expiresIn = this.config.auth.jwtExpiresInSeconds;
    return {
      reply: { accessToken, expiresIn, scopes, refreshToken },
      rows: [
        {
          kind: 'access',
          tokenHash: this.hasher.hash(accessToken),
          scopes: scopes.join(' '),
          expiresAt: new Date(now.getTime() + expiresIn * 1000),
        },
        {
          kind: 'refresh',
          tokenHash: this.hasher.hash(refreshToken),
          scopes: grantScopes,
          expiresAt: this.refreshExpiry(now),
        },
      ],
    };
  }

  private refreshExpiry(now: Date): Date {
    return new Date(now.getTime() + REFRESH_TOKEN_SECONDS * 1000);
  }

  /** Whole seconds, as MariaDB's DATETIME keeps them. */
  private now(): Date {
    return new Date(Math.floor(this.clock.nowMs() / 1000) * 1000);
  }
}

function required(request: TokenRequest, name: string): string {
  const value = request.param(name);
  if (value === undefined || value === '') {
    throw new OAuthError('invalid_request', 400, `${name} is required`);
  }
  return value;
}

function invalidGrant(message: string): OAuthError {
  return new OAuthError('invalid_grant', 400, message);
}
