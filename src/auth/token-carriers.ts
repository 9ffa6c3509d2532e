import type { CookieOptions, Request, Response } from 'express';
import type { TokenCarrier } from './auth-user.js';

export const SESSION_COOKIE = 'session';

/** Sets the `session` cookie to a token (login, renewal, the status pages' sign-in form). */
export function setSessionCookie(response: Response, token: string, options: CookieOptions): void {
  response.cookie(SESSION_COOKIE, token, options);
}

/** Clears the `session` cookie: the same attributes, without a lifetime (logout, sign-out). */
export function clearSessionCookie(response: Response, options: CookieOptions): void {
  const { maxAge: _maxAge, expires: _expires, ...attributes } = options;
  response.clearCookie(SESSION_COOKIE, attributes);
}

/** The headers a token-dependent reply varies on. */
export const AUTH_VARY = 'Authorization, X-Auth-Token, Cookie, X-API-Key';

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

/** The header that carries an API key alone (API.md 7.3); `Authorization: ApiKey <key>` is the other carrier. */
export const API_KEY_HEADER = 'x-api-key';

/** How every API key this service makes begins, so that one sent in a token's place can be recognised. */
export const API_KEY_MARK = 'wfk_';

/** What a request carries as an API key. */
export type PresentedApiKey =
  | { kind: 'none' }
  | { kind: 'key'; key: string }
  /** A carrier of an API key used the wrong way: the reason says how to send it. */
  | { kind: 'malformed'; reason: string };

const HOW = 'send the key as `Authorization: ApiKey <key>` or as `X-API-Key: <key>`';

/**
 * An `X-API-Key` holding the very token of `Authorization: Bearer`: a client that fills every
 * scheme of an operation with its one token (as generated clients do) sends it there too. That
 * copy is the token, not a key.
 */
function repeatsBearerToken(header: string | string[], authorization: string | undefined): boolean {
  const bearer =
    typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
  return bearer !== undefined && !bearer.startsWith(API_KEY_MARK) && header === bearer;
}

/**
 * Finds an API key in `Authorization: ApiKey <key>` or `X-API-Key: <key>`. A key in a token's
 * place (`Authorization: Bearer wfk_…`, `X-Auth-Token: wfk_…`), an `ApiKey` scheme without a
 * value, a scheme inside `X-API-Key`, or two different keys are `malformed`: the caller meant a
 * key and gets told how to send it, instead of a token error.
 */
export function extractApiKey(request: Request): PresentedApiKey {
  const authorization = request.headers.authorization;
  let fromAuthorization: string | undefined;
  if (typeof authorization === 'string') {
    const scheme = /^\s*(\S+)(?:\s+(.*))?$/.exec(authorization);
    const name = scheme?.[1].toLowerCase();
    const value = scheme?.[2]?.trim() ?? '';
    if (name === 'apikey') {
      if (value === '' || /\s/.test(value)) {
        return {
          kind: 'malformed',
          reason: `Authorization: ApiKey needs exactly one key after the scheme; ${HOW}`,
        };
      }
      fromAuthorization = value;
    } else if (name === 'bearer' && value.startsWith(API_KEY_MARK)) {
      return { kind: 'malformed', reason: `An API key is not a Bearer token; ${HOW}` };
    }
  }
  const header = request.headers[API_KEY_HEADER];
  let fromHeader: string | undefined;
  if (header !== undefined && !repeatsBearerToken(header, authorization)) {
    const value = (Array.isArray(header) ? header.join(',') : header).trim();
    if (value === '' || /\s|,/.test(value)) {
      return {
        kind: 'malformed',
        reason: `X-API-Key takes the key alone, without a scheme or spaces; ${HOW}`,
      };
    }
    fromHeader = value;
  }
  if (fromAuthorization !== undefined && fromHeader !== undefined && fromAuthorization !== fromHeader) {
    return { kind: 'malformed', reason: 'Two different API keys (Authorization and X-API-Key); send one' };
  }
  const key = fromAuthorization ?? fromHeader;
  if (key !== undefined) {
    return { kind: 'key', key };
  }
  const token = request.headers['x-auth-token'];
  if (typeof token === 'string' && token.trim().startsWith(API_KEY_MARK)) {
    return { kind: 'malformed', reason: `An API key is not an X-Auth-Token; ${HOW}` };
  }
  return { kind: 'none' };
}
