import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoggerService, LogLevel } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { AppConfig } from '../config/app-config.js';

/**
 * Query members that carry secrets and must not reach a log line (API keys: `?api_key=`, `?key=`,
 * OAuth's `?access_token=`, and a sign-in's redirect: its `code` and `state`, API.md 15).
 */
const SECRET_QUERY =
  /([?&](?:auth_token|access_token|id_token|refresh_token|token|password|secret|client_secret|api_?key|key|code|code_verifier|state)=)[^&#]*/gi;
/**
 * Anything that looks like one of our API keys (`wfk_…`, API_KEY_MARK), wherever it stands and
 * whatever the parameter's name: a key sent in the query is refused, but its line is still logged.
 * The underscore may come percent-encoded.
 */
const API_KEY_LIKE = /wfk(?:_|%5f)[A-Za-z0-9_%-]*/gi;

/** The URL as a log line may show it: secrets in the query and anything like an API key replaced. */
export function redactUrl(url: string | undefined): string | undefined {
  return url?.replace(SECRET_QUERY, '$1[Redacted]').replace(API_KEY_LIKE, '[Redacted]');
}

/** Structured logs: JSON lines in production and tests, readable lines for a developer's terminal; never a password or token. */
export function createRootLogger(config: AppConfig): Logger {
  return pino({
    level: config.logLevel,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-auth-token"]',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
        '*.password',
        '*.auth_token',
        '*.token',
        '*.authorization',
      ],
      censor: '[Redacted]',
    },
    transport:
      config.environment === 'development'
        ? {
            target: 'pino-pretty',
            // The request line says its time in its message already.
            options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,ms' },
          }
        : undefined,
  });
}

/**
 * A logger for what happens before the app's own is installed (main.ts builds the app without one,
 * so a refused setting stops start-up with one line, not a stack): same format as the root logger,
 * written synchronously so nothing is lost when start-up then stops the process.
 */
export function createStartupLogger(config: AppConfig, context: string): { warn(line: string): void } {
  const stream =
    config.environment === 'development'
      ? pretty({ singleLine: true, translateTime: 'SYS:HH:MM:ss.l', sync: true })
      : pino.destination({ sync: true });
  const logger = pino({ level: config.logLevel }, stream).child({ context });
  return { warn: (line) => logger.warn(line) };
}

/** Replies of status 5xx that the caller caused (area C's 500 for an unknown cloud): warn, not error. */
const callersMistakes = new WeakSet<object>();

export function markCallersMistake(response: ServerResponse): void {
  callersMistakes.add(response);
}

/** Probes poll these every few seconds; a line for each would drown the log. */
const UNLOGGED = new Set(['/health/live', '/health/ready']);

/**
 * The access log: one line per request, written when its reply is done, with the request id. In
 * production a JSON line with the method, redacted URL, user agent, status, length and time, for
 * log tooling; in development one short readable line, `GET /users/current 200 3 ms`, the id
 * beside it. It makes no child logger and serialises no header set per request: at the request
 * floor, pino-http's two child loggers per request (the request's headers copied and redacted
 * even for unlogged probes) and every response header in each line were a large share of a
 * request's cost. A reply cut off before it was sent (the client went away) is logged at error as
 * `aborted`, and so is a 5xx, but for one the caller caused (markCallersMistake), at warn.
 */
export function accessLog(
  root: Logger,
  readable = false,
): (request: IncomingMessage, response: ServerResponse, next: () => void) => void {
  // Without the root's redaction, which walks every field of every line for secrets: these lines
  // are built of fields that hold none (the URL's are redacted here, no header is written).
  const lines = root.child({}, { redact: [] });
  return (request, response, next) => {
    if (UNLOGGED.has(request.url ?? '')) {
      next();
      return;
    }
    const started = performance.now();
    // 'close' comes once whichever way the reply ends, after 'finish' when it was sent.
    response.once('close', () => {
      const ms = Math.round(performance.now() - started);
      const sent = response.writableFinished;
      const level = !sent
        ? 'error'
        : response.statusCode < 500
          ? 'info'
          : callersMistakes.has(response)
            ? 'warn'
            : 'error';
      const id = typeof request.id === 'string' ? request.id : undefined;
      // The URL as the caller sent it (the router and area C's middleware rewrite `url`).
      const url = redactUrl((request as { originalUrl?: string }).originalUrl ?? request.url);
      const method = request.method ?? '';
      if (readable) {
        lines[level](
          { reqId: id },
          `${method} ${url ?? ''} ${sent ? response.statusCode : 'aborted'} ${ms} ms`,
        );
        return;
      }
      lines[level](
        {
          reqId: id,
          req: { id, method, url, userAgent: request.headers['user-agent'] },
          res: { statusCode: response.statusCode, contentLength: response.getHeader('content-length') },
          responseTime: ms,
        },
        sent ? 'request completed' : 'request aborted',
      );
    });
    next();
  };
}

const requestIds = new AsyncLocalStorage<string>();

/**
 * What the request's code logs carries the request's id. Only the id is bound: the child
 * logger is made when a line is written, which inside a request is rare.
 */
export function bindRequestId(request: Request, _response: Response, next: NextFunction): void {
  if (typeof request.id === 'string') {
    requestIds.run(request.id, next);
  } else {
    next();
  }
}

/**
 * Nest's contexts that write a line per module and per route at every start (about 190 here): what
 * was wired is for whoever debugs the wiring, not for the start-up's log.
 */
const START_UP_CHATTER = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/**
 * Nest's logger, written to pino: inside a request through the request's child logger (so
 * the line has its id), elsewhere through the root. Accepts Nest's `(message, context)` and
 * `(message, stack, context)` and pino's `({ ...fields }, message, context)`.
 */
export class AppLogger implements LoggerService {
  constructor(private readonly root: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  setLogLevels(_levels: LogLevel[]): void {
    // LOG_LEVEL decides, once, at start-up.
  }

  private write(
    requested: 'info' | 'error' | 'warn' | 'debug' | 'trace' | 'fatal',
    message: unknown,
    rest: unknown[],
  ): void {
    const requestId = requestIds.getStore();
    const logger = requestId === undefined ? this.root : this.root.child({ reqId: requestId });
    // Nest appends the Logger's context (a string) last.
    const context =
      rest.length > 0 && typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    const level =
      requested === 'info' && context !== undefined && START_UP_CHATTER.has(context) ? 'debug' : requested;
    if (typeof message === 'object' && message !== null && !(message instanceof Error)) {
      logger[level]({ context, ...message }, typeof rest[0] === 'string' ? rest[0] : undefined);
      return;
    }
    if (message instanceof Error) {
      logger[level]({ context, err: message }, message.message);
      return;
    }
    // Nest's error(message, stack, context): the stack stays in the line, not in the reply.
    const stack = level === 'error' && typeof rest[0] === 'string' ? rest[0] : undefined;
    logger[level](stack ? { context, stack } : { context }, String(message));
  }
}
