import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';

export const BEARER_SCHEME = 'bearer';
export const API_KEY_SCHEME = 'apiKey';
/** The same API key alone in `X-API-Key`: what people paste into Swagger UI's Authorize. */
export const API_KEY_HEADER_SCHEME = 'apiKeyHeader';
export const METRICS_SCHEME = 'metrics';
/** GitHub's webhook signature (X-Hub-Signature-256), the only credential of `POST /integrations/github/webhooks`. */
export const GITHUB_SIGNATURE_SCHEME = 'github-signature';
/** A registry client's token from `POST /oauth2/token` (API.md 10.1), for the operations only a registry may call. */
export const REGISTRY_CLIENT_SCHEME = 'registry-client';

/**
 * Documents that an operation takes a token, and (unless `apiKey: false`) an API key, as
 * alternative schemes. Only the Bearer scheme is listed for tokens: a generated client sends every
 * scheme an operation lists, so three alternatives meant the token three times. The X-Auth-Token
 * header and the session cookie are accepted all the same (the scheme's text says so). An API key
 * has two schemes: `Authorization: ApiKey <key>`, which a client set up with a token leaves alone
 * (it fills that header once), and `X-API-Key: <key>`, where the bare key works (Swagger UI's
 * Authorize). A client that fills every scheme with its one token sends it in `X-API-Key` too:
 * the service takes that copy of the Bearer token for what it is (see extractApiKey).
 */
export function ApiAuth(options: { apiKey?: boolean } = {}): MethodDecorator & ClassDecorator {
  return options.apiKey === false
    ? ApiBearerAuth(BEARER_SCHEME)
    : applyDecorators(
        ApiBearerAuth(BEARER_SCHEME),
        ApiSecurity(API_KEY_SCHEME),
        ApiSecurity(API_KEY_HEADER_SCHEME),
      );
}
