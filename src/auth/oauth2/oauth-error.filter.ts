import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { toProblem } from '../../common/errors/problem.js';
import { OAuthError, type OAuthErrorCode } from './oauth-error.js';

/**
 * The token endpoint's error shape: RFC 6749 5.2's `{"error", "error_description"}`, never cached.
 * What is not an OAuthError keeps its status (a 413 body, a database that is away) with the
 * nearest code; only our own faults are logged.
 */
@Catch()
export class OAuthErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('OAuth2');

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    let status: number;
    let code: OAuthErrorCode | 'server_error';
    let description: string;
    if (exception instanceof OAuthError) {
      status = exception.status;
      code = exception.code;
      description = exception.message;
      if (exception.basic && status === 401) {
        response.setHeader('WWW-Authenticate', 'Basic realm="oauth2", charset="UTF-8"');
      }
      if (exception.retryAfterSeconds !== undefined) {
        response.setHeader('Retry-After', String(Math.max(1, Math.ceil(exception.retryAfterSeconds))));
      }
    } else {
      const problem = toProblem(exception);
      status = problem.status;
      code = status < 500 ? 'invalid_request' : status === 503 ? 'temporarily_unavailable' : 'server_error';
      description = problem.message;
      if (!problem.expected) {
        this.logger.error({ err: exception }, 'token request failed');
      }
    }
    if (response.headersSent) {
      response.destroy();
      return;
    }
    response
      .status(status)
      .setHeader('Cache-Control', 'no-store')
      .setHeader('Pragma', 'no-cache')
      .setHeader('Content-Type', 'application/json; charset=utf-8');
    response.end(JSON.stringify({ error: code, error_description: description }));
  }
}
