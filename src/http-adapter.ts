import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express, Response } from 'express';
import { ConditionalReply, sendConditionally } from './common/conditional-read.js';

/**
 * Nest's Express adapter, with Node's requests and responses made as Express's own from the
 * start. Express gives each request and response its app's prototype (`Object.setPrototypeOf`)
 * when it takes them; V8 then keeps every property added after (by Express, Nest, each
 * middleware) in a shape of that object alone, so that every property read and write on them
 * misses V8's caches: most of the service's cost per request on its floor (`/health/live`, 143
 * against 57 µs of CPU). Made with that prototype already, they keep shared shapes, and Express's
 * own step changes nothing.
 * The app's main.ts, the e2e harness and the floor benchmark all use it.
 */
export class ExpressHttpAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options.httpsOptions || options.return503OnClosing || options.forceCloseConnections) {
      // Nest's own server for these, which the service does not use.
      super.initHttpServer(options);
      return;
    }
    this.httpServer = createServer(expressMessageClasses(this.getInstance<Express>()), this.getInstance());
  }

  /** Every reply of a handler: a conditional read's is tagged and may be a 304 (sendConditionally). */
  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    if (body instanceof ConditionalReply) {
      sendConditionally(response, body, statusCode);
      return response;
    }
    return super.reply(response, body, statusCode);
  }
}

/**
 * Node's message classes, as constructors whose instances have the app's request and response
 * prototypes: for `http.createServer(classes, app)` (the floor benchmark's plain Express app made so).
 */
export function expressMessageClasses(app: Express): {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
} {
  // Plain functions, as Node's own constructors are, that hand on whatever Node's server gives
  // them: a class would need `super()`, which cannot give the instance a prototype chosen here.
  function AppRequest(this: IncomingMessage, ...args: unknown[]): void {
    (IncomingMessage as unknown as Constructor).apply(this, args);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: ServerResponse, ...args: unknown[]): void {
    (ServerResponse as unknown as Constructor).apply(this, args);
  }
  AppResponse.prototype = app.response;
  return {
    IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
    ServerResponse: AppResponse as unknown as typeof ServerResponse,
  };
}

type Constructor = (this: object, ...args: unknown[]) => void;
