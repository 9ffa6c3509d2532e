import type {
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  PathItemObject,
  ReferenceObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  DATABASE_UNAVAILABLE_DETAIL,
  STORAGE_FULL,
} from './common/errors/infrastructure.js';
import { titleOf } from './common/errors/problem.js';
import { ENVELOPE_PHRASES } from './common/filters/envelope.filter.js';
import { areaOf, type Area } from './common/filters/fallback.filter.js';
import { TAG_GROUPS, TAGS } from './common/api-tags.js';

/**
 * The finishing pass over the document Nest builds from the decorators: what depends on the
 * area an operation belongs to (its error bodies, their examples) is decided here, from the
 * path, by the same rule that picks the error shape (API.md section 0), so a new controller
 * gets it right without repeating it.
 */

/**
 * The tag of an operation whose controller names none of TAGS: its area's, so that the
 * document stays whole (a test names such operations: each belongs under a tag of TAGS).
 */
export const AREA_FALLBACK_TAGS: Record<Area | 'service', { name: string; description: string }> = {
  auth: { name: 'auth (untagged)', description: 'Area A operations without a tag of their own' },
  registry: { name: 'registry (untagged)', description: 'Area B operations without a tag of their own' },
  orchestration: {
    name: 'orchestration (untagged)',
    description: 'Area C operations without a tag of their own',
  },
  service: {
    name: 'service (untagged)',
    description: 'Operations of the service without a tag of their own',
  },
};

const KNOWN_TAGS = new Set<string>(Object.values(TAGS));

/** The area of a path for the document: the filters' areas (API.md section 0), and the service's own routes. */
function documentAreaOf(path: string): Area | 'service' {
  if (path === '/metrics' || path.startsWith('/health/')) {
    return 'service';
  }
  return areaOf(path.replace(/\{[^}]*\}/g, 'x'));
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export function operationsOf(
  document: OpenAPIObject,
): { path: string; method: string; operation: OperationObject }[] {
  const found: { path: string; method: string; operation: OperationObject }[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) {
        found.push({ path, method, operation });
      }
    }
  }
  return found;
}

export function finishDocument(document: OpenAPIObject): OpenAPIObject {
  splitOptionalCloud(document);
  for (const { path, method, operation } of operationsOf(document)) {
    // One tag each: a method's own (Nest lists it after its controller's) wins over the controller's.
    const declared = (operation.tags ?? []).filter((tag) => KNOWN_TAGS.has(tag)).pop();
    operation.tags = [declared ?? AREA_FALLBACK_TAGS[documentAreaOf(path)].name];
    // Nest leaves `security` out where no scheme is declared: those routes are the public ones.
    operation.security ??= [];
    optionalToken(operation);
    if (!operation.description) {
      operation.description = describe(operation);
    }
    if (documentAreaOf(path) !== 'service') {
      addInfrastructureFaults(path, method, operation);
    }
    for (const [status, response] of Object.entries(operation.responses)) {
      if (response && !('$ref' in response)) {
        finishResponse(Number(status), response, document);
      }
    }
  }
  listTags(document);
  return document;
}

/** The tags operations use, in the catalogue's order and grouped by area; the fallbacks last. */
function listTags(document: OpenAPIObject): void {
  const used = new Set(operationsOf(document).flatMap(({ operation }) => operation.tags ?? []));
  const groups: { name: string; tags: { name: string; description: string }[] }[] = TAG_GROUPS.map(
    (group) => ({
      name: group.name,
      tags: group.tags.filter((tag) => used.has(tag.name)),
    }),
  ).filter((group) => group.tags.length > 0);
  const fallbacks = Object.values(AREA_FALLBACK_TAGS).filter((tag) => used.has(tag.name));
  if (fallbacks.length > 0) {
    groups.push({ name: 'Untagged', tags: fallbacks });
  }
  document.tags = groups.flatMap((group) => group.tags.map((tag) => ({ ...tag })));
  (document as OpenAPIObject & { 'x-tagGroups'?: unknown })['x-tagGroups'] = groups.map((group) => ({
    name: group.name,
    tags: group.tags.map((tag) => tag.name),
  }));
}

const ERROR_SCHEMA_OF: Record<Area, ErrorArea> = {
  auth: 'AuthErrorDto',
  registry: 'ProblemDto',
  orchestration: 'EnvelopeErrorDto',
};

