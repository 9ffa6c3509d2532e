import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { extractToken } from '../auth/token-carriers.js';
import { areaOf } from '../common/filters/fallback.filter.js';
import { isRecord } from '../common/is-record.js';

const MEMBER = 'auth_token';

/**
 * Area C also takes the token as `auth_token` in the JSON body or the query string, as the original
 * system did. Rather than teach the global guard a fourth carrier for one area, the token is moved
 * into `X-Auth-Token` here, before the guard runs, when no other carrier is present (a header or
 * cookie the caller sent wins). It is removed from the body and from the URL in every case, so it
 * reaches neither a handler nor the request log's URL.
 */
@Injectable()
export class AuthTokenMiddleware implements NestMiddleware {
  use(request: Request, _response: Response, next: NextFunction): void {
    if (areaOf(`${request.baseUrl}${request.path}`) !== 'orchestration') {
      next();
      return;
    }
    const body: unknown = request.body;
    const fromBody = isRecord(body) ? body[MEMBER] : undefined;
    if (isRecord(body)) {
      delete body[MEMBER];
    }
    const fromQuery = takeFromQuery(request);
    const token = [fromBody, fromQuery].find(
      (candidate): candidate is string => typeof candidate === 'string' && candidate.trim() !== '',
    );
    if (token !== undefined && extractToken(request) === undefined) {
      request.headers['x-auth-token'] = token.trim();
    }
    next();
  }
}

/** Removes every `auth_token` member from the query string of `request.url`; returns the first value. */
function takeFromQuery(request: Request): string | undefined {
  const queryAt = request.url.indexOf('?');
  if (queryAt === -1) {
    return undefined;
  }
  let found: string | undefined;
  const kept = request.url
    .slice(queryAt + 1)
    .split('&')
    .filter((pair) => {
      const equals = pair.indexOf('=');
      const name = decode(equals === -1 ? pair : pair.slice(0, equals));
      if (name !== MEMBER) {
        return true;
      }
      found ??= equals === -1 ? '' : decode(pair.slice(equals + 1));
      return false;
    });
  if (found !== undefined) {
    // Express parses `request.query` from the URL on every read, so the URL itself must change.
    request.url = request.url.slice(0, queryAt) + (kept.length > 0 ? `?${kept.join('&')}` : '');
  }
  return found;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
