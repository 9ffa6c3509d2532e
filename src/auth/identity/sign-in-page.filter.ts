import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DomainError, httpStatusOf } from '../../common/errors/domain-error.js';
import { titleOf } from '../../common/errors/problem.js';
import { redactUrl } from '../../common/logging.js';
import { renderPage } from '../../status-pages/templates.js';

/**
 * The sign-in flow's failures as HTML pages (API.md 15): the browser is in the middle of a
 * sign-in, so every failure (the provider's refusal, a state that is missing, foreign or used, an
 * ID token that fails its checks, a provider that is down or slow, a disabled account, an identity
 * of another account) is a page that says what failed and leads back to the sign-in page. Nothing
 * else is on it: a fault of ours is logged under the request id, the page shows only that id.
 */
@Catch()
export class SignInPageFilter implements ExceptionFilter {
  private readonly logger = new Logger('SignIn');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    let status = 500;
    let message = `Something went wrong on our side; try again in a moment (request ${String(request.id)}).`;
    if (exception instanceof DomainError) {
      status = httpStatusOf(exception.kind);
      message = exception.message;
      if (exception.retryAfterSeconds !== undefined) {
        response.set('Retry-After', String(exception.retryAfterSeconds));
      }
    } else if (exception instanceof HttpException) {
      status = exception.getStatus();
      message = status === 400 ? 'The address is not right: sign in from the sign-in page.' : titleOf(status);
    } else {
      this.logger.error(
        { err: exception, requestId: request.id },
        `sign-in failed: ${request.method} ${redactUrl(request.path)}`,
      );
    }
    response
      .status(status)
      .type('text/html; charset=utf-8')
      .set('Cache-Control', 'no-store')
      .send(
        renderPage('error', {
          title: `${status} ${titleOf(status)}`,
          message,
          form: {
            href: '/status/sign-in',
            label: 'Back to the sign-in page',
            refused: 'The sign-in did not happen; no account was made or changed.',
          },
        }),
      );
  }
}
