import { Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { closeToOtherOrigins } from '../cross-origin.js';
import { toProblem, type Problem } from '../errors/problem.js';
import { markCallersMistake, redactUrl } from '../logging.js';

export interface RenderedError {
  contentType: string;
  body: unknown;
}

/**
 * The one mechanism behind the three areas' error bodies: reduce whatever was thrown to a
 * Problem, log what was unexpected (with the request id, never in the reply), and let
 * the area render its own body.
 */
export abstract class AreaErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const problem = this.adapt(toProblem(exception), request);
    if (problem.fault !== undefined) {
      this.logger.error(
        { requestId: request.id, err: exception },
        `${problem.fault} (${request.method} ${redactUrl(request.path)})`,
      );
    } else if (!problem.expected) {
      this.logger.error(
        { requestId: request.id, err: exception },
        `unexpected error on ${request.method} ${redactUrl(request.path)}`,
      );
    }
    if (response.headersSent) {
      // A streamed reply failed part-way: the client sees a cut connection, not a second body.
      response.destroy();
      return;
    }
    closeToOtherOrigins(response);
    if (problem.callersMistake) {
      markCallersMistake(response);
    }
    if (problem.retryAfterSeconds !== undefined) {
      response.setHeader('Retry-After', String(Math.max(1, Math.ceil(problem.retryAfterSeconds))));
    }
    if (problem.challenge !== undefined) {
      response.setHeader('WWW-Authenticate', problem.challenge);
    }
    const rendered = this.render(problem, request);
    const payload = JSON.stringify(rendered.body);
    response.status(problem.status).setHeader('Content-Type', `${rendered.contentType}; charset=utf-8`);
    // Set, not left to Node: a HEAD reply (no body sent) must say the length of the GET's.
    response.setHeader('Content-Length', Buffer.byteLength(payload));
    response.end(payload);
  }

  /** A hook for an area that turns some statuses into others (area C's unknown path). */
  protected adapt(problem: Problem, _request: Request): Problem {
    return problem;
  }

  protected abstract render(problem: Problem, request: Request): RenderedError;
}
