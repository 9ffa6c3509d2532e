import { createHash } from 'node:crypto';
import {
  applyDecorators,
  Injectable,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { ApiHeader, ApiResponse } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { map, type Observable } from 'rxjs';

/**
 * True when an `If-None-Match` header matches an entity tag (RFC 9110 13.1.2: `*`, or any
 * listed tag equal under the weak comparison). Unlike Express's `req.fresh`, a request's
 * `Cache-Control: no-cache` does not turn the match off: that directive is for caches, and
 * fetch() adds it to every request that carries its own If-None-Match.
 */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) {
    return false;
  }
  if (header.trim() === '*') {
    return true;
  }
  const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => opaque(tag) === opaque(etag));
}

/** A strong entity tag of a representation: its bytes' SHA-256, shortened (collisions need ~2^80 replies). */
export function entityTagOf(bytes: string | Buffer): string {
  return `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`;
}

/** Replies are the caller's (private), and a cache must ask again every time (no-cache) with the tag. */
export const REVALIDATE = 'private, no-cache';

/**
 * Serialises a JSON reply once, tags it with entityTagOf and answers 304 without a body when
 * the request's If-None-Match names that tag. A reply that is already a web Response (a list
 * streamed in batches) goes through untagged: its bytes are not known before they are sent.
 */
@Injectable()
export class EntityTagInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    return next.handle().pipe(
      map((body: unknown) => {
        if (body === undefined || body === null || body instanceof globalThis.Response) {
          return body;
        }
        const json = JSON.stringify(body);
        const headers = { ETag: entityTagOf(json), 'Cache-Control': REVALIDATE };
        if (matchesIfNoneMatch(request.get('if-none-match'), headers.ETag)) {
          return new globalThis.Response(null, { status: 304, headers });
        }
        response.set(headers);
        response.type('application/json');
        return json;
      }),
    );
  }
}

/**
 * A read that answers `ETag` and 304 to a matching `If-None-Match` (EntityTagInterceptor), as
 * documented in the OpenAPI document.
 */
export function ConditionalRead(): MethodDecorator {
  return applyDecorators(
    UseInterceptors(EntityTagInterceptor),
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description:
        'The ETag of a reply seen before: while the reply is unchanged the answer is a 304 without a body',
      schema: { type: 'string', example: '"3q2-7wEAAAD2Zm9vYmFyYmF6cXV4cXV1"' },
    }),
    ApiResponse({
      status: 304,
      description:
        'Not modified: If-None-Match names the current ETag (the hash of the reply 200 would give); no body',
      headers: {
        ETag: {
          description: 'The entity tag of the current reply',
          schema: { type: 'string', example: '"3q2-7wEAAAD2Zm9vYmFyYmF6cXV4cXV1"' },
        },
        'Cache-Control': {
          description: 'Always `private, no-cache`',
          schema: { type: 'string', example: REVALIDATE },
        },
      },
    }),
  );
}
