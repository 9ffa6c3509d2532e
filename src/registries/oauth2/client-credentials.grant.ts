import { Injectable } from '@nestjs/common';
import { OAuthError } from '../../auth/oauth2/oauth-error.js';
import { RegisterTokenGrant, type IssuedTokens, type TokenGrant } from '../../auth/oauth2/token-grant.js';
import {
  CLIENT_AUTHENTICATION_FAILED,
  parseScopes,
  type TokenRequest,
} from '../../auth/oauth2/token-request.js';
import { REGISTRY_CLIENT_SCOPES } from '../../auth/scopes.js';
import { RegistryTokensService } from '../registry-tokens.service.js';

/** RFC 6749 4.4: a registry's client, by its id and secret, gets a token acting for the registry (API.md 10.1). */
@RegisterTokenGrant()
@Injectable()
export class ClientCredentialsGrant implements TokenGrant {
  readonly grantType = 'client_credentials';

  constructor(private readonly tokens: RegistryTokensService) {}

  async issue(request: TokenRequest, address: string): Promise<IssuedTokens> {
    const client = request.client;
    if (client?.clientSecret === undefined) {
      throw new OAuthError('invalid_client', 401, CLIENT_AUTHENTICATION_FAILED, client?.basic ?? false);
    }
    const scopes = parseScopes(request.param('scope'), REGISTRY_CLIENT_SCOPES);
    return this.tokens.issue(
      { clientId: client.clientId, clientSecret: client.clientSecret, basic: client.basic, scopes },
      address,
    );
  }
}
