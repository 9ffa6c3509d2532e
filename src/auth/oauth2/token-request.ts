import { OAuthError } from './oauth-error.js';

/**
 * How a client said who it is (RFC 6749 2.3.1, 3.2.1): by HTTP Basic, or by `client_id` (and
 * `client_secret`) in the body. A public client sends its `client_id` alone.
 */
export interface ClientAuthentication {
  clientId: string;
  /** Absent when the client sent no secret (a public client, RFC 6749 4.1.3). */
  clientSecret?: string;
  /** Whether the client authenticated with HTTP Basic. */
  basic: boolean;
}

/** A token request (RFC 6749 3.2) read from its form body and Authorization header. */
export interface TokenRequest {
  grantType: string;
  /** The client, as it said; undefined when it said nothing. Whether that suffices is the grant's rule. */
  client: ClientAuthentication | undefined;
  /** A parameter of the form (each given at most once); undefined when absent. */
  param(name: string): string | undefined;
}

const FORM = 'application/x-www-form-urlencoded';
const MAX_CREDENTIAL = 256;

/**
 * Reads a token request: the form body and the Authorization header. Throws OAuthError with RFC
 * 6749's code: a parameter given twice, two authentication methods, no grant type, or a body that
 * is not a form are `invalid_request`; credentials that cannot be read are `invalid_client`.
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
  for (const name of new Set(form.keys())) {
    if (form.getAll(name).length > 1) {
      throw new OAuthError(
        'invalid_request',
        400,
        `The parameter ${name.slice(0, 64)} is given more than once`,
      );
    }
  }
  const grantType = form.get('grant_type');
  if (grantType === null || grantType === '') {
    throw new OAuthError(
      'invalid_request',
      400,
      'grant_type is required (client_credentials, authorization_code or refresh_token)',
    );
  }
  const bodyId = form.get('client_id') ?? undefined;
  const bodySecret = form.get('client_secret') ?? undefined;
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
    (clientId === undefined && clientSecret !== undefined) ||
    clientId === '' ||
    clientSecret === '' ||
    (clientId?.length ?? 0) > MAX_CREDENTIAL ||
    (clientSecret?.length ?? 0) > MAX_CREDENTIAL
  ) {
    throw new OAuthError('invalid_client', 401, CLIENT_AUTHENTICATION_FAILED, basic !== undefined);
  }
  return {
    grantType,
    client: clientId === undefined ? undefined : { clientId, clientSecret, basic: basic !== undefined },
    param: (name) => form.get(name) ?? undefined,
  };
}

export const CLIENT_AUTHENTICATION_FAILED =
  'Client authentication failed: send client_id and client_secret in the body, or HTTP Basic';

/**
 * RFC 6749 3.3: space-delimited, each one of `allowed`; none means all of them. Answered in the
 * order asked, without repeats.
 */
export function parseScopes(scope: string | undefined, allowed: readonly string[]): string[] {
  const asked = (scope ?? '').split(' ').filter((item) => item !== '');
  if (asked.length === 0) {
    return [...allowed];
  }
  const unknown = asked.find((item) => !allowed.includes(item));
  if (unknown !== undefined) {
    throw new OAuthError(
      'invalid_scope',
      400,
      `Unknown scope '${unknown.slice(0, 64)}'; known: ${allowed.join(' ')}`,
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
