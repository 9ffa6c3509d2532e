import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request } from 'express';
import { titleOf, type Problem } from '../errors/problem.js';
import { AuthErrorFilter } from './auth-error.filter.js';
import { EnvelopeFilter } from './envelope.filter.js';
import { ProblemDetailsFilter } from './problem-details.filter.js';
import { TrsErrorFilter } from './trs-error.filter.js';

export type Area = 'auth' | 'registry' | 'orchestration' | 'trs';

/**
 * Which area a path belongs to (API.md section 0): its errors take that area's shape. GA4GH TRS
 * (API.md 10.2), under both its prefixes, answers in TRS's own shape.
 */
export function areaOf(path: string): Area {
  if (/^\/api\/v1\/(auth|users)(?=$|[/.?])/.test(path)) {
    return 'auth';
  }
  if (/^\/(ga4gh\/trs\/v2|api\/ga4gh\/v2)(?=$|[/?])/.test(path)) {
    return 'trs';
  }
  if (/^\/api\/v1(?=$|[/.?])/.test(path)) {
    return 'orchestration';
  }
  return 'registry';
}

/** Area C answers a path that matches no operation with the seed's 500, not a 404. */
class UnknownPathEnvelopeFilter extends EnvelopeFilter {
  protected override adapt(problem: Problem, request: Request): Problem {
    if (problem.status !== 404) {
      return problem;
    }
    return {
      ...problem,
      status: 500,
      title: titleOf(500),
      message: `Cloud is not valid or the path is wrong: ${request.method} ${request.path}`,
    };
  }
}

/**
 * Global filter for what no controller's filter saw: unmatched routes and errors raised
 * before routing (body too large, malformed JSON). It answers in the shape of the path's area.
 */
@Catch()
export class FallbackErrorFilter implements ExceptionFilter {
  private readonly filters: Record<Area, ExceptionFilter> = {
    auth: new AuthErrorFilter(),
    registry: new ProblemDetailsFilter(),
    orchestration: new UnknownPathEnvelopeFilter(),
    trs: new TrsErrorFilter(),
  };

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<Request>();
    this.filters[areaOf(request.path)].catch(exception, host);
  }
}
