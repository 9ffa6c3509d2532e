import { Catch } from '@nestjs/common';
import type { Problem } from '../errors/problem.js';
import { AreaErrorFilter, type RenderedError } from './area-error.filter.js';

/** The phrase pairs of Python's http.server, which the original system answered with. */
export const ENVELOPE_PHRASES: Record<number, [short: string, long: string]> = {
  400: ['Bad Request', 'Bad request syntax or unsupported method'],
  401: ['Unauthorized', 'No permission -- see authorization schemes'],
  403: ['Forbidden', 'Request forbidden -- authorization will not help'],
  404: ['Not Found', 'Nothing matches the given URI'],
  409: ['Conflict', 'Request conflict'],
  413: ['Payload Too Large', 'Entity is too large'],
  429: ['Too Many Requests', 'The user has sent too many requests in a given amount of time'],
  500: ['Internal Server Error', 'Server got itself in trouble'],
  502: ['Bad Gateway', 'Invalid responses from another server/proxy'],
  503: ['Service Unavailable', 'The server cannot process the request due to a high load'],
  504: ['Gateway Timeout', 'The gateway server did not receive a timely response'],
  // Python gives 507 no description; RFC 4918's reads as the others do.
  507: ['Insufficient Storage', 'The server is unable to store what is needed to complete the request'],
};

/** Area C: the seed's envelope `{"status": "error", message, status_code, status_long_message, status_short_message}`. */
@Catch()
export class EnvelopeFilter extends AreaErrorFilter {
  protected render(problem: Problem): RenderedError {
    const [short, long] = ENVELOPE_PHRASES[problem.status] ?? [problem.title, problem.title];
    const message =
      problem.fields.length > 0 ? problem.fields.map((f) => f.message).join('; ') : problem.message;
    return {
      contentType: 'application/json',
      body: {
        status: 'error',
        message,
        status_code: problem.status,
        status_long_message: long,
        status_short_message: short,
      },
    };
  }
}
