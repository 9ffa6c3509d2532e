import { Catch } from '@nestjs/common';
import type { Problem } from '../errors/problem.js';
import { AreaErrorFilter, type RenderedError } from './area-error.filter.js';

/** Area B: RFC 7807 `application/problem+json`, with `errors` for validation failures. */
@Catch()
export class ProblemDetailsFilter extends AreaErrorFilter {
  protected render(problem: Problem): RenderedError {
    const body: Record<string, unknown> = {
      type: 'about:blank',
      title: problem.title,
      status: problem.status,
      detail: problem.message,
    };
    if (problem.fields.length > 0) {
      body.errors = problem.fields;
    }
    return { contentType: 'application/problem+json', body };
  }
}
