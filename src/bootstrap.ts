import type { NestExpressApplication } from '@nestjs/platform-express';
import bodyParser from 'body-parser';
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
 * Paths whose bodies are read as bytes whatever their media type: `.lifemonitor.yaml`'s
 * validator (API.md 12) takes YAML sent as `application/json` too, which the JSON parser would
 * refuse before the route saw it.
 */
const BYTES_ONLY_PATHS: ReadonlySet<string> = new Set(['/integrations/github/config/validate']);

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
 * same middleware, pipes and filters. The app must be created with `bodyParser: false`: bodies
 * are parsed here (bodyParsing), their bytes kept beside them.
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
  // What every request goes through, as one layer of Express's chain: each middleware there is a
  // layer Express walks for every request. The id comes first, so that even a 413 carries it, and
  // what follows runs with it bound for the log; the access log and the metrics start before the
  // body parser, so that a refused body (413, bad JSON) is logged and counted like any request.
  const everyRequest: Middleware[] = [];
  if (use('request-id')) {
    everyRequest.push((request, response, next) => {
      request.id = assignRequestId(request, response);
      bindRequestId(request, response, next);
    });
  }
  if (use('access-log') && root.isLevelEnabled('info')) {
    everyRequest.push(accessLog(root, config.environment === 'development'));
  }
  if (use('metrics')) {
    everyRequest.push(app.get(MetricsService).httpMiddleware());
  }
  if (use('helmet')) {
    everyRequest.push(securityHeaders(config));
  }
  if (use('cookie-parser')) {
    everyRequest.push(cookieParser());
  }
  everyRequest.push(bodyParsing());
  app.use(inOneLayer(everyRequest));
  if (use('validation')) {
    app.useGlobalPipes(createValidationPipe());
  }
  if (use('error-filter')) {
    app.useGlobalFilters(new FallbackErrorFilter());
  }
  setupSwagger(app);
}

/**
 * helmet's headers, with `upgrade-insecure-requests` in the Content-Security-Policy only when the
 * service knows it is served over HTTPS: reached over plain HTTP under any name but localhost (a
 * LAN, a proxy that ends TLS elsewhere), a browser would otherwise ask for every script, style and
 * image of /docs and /status over https, get none, and show a blank page.
 */
function securityHeaders(config: AppConfig): Middleware {
  return helmet({
    contentSecurityPolicy: {
      directives: { upgradeInsecureRequests: config.servedOverHttps ? [] : null },
    },
  });
}

/**
 * JSON bodies parsed (and refused when nested too deep); every other body read as bytes under the
 * same limit, so that an oversized one of any type is a 413 in its area's shape (and a small one
 * fails validation as a 400, never reaching a handler as text). The bytes stay beside the parsed
 * body as `rawBody` (a signed webhook is checked over them), as Nest's `rawBody: true` keeps them.
 * One step for the three, skipped at once by a request without a body (most requests): each
 * middleware of the chain is a layer Express walks for every request.
 */
function bodyParsing(): Middleware {
  const keepRaw = (request: Request & { rawBody?: Buffer }, _response: Response, bytes: Buffer): void => {
    request.rawBody = bytes;
  };
  const json = bodyParser.json({ limit: BODY_LIMIT, verify: keepRaw });
  const parse = inOneLayer([
    (request, response, next) =>
      BYTES_ONLY_PATHS.has(request.path) ? next() : json(request, response, next),
    rejectDeepJson,
    bodyParser.raw({ limit: BODY_LIMIT, type: () => true, verify: keepRaw }),
  ]);
  return (request, response, next) => {
    // As body-parser decides that a request has a body (type-is's hasBody).
    if (
      request.headers['transfer-encoding'] === undefined &&
      request.headers['content-length'] === undefined
    ) {
      next();
      return;
    }
    parse(request, response, next);
  };
}

type Middleware = (request: Request, response: Response, next: NextFunction) => void;

/** Middleware run one after another as one layer of Express's chain; an error skips the rest. */
function inOneLayer(steps: readonly Middleware[]): Middleware {
  return (request, response, next) => {
    let at = 0;
    const step = (error?: unknown): void => {
      if (error !== undefined || at === steps.length) {
        next(error);
        return;
      }
      steps[at++](request, response, step);
    };
    step();
  };
}
