import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';

export const BEARER_SCHEME = 'bearer';
export const API_KEY_SCHEME = 'apiKey';
export const METRICS_SCHEME = 'metrics';
/** GitHub's webhook signature (X-Hub-Signature-256), the only credential of `POST /integrations/github/webhooks`. */
export const GITHUB_SIGNATURE_SCHEME = 'github-signature';

/**
 * Documents that an operation takes a token, and (unless `apiKey: false`) an API key, as two
 * alternative schemes. Only the Bearer scheme is listed for tokens: a generated client sends every
 * scheme an operation lists, so three alternatives meant the token three times. The X-Auth-Token
 * header and the session cookie are accepted all the same (the scheme's text says so). The API key
 * scheme is the `Authorization` header too (`ApiKey <key>`), so a client set up with a token
 * fills that header once and leaves the key scheme alone; `X-API-Key` is accepted all the same.
 */
export function ApiAuth(options: { apiKey?: boolean } = {}): MethodDecorator & ClassDecorator {
  return options.apiKey === false
    ? ApiBearerAuth(BEARER_SCHEME)
    : applyDecorators(ApiBearerAuth(BEARER_SCHEME), ApiSecurity(API_KEY_SCHEME));
}
