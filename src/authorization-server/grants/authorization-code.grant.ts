import { Injectable } from '@nestjs/common';
import { RegisterTokenGrant, type IssuedTokens, type TokenGrant } from '../../auth/oauth2/token-grant.js';
import type { TokenRequest } from '../../auth/oauth2/token-request.js';
import { AppTokensService } from '../app-tokens.service.js';

/** RFC 6749 4.1.3 with PKCE: an application's code, approved by a user, for tokens acting for them (API.md 15). */
@RegisterTokenGrant()
@Injectable()
export class AuthorizationCodeGrant implements TokenGrant {
  readonly grantType = 'authorization_code';

  constructor(private readonly tokens: AppTokensService) {}

  issue(request: TokenRequest, address: string): Promise<IssuedTokens> {
    return this.tokens.exchangeCode(request, address);
  }
}
