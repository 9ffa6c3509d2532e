import { Injectable } from '@nestjs/common';
import { RegisterTokenGrant, type IssuedTokens, type TokenGrant } from '../../auth/oauth2/token-grant.js';
import type { TokenRequest } from '../../auth/oauth2/token-request.js';
import { AppTokensService } from '../app-tokens.service.js';

/** RFC 6749 6: an application's refresh token, rotated at every use (API.md 15). */
@RegisterTokenGrant()
@Injectable()
export class RefreshTokenGrant implements TokenGrant {
  readonly grantType = 'refresh_token';

  constructor(private readonly tokens: AppTokensService) {}

  issue(request: TokenRequest, address: string): Promise<IssuedTokens> {
    return this.tokens.refresh(request, address);
  }
}
