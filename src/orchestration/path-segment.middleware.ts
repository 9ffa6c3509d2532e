import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { DomainError } from '../common/errors/domain-error.js';
import { areaOf } from '../common/filters/fallback.filter.js';

/** What every segment of an area-C path is: an operation word, a cloud name, an id. */
const SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A cloud is `[A-Za-z0-9_-]{1,64}` (API.md 3), and so is every other segment of an area-C path, so a
 * segment outside that matches no operation: it is the seed's 500 "invalid cloud or path", decided
 * here before the token guard runs (API.md section 0), not a 401 from a route that matched the
 * segment as a parameter. Runs after JsonSuffixMiddleware, so `default.json` is `default` by now.
 */
@Injectable()
export class PathSegmentMiddleware implements NestMiddleware {
  use(request: Request, _response: Response, next: NextFunction): void {
    const path = `${request.baseUrl}${request.path}`;
    if (areaOf(path) === 'orchestration') {
      const segments = path
        .replace(/^\/api\/v1/, '')
        .split('/')
        .slice(1);
      // A trailing slash is routed as if absent; an empty segment anywhere else is not.
      const bad = segments.find(
        (segment, i) => !SEGMENT.test(segment) && !(segment === '' && i === segments.length - 1),
      );
      if (bad !== undefined) {
        const shown = bad.length > 64 ? `${bad.slice(0, 64)}…` : bad;
        throw new DomainError('invalid_route', `Cloud '${shown}' is not valid or the path is wrong`);
      }
    }
    next();
  }
}
