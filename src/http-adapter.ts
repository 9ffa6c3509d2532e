import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { Logger, StreamableFile, type NestApplicationOptions } from '@nestjs/common';
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
  /** Route handlers whose work has not ended yet, their streamed replies included. */
  readonly handlersInFlight = new WorkInFlight();
  private readonly drainOnClose: boolean;

  /**
   * drainOnClose: close() waits, once the server has stopped accepting, for every handler in flight
   * to end (main.ts; its shutdown deadline bounds the wait). Node's server.close() ends once the
   * connections are gone, and a client that left takes its connection at once while its handler
   * still awaits the database, which the shutdown hooks close next: that write is lost, and the
   * pool closed under it reads as a database outage in the log.
   */
  constructor({ drainOnClose = false }: { drainOnClose?: boolean } = {}) {
    super();
    this.drainOnClose = drainOnClose;
    // Every route Nest registers passes here (RouterExplorer takes the method by its name on the
    // adapter): its handler is the whole of the request's work (guards, pipes, the handler, the
    // reply or the exception filters), one promise per request.
    for (const method of ROUTE_METHODS) {
      const register = this[method].bind(this) as (...args: unknown[]) => unknown;
      Object.defineProperty(this, method, {
        value: (...args: unknown[]) =>
          register(...args.map((arg) => (typeof arg === 'function' ? this.counted(arg as Handler) : arg))),
      });
    }
  }

  override async close(): Promise<void> {
    await super.close();
    const waiting = this.handlersInFlight.size;
    if (this.drainOnClose && waiting > 0) {
      new Logger('Main').log(
        `no longer accepting; waiting for ${waiting} request${waiting === 1 ? '' : 's'} in flight to finish`,
      );
      await this.handlersInFlight.settled();
    }
  }

  private counted(handler: Handler): Handler {
    const work = this.handlersInFlight;
    return (request, response, next) => {
      const running = handler(request, response, next);
      // Counted once it is known to be a promise: nothing ran between the call and here.
      if (running instanceof Promise) {
        work.begin();
        running.then(work.end, work.end);
      }
      return running;
    };
  }

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
    if (body instanceof StreamableFile) {
      // A streamed reply is the handler's work until its stream ends or is destroyed (the client
      // went away): a streamed list reads its batches from the database as the client takes them.
      const stream = body.getStream();
      if (!stream.closed) {
        this.handlersInFlight.begin();
        stream.once('close', this.handlersInFlight.end);
      }
    }
    if (body instanceof ConditionalReply) {
      sendConditionally(response, body, statusCode);
      return response;
    }
    return super.reply(response, body, statusCode);
  }
}

const ROUTE_METHODS = [
  'get',
  'post',
  'put',
  'delete',
  'patch',
  'all',
  'options',
  'head',
  'search',
  'propfind',
  'proppatch',
  'mkcol',
  'copy',
  'move',
  'lock',
  'unlock',
  'query',
] as const;

type Handler = (request: unknown, response: unknown, next: unknown) => unknown;

/** A count of work under way, and a wait for it to reach none. */
export class WorkInFlight {
  private count = 0;
  private idle: (() => void)[] = [];

  get size(): number {
    return this.count;
  }

  begin(): void {
    this.count++;
  }

  readonly end = (): void => {
    this.count--;
    if (this.count === 0 && this.idle.length > 0) {
      const waiting = this.idle;
      this.idle = [];
      waiting.forEach((resolve) => resolve());
    }
  };

  settled(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
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
