import { ApiBearerAuth } from '@nestjs/swagger';

export const BEARER_SCHEME = 'bearer';
export const METRICS_SCHEME = 'metrics';

/**
 * Documents that an operation takes a token. Only the Bearer scheme is listed: a generated client
 * sends every scheme an operation lists, so three alternatives meant the token three times.
 * The X-Auth-Token header and the session cookie are accepted all the same (the scheme's text says so).
 */
export function ApiAuth(): MethodDecorator & ClassDecorator {
  return ApiBearerAuth(BEARER_SCHEME);
}
