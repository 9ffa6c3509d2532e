import { applyDecorators, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiQuery } from '@nestjs/swagger';
import type { Request } from 'express';
import { DEFAULT_CLOUD } from './cloud.registry.js';

/** The `<cloud>` path segment, `default` when the path leaves it out. */
export const CloudName = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const cloud = context.switchToHttp().getRequest<Request>().params.cloud;
  return typeof cloud === 'string' ? cloud : DEFAULT_CLOUD;
});

// The document shows each path with and without the cloud as two operations (openapi-document.ts).
const PATH_FORMS = '`.json` may be appended to the path with the same reply.';

/** Swagger for one area-C operation: id, summary, the optional cloud segment, the `auth_token` query carrier. */
export function Operation(
  operationId: string,
  summary: string,
  withCloud = true,
  more?: string,
): MethodDecorator {
  const description = [withCloud ? PATH_FORMS : '', more ?? ''].filter(Boolean).join('\n\n');
  return applyDecorators(
    ApiOperation({ operationId, summary, description: description || undefined }),
    ...(withCloud
      ? [
          ApiParam({
            name: 'cloud',
            description: 'A cloud of CLOUDS_FILE; may be left out of the path for `default`',
            example: 'default',
            schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', default: DEFAULT_CLOUD },
          }),
        ]
      : []),
    ApiQuery({
      name: 'auth_token',
      type: String,
      required: false,
      description: 'The token, as the original system took it (also accepted as `auth_token` in a JSON body)',
    }),
  );
}
