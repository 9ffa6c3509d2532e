import type { Request } from 'express';
import type { TokenCarrier } from './auth-user.js';

export const SESSION_COOKIE = 'session';

/** The headers a token-dependent reply varies on. */
export const AUTH_VARY = 'Authorization, X-Auth-Token, Cookie';

/** Finds the token in `Authorization: Bearer`, `X-Auth-Token` or the session cookie, in that order. */
export function extractToken(request: Request): { token: string; via: TokenCarrier } | undefined {
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) {
      return { token: match[1], via: 'bearer' };
    }
  }
  const header = request.headers['x-auth-token'];
  if (typeof header === 'string' && header.trim() !== '') {
    return { token: header.trim(), via: 'header' };
  }
  const cookies = request.cookies as Record<string, unknown> | undefined;
  const cookie = cookies?.[SESSION_COOKIE];
  if (typeof cookie === 'string' && cookie !== '') {
    return { token: cookie, via: 'cookie' };
  }
  return undefined;
}
