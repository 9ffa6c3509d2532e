import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { discovered } from '../../common/discovered.js';
import { OAuthError } from './oauth-error.js';
import type { TokenRequest } from './token-request.js';

/** What a grant issues: RFC 6749 5.1's reply. */
export interface IssuedTokens {
  accessToken: string;
  /** Seconds. */
  expiresIn: number;
  scopes: readonly string[];
  /** Issued by the grants that give one (RFC 6749 1.5). */
  refreshToken?: string;
}

/**
 * One `grant_type` of `POST /oauth2/token` (RFC 6749 4): the client credentials of a registry,
 * a user's authorization code, a refresh token. Each is a provider marked @RegisterTokenGrant(), in
 * the module that owns what it issues; the token endpoint dispatches by `grantType`.
 */
export interface TokenGrant {
  /** The `grant_type` value it answers (unique in the app). */
  readonly grantType: string;
  /**
   * Authenticates the client as the grant requires and issues tokens. Throws OAuthError with
   * RFC 6749 5.2's code; `address` is the caller's, for the limit on failed authentications.
   */
  issue(request: TokenRequest, address: string): Promise<IssuedTokens>;
}

/** Registers a TokenGrant class: with this decorator and listed in any module's providers. */
export const RegisterTokenGrant = DiscoveryService.createDecorator<void>();

/** The table of grants by `grant_type`, filled from every module once the app's providers exist. */
@Injectable()
export class TokenGrants implements OnModuleInit {
  private readonly byType = new Map<string, TokenGrant>();

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    for (const grant of discovered<TokenGrant>(this.discovery, RegisterTokenGrant)) {
      if (this.byType.has(grant.grantType)) {
        throw new Error(`Two token grants answer grant_type ${grant.grantType}`);
      }
      this.byType.set(grant.grantType, grant);
    }
  }

  /** The grant types served, in registration order (the metadata document lists them). */
  types(): string[] {
    return [...this.byType.keys()];
  }

  /** Throws OAuthError `unsupported_grant_type` for a grant type nobody answers. */
  issue(request: TokenRequest, address: string): Promise<IssuedTokens> {
    const grant = this.byType.get(request.grantType);
    if (!grant) {
      throw new OAuthError(
        'unsupported_grant_type',
        400,
        `The grant type '${request.grantType.slice(0, 64)}' is not supported: ${this.types().join(', ')}`,
      );
    }
    return grant.issue(request, address);
  }
}
