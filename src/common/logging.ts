import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoggerService, LogLevel } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { pino, type Logger } from 'pino';
import { pinoHttp, type HttpLogger } from 'pino-http';
import pretty from 'pino-pretty';
import type { AppConfig } from '../config/app-config.js';
import { assignRequestId } from './request-id.js';

/** Query members that carry secrets and must not reach a log line. */
const SECRET_QUERY = /([?&](?:auth_token|token|password)=)[^&]*/gi;

export function redactUrl(url: string | undefined): string | undefined {
  return url?.replace(SECRET_QUERY, '$1[Redacted]');
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

/**
 * One line per request, with the request id. In production a JSON line with the method,
 * redacted URL, headers (secrets redacted), status and time, for log tooling; in development
 * one short readable line, `GET /users/current 200 3 ms`, the id beside it. pino-http prepares a
 * serialized child logger for every request, so it is only mounted when `info` lines are written
 * at all (see configureApp).
 */
export function httpLogger(root: Logger, readable = false): HttpLogger {
  const line = (req: IncomingMessage, res: ServerResponse, responseTime: number): string =>
    `${req.method ?? ''} ${redactUrl(req.url) ?? ''} ${res.statusCode} ${Math.round(responseTime)} ms`;
  return pinoHttp({
    logger: root,
    genReqId: (request: IncomingMessage, response: ServerResponse) =>
      typeof request.id === 'string' ? request.id : assignRequestId(request, response),
    serializers: readable
      ? { req: () => undefined, res: () => undefined, err: () => undefined }
      : {
          req: (req: { id: unknown; method: string; url: string; headers: Record<string, unknown> }) => ({
            id: req.id,
            method: req.method,
            url: redactUrl(req.url),
            headers: { ...req.headers },
          }),
        },
    ...(readable
      ? {
          customSuccessMessage: line,
          customErrorMessage: (req: IncomingMessage, res: ServerResponse, error: Error) =>
            `${req.method ?? ''} ${redactUrl(req.url) ?? ''} ${res.statusCode} ${error.message}`,
          customAttributeKeys: { responseTime: 'ms' },
        }
      : {}),
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    quietReqLogger: true,
    autoLogging: { ignore: (req) => req.url === '/health/live' || req.url === '/health/ready' },
  });
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
    level: 'info' | 'error' | 'warn' | 'debug' | 'trace' | 'fatal',
    message: unknown,
    rest: unknown[],
  ): void {
    const requestId = requestIds.getStore();
    const logger = requestId === undefined ? this.root : this.root.child({ reqId: requestId });
    // Nest appends the Logger's context (a string) last.
    const context =
      rest.length > 0 && typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
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