/**
 * Every operation needs the database (the token is re-checked there), so each may answer 503
 * when it does not answer within DATABASE_TIMEOUT_SECONDS; those that write may answer 507 on
 * a full disk. Documented here once, in the error shape of the path's area (areaOf, as the
 * filters pick it), unless the operation documents that status itself.
 */
function addInfrastructureFaults(path: string, method: string, operation: OperationObject): void {
  const schema = ERROR_SCHEMA_OF[areaOf(path.replace(/\{[^}]*\}/g, 'x'))];
  const mediaType = schema === 'ProblemDto' ? 'application/problem+json' : 'application/json';
  const content = (status: number, message: string): ResponseObject['content'] => ({
    [mediaType]: {
      schema: { $ref: `#/components/schemas/${schema}` },
      example: errorExample(schema, status, message),
    },
  });
  const documented = operation.responses['503'] as ResponseObject | undefined;
  if (documented?.description && !documented.description.includes('database')) {
    documented.description += '; or the database did not answer in time (then with `Retry-After`)';
  }
  operation.responses['503'] ??= {
    description:
      'The database did not answer in time or is unreachable; try again after `Retry-After` seconds',
    headers: {
      'Retry-After': {
        description: `Seconds to wait before trying again (${DATABASE_RETRY_AFTER_SECONDS})`,
        schema: { type: 'integer', example: DATABASE_RETRY_AFTER_SECONDS },
      },
    },
    content: content(503, DATABASE_UNAVAILABLE_DETAIL),
  };
  if (['post', 'put', 'patch', 'delete'].includes(method)) {
    operation.responses['507'] ??= {
      description: "The server's storage is full: nothing was written",
      content: content(507, STORAGE_FULL),
    };
  }
}

/**
 * Area C's `{/<cloud>}` is optional; one OpenAPI path cannot say so (a path parameter is always
 * required), so each such operation is documented twice: without the segment (the cloud named
 * `default`) under its own id, and with it as `<id>-by-cloud`. A generated client then has a
 * method for each and needs no placeholder cloud.
 */
function splitOptionalCloud(document: OpenAPIObject): void {
  const paths: OpenAPIObject['paths'] = {};
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.endsWith('/{cloud}')) {
      paths[path] = item;
      continue;
    }
    const without: PathItemObject = {};
    const withCloud: PathItemObject = {};
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) {
        continue;
      }
      const parameters = (operation.parameters ?? []) as ParameterObject[];
      without[method] = {
        ...operation,
        description: joined(
          `On the cloud named \`default\`; \`${operation.operationId}-by-cloud\` names the cloud in the path.`,
          operation.description,
        ),
        parameters: parameters.filter((p) => !(p.in === 'path' && p.name === 'cloud')),
      };
      withCloud[method] = {
        ...operation,
        operationId: `${operation.operationId}-by-cloud`,
        description: joined(
          `On the cloud named in the path; \`${operation.operationId}\` is the same on the cloud \`default\`.`,
          operation.description,
        ),
        parameters: parameters.map((p) =>
          p.in === 'path' && p.name === 'cloud'
            ? { ...p, description: 'A cloud of CLOUDS_FILE', schema: { ...p.schema, default: undefined } }
            : p,
        ),
      };
    }
    paths[path.slice(0, -'/{cloud}'.length)] = without;
    paths[path] = withCloud;
  }
  document.paths = paths;
}

/**
 * A read of public workflows (@OptionalAuth): the token is one alternative, none (`{}`) the
 * other, as OpenAPI 3 says "optional", so Swagger UI sends the token when authorized and
 * generated clients can call without one.
 */
function optionalToken(operation: OperationObject): void {
  const marked = operation as OperationObject & { 'x-optional-auth'?: boolean };
  if (!marked['x-optional-auth']) {
    return;
  }
  delete marked['x-optional-auth'];
  const requirements = (operation.security ?? []).filter((r) => Object.keys(r).length > 0);
  operation.security = [...requirements, {}];
}

function joined(lead: string, description: string | undefined): string {
  return description ? `${lead}\n\n${description}` : lead;
}

