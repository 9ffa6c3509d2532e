import { applyDecorators } from '@nestjs/common';
import { ApiBadRequestResponse, ApiNotFoundResponse } from '@nestjs/swagger';
import { AuthErrorDto, authErrorExample } from '../common/dto/error-bodies.dto.js';
import { EXAMPLE } from '../common/openapi-examples.js';

/** The 400 and 404 of a user id in the path, with the bodies the service sends. */
export function ApiUserIdErrors(badRequest = 'The id is not a positive integer'): MethodDecorator {
  return applyDecorators(
    ApiBadRequestResponse({
      type: AuthErrorDto,
      description: badRequest,
      example: authErrorExample(400, 'id must be a positive integer'),
    }),
    ApiNotFoundResponse({
      type: AuthErrorDto,
      description: 'No user with this id',
      example: authErrorExample(404, `No user ${EXAMPLE.userId}`),
    }),
  );
}
