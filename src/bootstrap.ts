import type { NestExpressApplication } from '@nestjs/platform-express';
import cookieParser from 'cookie-parser';
import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';
import { FallbackErrorFilter } from './common/filters/fallback.filter.js';
import { accessLog, AppLogger, bindRequestId, createRootLogger } from './common/logging.js';
import { MetricsService } from './metrics/metrics.service.js';
import { rejectDeepJson } from './common/json-depth.js';
import { assignRequestId } from './common/request-id.js';
import { createValidationPipe } from './common/validation.js';
import type { AppConfig } from './config/app-config.js';
import { setupSwagger } from './swagger.js';

export const BODY_LIMIT = '1mb';

/**
 * The layers every request passes through. The service always runs with all of them; the floor
 * benchmark (`npm run bench -- floor`) starts copies with one left out at a time to price each.
 */
export const REQUEST_LAYERS = [
  'request-id',
  'access-log',
  'metrics',
  'helmet',
  'cookie-parser',
  'validation',
  'error-filter',
] as const;
export type RequestLayer = (typeof REQUEST_LAYERS)[number];

/**
 * Everything main.ts applies to the app, shared with the e2e harness so tests run the
 * same middleware, pipes and filters. The app must be created with `bodyParser: false` and
 * `rawBody: true` (the bytes stay beside the parsed body: a signed webhook is checked over them).
 */
export function configureApp(
  app: NestExpressApplication,
  config: AppConfig,
  without: ReadonlySet<RequestLayer> = new Set(),
): void {
  const use = (layer: RequestLayer): boolean => !without.has(layer);
  const root = createRootLogger(config);
  app.useLogger(new AppLogger(root));
  app.set('trust proxy', config.trustProxy);
  app.disable('x-powered-by');
  // The id is set before any parser can fail, so even a 413 carries it.
  if (use('request-id')) {
    app.use((request: Request, response: Response, next: NextFunction) => {
      request.id = assignRequestId(request, response);
      bindRequestId(request, response, next);
    });
  }
  // Before the body parser, so a refused body (413, bad JSON) is logged like any request.
  if (use('access-log') && root.isLevelEnabled('info')) {
    app.use(accessLog(root, config.environment === 'development'));
  }
  if (use('metrics')) {
    app.use(app.get(MetricsService).httpMiddleware());
  }
  if (use('helmet')) {
    app.use(helmet());
  }
  if (use('cookie-parser')) {
    app.use(cookieParser());
  }
  app.useBodyParser('json', { limit: BODY_LIMIT });
  app.use(rejectDeepJson);
  // Every other body is read as bytes under the same limit, so an oversized one of any type is a
  // 413 in its area's shape (and a small one fails validation as a 400, never reaching a handler as text).
  app.useBodyParser('raw', { limit: BODY_LIMIT, type: () => true });
  if (use('validation')) {
    app.useGlobalPipes(createValidationPipe());
  }
  if (use('error-filter')) {
    app.useGlobalFilters(new FallbackErrorFilter());
  }
  setupSwagger(app);
}
