import { createHash } from 'node:crypto';
import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiResponse } from '@nestjs/swagger';
import type { Response } from 'express';

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
 * A conditional read's reply (ConditionalRead): the handler returns its body wrapped, and the
 * app's HTTP adapter sends it with sendConditionally. Done there rather than in an interceptor:
 * Nest's interceptor chain (observables, async scopes) cost each status read more than the
 * tagging itself.
 */
export class ConditionalReply<T> {
  private serialised?: { json: string; etag: string };

  constructor(readonly body: T) {}

  /** The body's JSON and ETag, worked out once for every request this reply answers. */
  representation(): { json: string; etag: string } {
    if (this.serialised === undefined) {
      const json = JSON.stringify(this.body);
      this.serialised = { json, etag: entityTagOf(json) };
    }
    return this.serialised;
  }
}

/** The body of a conditional read, to be tagged with its ETag and answered 304 when unchanged. */
export function conditional<T>(body: T): ConditionalReply<T> {
  return new ConditionalReply(body);
}

const sharedReplies = new WeakMap<object, ConditionalReply<unknown>>();

/**
 * `conditional(bodyOf(source))`, one reply for every request answered from the same `source`: the
 * result of a read that identical requests share (CoalescedReads), whose body depends on nothing
 * else. Under load a round of identical page reads is then serialised and hashed once, not once
 * per request (at 50 connections on `?limit=20`, the largest share of the request's own CPU).
 */
export function sharedConditional<S extends object, T>(
  source: S,
  bodyOf: (source: S) => T,
): ConditionalReply<T> {
  let reply = sharedReplies.get(source) as ConditionalReply<T> | undefined;
  if (reply === undefined) {
    reply = conditional(bodyOf(source));
    sharedReplies.set(source, reply);
  }
  return reply;
}

/**
 * Serialises a conditional read's body once, tags it with entityTagOf and answers 304 without a
 * body when the request's If-None-Match names that tag.
 */
export function sendConditionally(
  response: Response,
  reply: ConditionalReply<unknown>,
  statusCode = 200,
): void {
  const { json, etag } = reply.representation();
  response.set({ ETag: etag, 'Cache-Control': REVALIDATE });
  if (matchesIfNoneMatch(response.req.get('if-none-match'), etag)) {
    response.status(304).end();
    return;
  }
  response.status(statusCode).type('application/json').send(json);
}

/**
 * A read that answers `ETag` and 304 to a matching `If-None-Match`, as documented in the OpenAPI
 * document: its handler returns `conditional(body)` (or a web Response, sent as it is).
 */
export function ConditionalRead(): MethodDecorator {
  return applyDecorators(
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
