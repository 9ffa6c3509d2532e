// One server of the floor benchmark (floor.bench.mjs starts it as a child process, from the built
// service in dist/): FLOOR_SERVER=express is a plain Express 5 app answering /health/live with the
// service's bytes and helmet's headers (FLOOR_SERVER=express-prototyped: the same app, with Node's
// requests and responses made with its prototypes, as the service makes them); otherwise it is
// the service, as main.ts starts it, with the layers named in FLOOR_WITHOUT (comma-separated) left
// out, to price each (`express-messages`: with the server Nest's own Express adapter makes).
import 'reflect-metadata';
import { createServer } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import express from 'express';
import helmet from 'helmet';
import { AppModule } from '../../dist/src/app.module.js';
import { JwtAuthGuard } from '../../dist/src/auth/jwt-auth.guard.js';
import { RolesGuard } from '../../dist/src/auth/roles.guard.js';
import { configureApp, REQUEST_LAYERS } from '../../dist/src/bootstrap.js';
import { loadConfig } from '../../dist/src/config/app-config.js';
import { expressMessageClasses, ExpressHttpAdapter } from '../../dist/src/http-adapter.js';
import { AuthTokenMiddleware } from '../../dist/src/orchestration/auth-token.middleware.js';
import { JsonSuffixMiddleware } from '../../dist/src/orchestration/json-suffix.middleware.js';
import { PathSegmentMiddleware } from '../../dist/src/orchestration/path-segment.middleware.js';
import { ConditionalReply } from '../../dist/src/common/conditional-read.js';

/** What /health/live answers: terminus's report, not to be cached. */
export const LIVE_BODY = { status: 'ok', info: {}, error: {}, details: {} };

const port = Number(process.env.PORT);

if (process.env.FLOOR_SERVER?.startsWith('express')) {
  const app = express();
  app.disable('x-powered-by');
  app.use(helmet());
  app.get('/health/live', (_request, response) => {
    response.set('cache-control', 'no-cache, no-store, must-revalidate').json(LIVE_BODY);
  });
  if (process.env.FLOOR_SERVER === 'express-prototyped') {
    createServer(expressMessageClasses(app), app).listen(port, '127.0.0.1');
  } else {
    app.listen(port, '127.0.0.1');
  }
} else {
  const without = new Set((process.env.FLOOR_WITHOUT ?? '').split(',').filter(Boolean));
  if (without.has('guards')) {
    // The guards' cost out, their effect kept: the first request of each route pattern is
    // authenticated for real, and its user is handed to every later request without a check.
    const users = new Map();
    const check = JwtAuthGuard.prototype.canActivate;
    JwtAuthGuard.prototype.canActivate = async function (context) {
      const request = context.switchToHttp().getRequest();
      const key = context.getHandler();
      if (!users.has(key)) {
        await check.call(this, context);
        users.set(key, request.user);
      }
      request.user = users.get(key);
      return true;
    };
    RolesGuard.prototype.canActivate = () => true;
  }
  if (without.has('area-c-middleware')) {
    for (const middleware of [JsonSuffixMiddleware, PathSegmentMiddleware, AuthTokenMiddleware]) {
      middleware.prototype.use = (_request, _response, next) => next();
    }
  }
  if (without.has('conditional-reads')) {
    // A conditional read's body sent as Nest sends any other, untagged.
    const reply = ExpressAdapter.prototype.reply;
    ExpressHttpAdapter.prototype.reply = function (response, body, statusCode) {
      return reply.call(this, response, body instanceof ConditionalReply ? body.body : body, statusCode);
    };
  }
  const config = loadConfig();
  // `express-messages`: the service's adapter, with the server Nest's own would make.
  const adapter = new ExpressHttpAdapter();
  if (without.has('express-messages')) {
    adapter.initHttpServer = ExpressAdapter.prototype.initHttpServer;
  }
  const app = await NestFactory.create(AppModule.register(config), adapter, {
    bodyParser: false,
    logger: false,
  });
  configureApp(app, config, new Set(REQUEST_LAYERS.filter((layer) => without.has(layer))));
  await app.listen(port, '127.0.0.1');
}