function describe(operation: OperationObject): string {
  const security = operation.security ?? [];
  const schemes = security.flatMap((requirement) => Object.keys(requirement));
  const optional = security.some((requirement) => Object.keys(requirement).length === 0);
  const token = 'a token: `Authorization: Bearer <token>` (or `X-Auth-Token`, or the `session` cookie)';
  const credential = schemes.includes('apiKey')
    ? `${token}, or an API key: \`Authorization: ApiKey <key>\` (or \`X-API-Key\`)`
    : token;
  const who =
    schemes.length === 0
      ? 'No token needed.'
      : optional
        ? `A token is optional: without one, public workflows only; with ${credential}, also those the caller may see.`
        : `Needs ${credential}.`;
  return `${operation.summary ?? ''}. ${who}`.replace(/^\. /, '');
}

type ErrorArea = 'AuthErrorDto' | 'ProblemDto' | 'EnvelopeErrorDto';
const ERROR_SCHEMAS = new Set<string>(['AuthErrorDto', 'ProblemDto', 'EnvelopeErrorDto']);

/**
 * Every error reply gets an example of its own status in its area's shape (Swagger UI would
 * otherwise build one example from the schema's property examples and show it for every
 * status), and every JSON reply without an example gets one built from its schema.
 */
function finishResponse(status: number, response: ResponseObject, document: OpenAPIObject): void {
  const content = response.content ?? {};
  for (const [mediaType, media] of Object.entries(content)) {
    const ref = media.schema && '$ref' in media.schema ? media.schema.$ref.split('/').pop() : undefined;
    if (ref && ERROR_SCHEMAS.has(ref)) {
      const area = ref as ErrorArea;
      if (!exampleMatches(area, status, media.example)) {
        media.example = errorExample(area, status, response.description);
      }
      if (area === 'ProblemDto' && mediaType === 'application/json') {
        delete content[mediaType];
        content['application/problem+json'] = media;
      }
    } else if (
      media.example === undefined &&
      media.examples === undefined &&
      media.schema &&
      /json/.test(mediaType)
    ) {
      const example = exampleOf(media.schema, document, new Set());
      if (example !== undefined) {
        media.example = example;
      }
    }
  }
}

function exampleMatches(area: ErrorArea, status: number, example: unknown): boolean {
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
  }
}

const TOKEN_REQUIRED =
  'A valid token or API key is required (Authorization: Bearer, X-Auth-Token, the session cookie, Authorization: ApiKey or X-API-Key)';

/** The message the service actually sends where it is always the same; else the documented cause. */
function messageOf(status: number, description: string): string {
  if (status === 401) {
    return TOKEN_REQUIRED;
  }
  if (status === 413) {
    return 'The request body is larger than 1 MiB';
  }
  return description;
}

export function errorExample(area: ErrorArea, status: number, description: string): Record<string, unknown> {
  const message = messageOf(status, description);
  switch (area) {
    case 'AuthErrorDto':
      return { error: { code: status, title: titleOf(status), message } };
    case 'ProblemDto':
      return { type: 'about:blank', title: titleOf(status), status, detail: message };
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
  }
}

/** An example composed from the schema's own examples, defaults and enums (undefined if one is missing). */
function exampleOf(
  schema: SchemaObject | ReferenceObject,
  document: OpenAPIObject,
  seen: Set<string>,
): unknown {
  if ('$ref' in schema) {
    const name = schema.$ref.split('/').pop() ?? '';
    const target = document.components?.schemas?.[name];
    if (!target || seen.has(name)) {
      return undefined;
    }
    return exampleOf(target, document, new Set([...seen, name]));
  }
  if (schema.example !== undefined) {
    return schema.example;
  }
  if (schema.allOf) {
    const parts = schema.allOf.map((part) => exampleOf(part, document, seen));
    return parts.every((p) => typeof p === 'object' && p !== null && !Array.isArray(p))
      ? Object.assign({}, ...parts)
      : undefined;
  }
  const alternative = schema.oneOf?.[0] ?? schema.anyOf?.[0];
  if (alternative) {
    return exampleOf(alternative, document, seen);
  }
  if (schema.enum && schema.enum.length > 0) {
    return schema.enum[0];
  }
  if (schema.default !== undefined) {
    return schema.default;
  }
  if (schema.type === 'array' && schema.items) {
    const item = exampleOf(schema.items, document, seen);
    return item === undefined ? [] : [item];
  }
  if (schema.type === 'object' || schema.properties) {
    const body: Record<string, unknown> = {};
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      const value = exampleOf(property, document, seen);
      if (value !== undefined) {
        body[name] = value;
      } else if (schema.required?.includes(name)) {
        return undefined;
      }
    }
    return body;
  }
  if (schema.type === 'boolean') {
    return true;
  }
  return undefined;
}
