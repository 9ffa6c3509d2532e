import { Catch } from '@nestjs/common';
import type { Problem } from '../errors/problem.js';
import { AreaErrorFilter, type RenderedError } from './area-error.filter.js';

/** Area A: `{"error": {code, title, message}}`. */
@Catch()
export class AuthErrorFilter extends AreaErrorFilter {
  protected render(problem: Problem): RenderedError {
    const message = problem.fields.length > 0 ? fieldSummary(problem) : problem.message;
    return {
      contentType: 'application/json',
      body: { error: { code: problem.status, title: problem.title, message } },
    };
  }
}

function fieldSummary(problem: Problem): string {
  return problem.fields.map((f) => f.message).join('; ');
}
