/** RFC 6749 5.2's error codes the token endpoint answers (plus 429's, for the failed-authentication limit). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'temporarily_unavailable';

/** A refused token request: rendered as RFC 6749 5.2's JSON by OAuthErrorFilter. */
export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly status: number,
    message: string,
    /** The client tried HTTP Basic: a 401 then carries `WWW-Authenticate: Basic` (RFC 6749 5.2). */
    readonly basic = false,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'OAuthError';
  }
}
