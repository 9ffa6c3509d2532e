export type ErrorKind =
  | 'invalid_input'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'rate_limited'
  | 'upstream_failed'
  | 'upstream_timeout'
  | 'upstream_rate_limited'
  | 'gateway_timeout'
  | 'database_unavailable'
  | 'insufficient_storage'
  | 'invalid_route';

export interface FieldError {
  field: string;
  message: string;
}

/**
 * What services throw. The area filters turn it into their own body; services never
 * speak HTTP. `retryAfterSeconds` travels to a `Retry-After` header (`rate_limited`,
 * `database_unavailable`).
 */
export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly fields: FieldError[] = [],
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/**
 * RFC 6750 3.1's `insufficient_scope`: the token is valid, but not for this operation. A 403 in
 * the area's shape, with the `WWW-Authenticate` challenge naming the scope needed.
 */
export class InsufficientScope extends DomainError {
  readonly challenge: string;

  constructor(readonly scope: string) {
    super('forbidden', `insufficient_scope: this operation needs a token with the scope '${scope}'`);
    this.challenge = `Bearer error="insufficient_scope", scope="${scope}"`;
  }
}

export function httpStatusOf(kind: ErrorKind): number {
  switch (kind) {
    case 'invalid_input':
      return 400;
    case 'unauthorized':
      return 401;
    case 'forbidden':
      return 403;
    case 'not_found':
      return 404;
    case 'conflict':
      return 409;
    case 'payload_too_large':
      return 413;
    case 'rate_limited':
      return 429;
    case 'upstream_failed':
      return 502;
    case 'upstream_timeout':
    case 'upstream_rate_limited':
    case 'database_unavailable':
      return 503;
    case 'gateway_timeout':
      // An upstream the request depends on (a registry) did not answer in time.
      return 504;
    case 'insufficient_storage':
      return 507;
    case 'invalid_route':
      // The seed's own status for an unknown cloud or a wrong path under /api/v1.
      return 500;
  }
}

/** A reply of status 5xx that is still the caller's mistake (the seed's 500 for a wrong cloud or path). */
export function isCallersMistake(kind: ErrorKind): boolean {
  return kind === 'invalid_route';
}
