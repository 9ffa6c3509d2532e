import { isRegistryClientScope, REGISTRY_CLIENT_SCOPES } from '../../auth/scopes.js';

/** RFC 6749 5.2's error codes this endpoint answers (plus 429's, for the failed-authentication limit). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
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

/** A client-credentials grant request (RFC 6749 4.4.2), its client authenticated by either method of 2.3.1. */
export interface TokenRequest {
  clientId: string;
  clientSecret: string;
  /** The scopes asked for, in the order given, without repeats; all when the request names none. */
  scopes: string[];
  /** Whether the client authenticated with HTTP Basic. */
  basic: boolean;
}

const FORM = 'application/x-www-form-urlencoded';
const MAX_CREDENTIAL = 256;

/**
 * Reads a token request: the form body (`grant_type`, `scope`, and `client_id`/`client_secret`
 * unless the client uses HTTP Basic) and the Authorization header. Throws OAuthError with RFC
 * 6749's code: a parameter given twice, two authentication methods, or a body that is not a form
 * are `invalid_request`; no client authentication is `invalid_client`.
 */
export function parseTokenRequest(
  contentType: string | undefined,
  body: Buffer | undefined,
  authorization: string | undefined,
): TokenRequest {
  const mediaType = contentType?.split(';')[0].trim().toLowerCase();
  if (body !== undefined && body.length > 0 && mediaType !== FORM) {
    throw new OAuthError('invalid_request', 400, `The token request must be sent as ${FORM}`);
  }
  const form = new URLSearchParams(body?.toString('utf8') ?? '');
  const one = (name: string): string | undefined => {
    const values = form.getAll(name);
    if (values.length > 1) {
      throw new OAuthError('invalid_request', 400, `The parameter ${name} is given more than once`);
    }
    return values[0];
  };
  const grantType = one('grant_type');
  const scope = one('scope');
  const bodyId = one('client_id');
  const bodySecret = one('client_secret');
  if (grantType === undefined || grantType === '') {
    throw new OAuthError('invalid_request', 400, 'grant_type is required (client_credentials)');
  }
  if (grantType !== 'client_credentials') {
    throw new OAuthError(
      'unsupported_grant_type',
      400,
      `The grant type '${grantType.slice(0, 64)}' is not supported: only client_credentials`,
    );
  }
  const basic = basicCredentials(authorization);
  if (basic && (bodyId !== undefined || bodySecret !== undefined)) {
    throw new OAuthError(
      'invalid_request',
      400,
      'The client authenticated twice (HTTP Basic and the body): use one method',
    );
  }
  const clientId = basic?.id ?? bodyId;
  const clientSecret = basic?.secret ?? bodySecret;
  if (
    !clientId ||
    !clientSecret ||
    clientId.length > MAX_CREDENTIAL ||
    clientSecret.length > MAX_CREDENTIAL
  ) {
    throw new OAuthError(
      'invalid_client',
      401,
      'Client authentication failed: send client_id and client_secret in the body, or HTTP Basic',
      basic !== undefined,
    );
  }
  return { clientId, clientSecret, scopes: parseScopes(scope), basic: basic !== undefined };
}

/** RFC 6749 3.3: space-delimited, each one of LifeMonitor's; none means all. */
export function parseScopes(scope: string | undefined): string[] {
  const asked = (scope ?? '').split(' ').filter((item) => item !== '');
  if (asked.length === 0) {
    return [...REGISTRY_CLIENT_SCOPES];
  }
  const unknown = asked.find((item) => !isRegistryClientScope(item));
  if (unknown !== undefined) {
    throw new OAuthError(
      'invalid_scope',
      400,
      `Unknown scope '${unknown.slice(0, 64)}'; known: ${REGISTRY_CLIENT_SCOPES.join(' ')}`,
    );
  }
  return [...new Set(asked)];
}

/**
 * HTTP Basic client credentials (RFC 6749 2.3.1: each part form-urlencoded before encoding); undefined
 * without an `Authorization: Basic` header. A Basic header that does not decode fails the client's
 * authentication.
 */
function basicCredentials(authorization: string | undefined): { id: string; secret: string } | undefined {
  const match = /^\s*Basic(?:\s+(\S*))?\s*$/i.exec(authorization ?? '');
  if (!match) {
    return undefined;
  }
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  try {
    if (colon < 1) {
      throw new Error('no colon');
    }
    const decode = (part: string): string => decodeURIComponent(part.replace(/\+/g, ' '));
    return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
  } catch {
    throw new OAuthError(
      'invalid_client',
      401,
      'The HTTP Basic credentials do not decode to client_id:client_secret',
      true,
    );
  }
}
