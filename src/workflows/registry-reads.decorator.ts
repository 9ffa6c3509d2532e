import { applyDecorators, UseFilters } from '@nestjs/common';
import { ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';
import { ProblemDetailsFilter } from '../common/filters/problem-details.filter.js';

/**
 * What the controllers of area B's reads by uuid share: a token from any carrier, area B's
 * problem documents, and the 401 every such route can answer. The 400 and 404 of a uuid in the
 * path are documented with the finished document (finishDocument), with the bodies they have.
 */
export function RegistryReads(): ClassDecorator {
  return applyDecorators(
    ApiAuth(),
    ApiUnauthorizedResponse({ type: ProblemDto, description: 'No valid token' }),
    UseFilters(ProblemDetailsFilter),
  );
}
