import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { areaOf } from '../common/filters/fallback.filter.js';

/**
 * Area C accepts `.json` after every path (`/api/v1/nodes.json`, `/api/v1/nodes/default.json`,
 * `/api/v1.json`: the seed's "extension: json"), with the same replies. The suffix is removed here,
 * before routing, rather than written into each route as `{.json}`: the root `GET /api/v1` cannot
 * carry it as a route of the `api/v1` controller, and the OpenAPI paths stay the canonical ones
 * (`/api/v1/nodes/{cloud}`, not `/api/v1/nodes/{cloud}.json`). Areas A and B are left alone.
 */
@Injectable()
export class JsonSuffixMiddleware implements NestMiddleware {
  use(request: Request, _response: Response, next: NextFunction): void {
    if (areaOf(`${request.baseUrl}${request.path}`) === 'orchestration') {
      const queryAt = request.url.indexOf('?');
      const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt);
      // `/nodes/.json` keeps its suffix: `.json` alone is a (bad) cloud name, not a suffix.
      if (/[^/]\.json$/.test(path)) {
        request.url = path.slice(0, -'.json'.length) + (queryAt === -1 ? '' : request.url.slice(queryAt));
      }
    }
    next();
  }
}
