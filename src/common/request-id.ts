import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request id: the caller's `X-Request-Id` when it is a sane token, else a new UUID.
 * Set on the reply here, before any parser can fail, so every reply carries it.
 */
export function assignRequestId(request: IncomingMessage, response: ServerResponse): string {
  const offered = request.headers['x-request-id'];
  const id = typeof offered === 'string' && ACCEPTABLE.test(offered) ? offered : randomUUID();
  response.setHeader('X-Request-Id', id);
  return id;
}

declare module 'http' {
  interface IncomingMessage {
    /** The request id, set by the first middleware (see configureApp); absent only outside the app. */
    id?: string;
  }
}
