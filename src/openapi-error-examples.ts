import type { OperationObject, ParameterObject } from '@nestjs/swagger';
import { authErrorExample, problemExample } from './common/dto/error-bodies.dto.js';
import { titleOf } from './common/errors/problem.js';
import { ENVELOPE_PHRASES } from './common/filters/envelope.filter.js';
import type { Area } from './common/filters/fallback.filter.js';
import { BEARER_SCHEME, REGISTRY_CLIENT_SCHEME } from './auth/api-auth.decorator.js';

// The error bodies the document shows, each as the filters would send it for its status: this
// changes with an area's error shape or a message of the service, not with how the document is finished.

/** The error bodies: the three areas', TRS's, and RFC 6749 5.2's of the OAuth2 token endpoint. */
export type ErrorArea = 'AuthErrorDto' | 'ProblemDto' | 'EnvelopeErrorDto' | 'TrsErrorDto' | 'OAuthErrorDto';
export const ERROR_SCHEMAS = new Set<string>([
  'AuthErrorDto',
  'ProblemDto',
  'EnvelopeErrorDto',
  'TrsErrorDto',
  'OAuthErrorDto',
]);

/** The error body of each area (API.md section 0), as the filters pick it from the path. */
export const ERROR_SCHEMA_OF: Record<Area, ErrorArea> = {
  auth: 'AuthErrorDto',
  registry: 'ProblemDto',
  orchestration: 'EnvelopeErrorDto',
  trs: 'TrsErrorDto',
};

/** Whether an example the operation gives already is a body of this shape and status (then it is kept). */
export function exampleMatches(area: ErrorArea, status: number, example: unknown): boolean {
  if (typeof example !== 'object' || example === null) {
    return false;
  }
  const body = example as Record<string, unknown>;
  switch (area) {
    case 'AuthErrorDto':
      return (body.error as Record<string, unknown> | undefined)?.code === status;
    case 'ProblemDto':
      return body.status === status;
    case 'EnvelopeErrorDto':
      return body.status_code === status;
    case 'TrsErrorDto':
      return body.code === status;
    case 'OAuthErrorDto':
      // RFC 6749's body has no status: a code is right for every status it may come with.
      return typeof body.error === 'string';
  }
}

/** The RFC 6749 code the token endpoint answers with a status (see OAuthErrorFilter). */
function oauthCodeOf(status: number): string {
  if (status === 401) {
    return 'invalid_client';
  }
  if (status === 429 || status === 503) {
    return 'temporarily_unavailable';
  }
  return status < 500 ? 'invalid_request' : 'server_error';
}

const TOKEN_REQUIRED =
  'A valid token or API key is required (Authorization: Bearer, X-Auth-Token, the session cookie, Authorization: ApiKey or X-API-Key)';

/** What the registry calls the thing a uuid path parameter names, as its 404s say (`No workflow <uuid>`). */
export const NOUN_OF_UUID_PARAMETER: Record<string, string> = {
  wf_uuid: 'workflow',
  suite_uuid: 'test suite',
  instance_uuid: 'test instance',
  uuid: 'notification',
};

/**
 * The body the service sends, where it follows from the status and the operation's first path
 * parameter: a missing token, a uuid that is not one (400) or names nothing (404), a body too
 * large. Anything else keeps an example its operation gives, or else says its documented cause.
 */
function errorOf(
  status: number,
  description: string,
  operation?: OperationObject,
): { message: string; fields: { field: string; message: string }[] } {
  const schemes = (operation?.security ?? []).flatMap((requirement) => Object.keys(requirement));
  if (
    status === 401 &&
    (operation === undefined || schemes.includes(BEARER_SCHEME) || schemes.includes(REGISTRY_CLIENT_SCHEME))
  ) {
    return { message: TOKEN_REQUIRED, fields: [] };
  }
  if (status === 413) {
    return { message: 'The request body is larger than 1 MiB', fields: [] };
  }
  const uuid = ((operation?.parameters ?? []) as ParameterObject[]).find(
    (parameter) => parameter.in === 'path' && NOUN_OF_UUID_PARAMETER[parameter.name] !== undefined,
  );
  if (uuid && status === 400) {
    const message = `${uuid.name} must be a UUID`;
    return { message, fields: [{ field: uuid.name, message }] };
  }
  if (uuid && status === 404) {
    const schema = uuid.schema && !('$ref' in uuid.schema) ? uuid.schema : undefined;
    const example: unknown = uuid.example ?? schema?.example;
    return {
      message: `No ${NOUN_OF_UUID_PARAMETER[uuid.name]} ${typeof example === 'string' ? example : '<uuid>'}`,
      fields: [],
    };
  }
  return { message: description, fields: [] };
}

export function errorExample(
  area: ErrorArea,
  status: number,
  description: string,
  operation?: OperationObject,
): Record<string, unknown> {
  const { message, fields } = errorOf(status, description, operation);
  switch (area) {
    case 'AuthErrorDto':
      return { ...authErrorExample(status, message) };
    case 'ProblemDto':
      return { ...problemExample(status, message, fields) };
    case 'OAuthErrorDto':
      return { error: oauthCodeOf(status), error_description: status === 401 ? description : message };
    case 'EnvelopeErrorDto': {
      const [short, long] = ENVELOPE_PHRASES[status] ?? [titleOf(status), titleOf(status)];
      return {
        status: 'error',
        message,
        status_code: status,
        status_long_message: long,
        status_short_message: short,
      };
    }
    case 'TrsErrorDto':
      return { code: status, message };
  }
}
