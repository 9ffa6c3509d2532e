import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { EnvelopeErrorDto } from '../../common/dto/error-bodies.dto.js';

export type EnvelopeStatus = 400 | 401 | 403 | 404 | 409 | 500 | 502 | 503;

const ERRORS: Record<EnvelopeStatus, { description: string; short: string; long: string; message: string }> =
  {
    400: {
      description:
        'A required field is missing or not a string, both or neither of node/hostname, or an unknown image or size',
      short: 'Bad Request',
      long: 'Bad request syntax or unsupported method',
      message: 'name must be a string',
    },
    401: {
      description: 'No valid token',
      short: 'Unauthorized',
      long: 'No permission -- see authorization schemes',
      message:
        'A valid token or API key is required (Authorization: Bearer, X-Auth-Token, the session cookie, Authorization: ApiKey or X-API-Key)',
    },
    403: {
      description: 'The token has neither role agent nor admin',
      short: 'Forbidden',
      long: 'Request forbidden -- authorization will not help',
      message: 'This operation needs the role agent or admin',
    },
    404: {
      description: 'The node does not exist, or (release) has no active assignment',
      short: 'Not Found',
      long: 'Nothing matches the given URI',
      message: "Node 42 not found in cloud 'default'",
    },
    409: {
      description: 'The node is assigned already',
      short: 'Conflict',
      long: 'Request conflict',
      message: "Node 3 of cloud 'default' is assigned already",
    },
    500: {
      description: 'The cloud segment names no configured cloud (or the path matches no operation)',
      short: 'Internal Server Error',
      long: 'Server got itself in trouble',
      message: "Cloud 'nope' is not valid or the path is wrong",
    },
    502: {
      description: 'The cloud (or the assignment facility) failed or answered something unusable',
      short: 'Bad Gateway',
      long: 'Invalid responses from another server/proxy',
      message: "Cloud 'ostack': listing servers failed: the cloud answered 500 (Unexpected API Error)",
    },
    503: {
      description: 'The cloud did not answer within the upstream timeout',
      short: 'Service Unavailable',
      long: 'The server cannot process the request due to a high load',
      message: "Cloud 'ostack': listing servers failed: 127.0.0.1:5000 did not answer within 15 s",
    },
  };

/** A status whose description and example message differ from the common ones above. */
export interface EnvelopeErrorCase {
  readonly status: EnvelopeStatus;
  readonly description: string;
  readonly message: string;
}

/** Documents the area-C error envelope for each of these statuses, with an example body. */
export function ApiEnvelopeErrors(
  ...statuses: (EnvelopeStatus | EnvelopeErrorCase)[]
): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((entry) => {
      const status = typeof entry === 'number' ? entry : entry.status;
      const error = typeof entry === 'number' ? ERRORS[status] : { ...ERRORS[status], ...entry };
      return ApiResponse({
        status,
        type: EnvelopeErrorDto,
        description: error.description,
        example: {
          status: 'error',
          message: error.message,
          status_code: status,
          status_long_message: error.long,
          status_short_message: error.short,
        },
      });
    }),
  );
}
