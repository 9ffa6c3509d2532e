import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config.js';
import { assignRequestId } from './request-id.js';

/** Query members that carry secrets and must not reach a log line. */
const SECRET_QUERY = /([?&](?:auth_token|token|password)=)[^&]*/gi;

export function redactUrl(url: string | undefined): string | undefined {
  return url?.replace(SECRET_QUERY, '$1[Redacted]');
}

/** Structured logs: JSON lines in production, readable lines otherwise; never a password or token. */
export function loggerParams(config: AppConfig): Params {
  return {
    pinoHttp: {
      level: config.logLevel,
      genReqId: (request: IncomingMessage, response: ServerResponse) =>
        typeof request.id === 'string' ? request.id : assignRequestId(request, response),
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
      serializers: {
        req: (req: { id: unknown; method: string; url: string; headers: Record<string, unknown> }) => ({
          id: req.id,
          method: req.method,
          url: redactUrl(req.url),
          headers: { ...req.headers },
        }),
      },
      customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
      // JSON lines in production and tests; readable lines for a developer's terminal.
      transport:
        config.environment === 'development'
          ? { target: 'pino-pretty', options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l' } }
          : undefined,
      quietReqLogger: true,
      autoLogging: { ignore: (req) => req.url === '/health/live' || req.url === '/health/ready' },
    },
  };
}
