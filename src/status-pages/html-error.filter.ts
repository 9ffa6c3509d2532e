import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { AuthUser } from '../auth/auth-user.js';
import { DomainError, httpStatusOf } from '../common/errors/domain-error.js';
import { titleOf } from '../common/errors/problem.js';
import { redactUrl } from '../common/logging.js';
import { renderPage } from './templates.js';
import { closeToOtherOrigins } from '../common/cross-origin.js';
import { Clock } from '../common/clock.js';
import { minuteUp, utcMinute } from '../common/utc-minute.js';

const MESSAGES: Record<number, string> = {
  400: 'The address is not right: ',
  401: 'Your session is not valid any more (it may have expired). Sign in again, or forget the session to see the public workflows.',
  404: 'There is no such workflow, or it is private and you may not see it.',
};

/**
 * The page a form was sent from, named by the form's handler before it acts: a refusal of the
 * form (API.md 11, "Run tests now") then says what did not happen and links back to the page.
 */
export interface FormPage {
  href: string;
  /** The link's text, e.g. "Back to the workflow". */
  label: string;
  /** What did not happen, e.g. "The tests were not started." */
  refused: string;
  /** Leads the time of `Retry-After`, e.g. "The next run can be asked for". */
  retry: string;
}

export function setFormPage(response: Response, page: FormPage): void {
  response.locals.formPage = page;
}

function formPageOf(response: Response): FormPage | undefined {
  const page: unknown = response.locals.formPage;
  return typeof page === 'object' && page !== null && 'href' in page ? (page as FormPage) : undefined;
}

/**
 * The status pages' errors as HTML pages, in the same statuses as the API's (a private workflow
 * is a 404 page, exactly like an unknown one). Unexpected faults are logged, and the page
 * carries the request id, never the fault; a DomainError's detail, written for the caller as the
 * API's, is shown whatever its status (an upstream refusal says what the CI service answered).
 */
@Catch()
export class HtmlErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('StatusPages');

  constructor(private readonly clock: Clock) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    let status = 500;
    let detail = '';
    let retryAt: Date | undefined;
    if (exception instanceof DomainError) {
      status = httpStatusOf(exception.kind);
      detail = exception.message;
      if (exception.retryAfterSeconds !== undefined) {
        response.set('Retry-After', String(exception.retryAfterSeconds));
        // Shown to the minute, rounded up: never earlier than the answer allows.
        retryAt = minuteUp(new Date(this.clock.nowMs() + exception.retryAfterSeconds * 1000));
      }
    } else if (exception instanceof HttpException) {
      status = exception.getStatus();
    }
    const unexpected = status >= 500 && !(exception instanceof DomainError);
    if (unexpected) {
      this.logger.error(
        { err: exception, requestId: request.id },
        `status page failed: ${request.method} ${redactUrl(request.originalUrl)}`,
      );
    }
    const message =
      status === 400
        ? `${MESSAGES[400]}${detail}`
        : (MESSAGES[status] ??
          (unexpected
            ? `Something went wrong on our side; try again in a moment (request ${String(request.id)}).`
            : detail || titleOf(status)));
    const user = request.user as AuthUser | undefined;
    const form = formPageOf(response);
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
          here: request.method === 'GET' ? request.originalUrl : form?.href,
          expired: status === 401,
          form,
          retry: retryAt && {
            lead: form?.retry ?? 'Try again at',
            iso: retryAt.toISOString(),
            text: utcMinute(retryAt),
          },
        }),
      );
  }
}
