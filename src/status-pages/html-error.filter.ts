import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { AuthUser } from '../auth/auth-user.js';
import { DomainError, httpStatusOf } from '../common/errors/domain-error.js';
import { titleOf } from '../common/errors/problem.js';
import { redactUrl } from '../common/logging.js';
import { renderPage } from './templates.js';
import { closeToOtherOrigins } from '../common/cross-origin.js';

const MESSAGES: Record<number, string> = {
  400: 'The address is not right: ',
  401: 'Your session is not valid any more (it may have expired). Sign in again, or forget the session to see the public workflows.',
  404: 'There is no such workflow, or it is private and you may not see it.',
};

/**
 * The status pages' errors as HTML pages, in the same statuses as the API's (a private workflow
 * is a 404 page, exactly like an unknown one). Unexpected faults are logged, and the page
 * carries the request id, never the fault.
 */
@Catch()
export class HtmlErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('StatusPages');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    let status = 500;
    let detail = '';
    if (exception instanceof DomainError) {
      status = httpStatusOf(exception.kind);
      detail = exception.message;
      if (exception.retryAfterSeconds !== undefined) {
        response.set('Retry-After', String(exception.retryAfterSeconds));
      }
    } else if (exception instanceof HttpException) {
      status = exception.getStatus();
    }
    if (status >= 500) {
      this.logger.error(
        { err: exception, requestId: request.id },
        `status page failed: ${request.method} ${redactUrl(request.originalUrl)}`,
      );
    }
    const message =
      status === 400
        ? `${MESSAGES[400]}${detail}`
        : (MESSAGES[status] ??
          (status >= 500
            ? `Something went wrong on our side; try again in a moment (request ${String(request.id)}).`
            : detail || titleOf(status)));
    const user = request.user as AuthUser | undefined;
    closeToOtherOrigins(response);
    response
      .status(status)
      .type('text/html; charset=utf-8')
      .set('Cache-Control', 'no-store')
      .send(
        renderPage('error', {
          title: `${status} ${titleOf(status)}`,
          message,
          viewer: user?.username,
          here: request.method === 'GET' ? request.originalUrl : undefined,
          expired: status === 401,
        }),
      );
  }
}
