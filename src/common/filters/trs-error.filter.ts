import { Catch } from '@nestjs/common';
import type { Problem } from '../errors/problem.js';
import { AreaErrorFilter, type RenderedError } from './area-error.filter.js';

/** GA4GH TRS (API.md 10.2): its `Error` schema, `{"code": <status>, "message"}`. */
@Catch()
export class TrsErrorFilter extends AreaErrorFilter {
  protected render(problem: Problem): RenderedError {
    const message =
      problem.fields.length > 0 ? problem.fields.map((field) => field.message).join('; ') : problem.message;
    return { contentType: 'application/json', body: { code: problem.status, message } };
  }
}
