import { applyDecorators, UseFilters } from '@nestjs/common';
import { ApiBadRequestResponse, ApiNotFoundResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';
import { ProblemDetailsFilter } from '../common/filters/problem-details.filter.js';

/**
 * What the controllers of area B's reads by uuid share: a token from any carrier, area B's
 * problem documents, and the errors every such route can answer.
 */
export function RegistryReads(): ClassDecorator {
  return applyDecorators(
    ApiAuth(),
    ApiUnauthorizedResponse({ type: ProblemDto, description: 'No valid token' }),
    ApiNotFoundResponse({ type: ProblemDto, description: 'Nothing with this uuid visible to the caller' }),
    ApiBadRequestResponse({ type: ProblemDto, description: 'A bad uuid or query parameter' }),
    UseFilters(ProblemDetailsFilter),
  );
}
