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
import { areaOf, type Area } from './common/filters/fallback.filter.js';
import { TAG_GROUPS, TAGS } from './common/api-tags.js';
import { EXAMPLE } from './common/openapi-examples.js';
import { REGISTRY_CLIENT_SCHEME } from './auth/api-auth.decorator.js';
import {
  ERROR_SCHEMA_OF,
  ERROR_SCHEMAS,
  errorExample,
  exampleMatches,
  NOUN_OF_UUID_PARAMETER,
  type ErrorArea,
} from './openapi-error-examples.js';

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
  trs: { name: 'GA4GH TRS (untagged)', description: 'GA4GH TRS operations without a tag of their own' },
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
    registryClientOnly(operation);
    optionalToken(operation);
    if (!operation.description) {
      operation.description = describe(operation);
    }
    quietOptionalParameters(operation);
    requestExample(operation, document);
    if (documentAreaOf(path) === 'registry') {
      addUuidFaults(operation);
    }
    if (documentAreaOf(path) !== 'service') {
      addInfrastructureFaults(path, method, operation);
    }
    for (const [status, response] of Object.entries(operation.responses)) {
      if (response && !('$ref' in response)) {
        finishResponse(Number(status), response, document, operation);
      }
    }
  }
  listTags(document);
  return document;
}

/**
 * An operation that needs a `registry.*` scope takes a registry client's token only (a person's
 * credentials never hold those scopes): its one scheme is the client credentials flow, so that
 * Swagger UI's Authorize fetches the right token for it.
 */
function registryClientOnly(operation: OperationObject): void {
  const scope: unknown = (operation as OperationObject & { 'x-required-scope'?: unknown })[
    'x-required-scope'
  ];
  if (typeof scope === 'string' && scope.startsWith('registry.')) {
    operation.security = [{ [REGISTRY_CLIENT_SCHEME]: [scope] }];
  }
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

/**
 * Every operation needs the database (the token is re-checked there), so each may answer 503
 * when it does not answer within DATABASE_TIMEOUT_SECONDS; those that write may answer 507 on
 * a full disk. Documented here once, in the error shape of the path's area (areaOf, as the
 * filters pick it), unless the operation documents that status itself.
 */
function addInfrastructureFaults(path: string, method: string, operation: OperationObject): void {
  const schema = usesOAuthErrors(operation)
    ? 'OAuthErrorDto'
    : ERROR_SCHEMA_OF[areaOf(path.replace(/\{[^}]*\}/g, 'x'))];
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

/** The token endpoint answers its faults in RFC 6749's shape, whatever the area of its path. */
function usesOAuthErrors(operation: OperationObject): boolean {
  return Object.values(operation.responses).some((response) =>
    Object.values((response as ResponseObject).content ?? {}).some(
      (media) =>
        media.schema !== undefined && '$ref' in media.schema && media.schema.$ref.endsWith('/OAuthErrorDto'),
    ),
  );
}

/**
 * A uuid in the path of an area B operation may be malformed (400) or name nothing the caller may
 * see (404): documented here for each such operation that does not document those statuses itself,
 * with the bodies the service sends (errorOf).
 */
function addUuidFaults(operation: OperationObject): void {
  const named = ((operation.parameters ?? []) as ParameterObject[]).some(
    (parameter) => parameter.in === 'path' && NOUN_OF_UUID_PARAMETER[parameter.name] !== undefined,
  );
  if (!named) {
    return;
  }
  const problem = (): ResponseObject['content'] => ({
    'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDto' } },
  });
  operation.responses['400'] ??= {
    description: 'A uuid that is not one, or a bad query parameter',
    content: problem(),
  };
  operation.responses['404'] ??= {
    description: 'Nothing with this uuid (or version) that the caller may see',
    content: problem(),
  };
}

/**
 * Area C's `{/<cloud>}` is optional; one OpenAPI path cannot say so (a path parameter is always
 * required), so each such operation is documented twice: without the segment (the cloud named
 * `default`) under its own id, and with it as `<id>-by-cloud`. A generated client then has a
 * method for each and needs no placeholder cloud. Where the form without the segment would read like
 * another path (`DELETE /keypairs/{name}` beside `GET /keypairs/{cloud}`: OpenAPI forbids paths that
 * differ only in their parameters' names), only the form with the cloud is documented, saying so.
 */
function splitOptionalCloud(document: OpenAPIObject): void {
  const paths: OpenAPIObject['paths'] = {};
  const shape = (path: string): string => path.replace(/\{[^}]+\}/g, '{}');
  const shapes = new Set(Object.keys(document.paths).map(shape));
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.endsWith('/{cloud}')) {
      paths[path] = item;
      continue;
    }
    const shortPath = path.slice(0, -'/{cloud}'.length);
    if (!(shortPath in document.paths) && shapes.has(shape(shortPath))) {
      for (const method of METHODS) {
        const operation = item[method];
        if (operation) {
          operation.description = joined(
            `The cloud segment may be left out for the cloud \`default\` (\`${shortPath}\`), which this document cannot show beside the path of the same shape.`,
            operation.description,
          );
        }
      }
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
            ? {
                ...p,
                description: 'A cloud of CLOUDS_FILE',
                example: EXAMPLE.cloud,
                schema: { ...p.schema, default: undefined },
              }
            : p,
        ),
      };
    }
    paths[shortPath] = without;
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

/**
 * Swagger UI's "Try it out" fills every parameter that has an example (or whose schema has one)
 * and sends it: an optional one then changes the request (`version`, a badge `token`, an
 * `If-None-Match` that turns the reply into a 304). Their examples move into the description; a
 * `default` stays, being what the service does without the parameter.
 */
function quietOptionalParameters(operation: OperationObject): void {
  for (const parameter of operation.parameters ?? []) {
    if ('$ref' in parameter || parameter.required) {
      continue;
    }
    const schema = parameter.schema && !('$ref' in parameter.schema) ? parameter.schema : undefined;
    const example: unknown = parameter.example ?? schema?.example;
    delete parameter.example;
    delete parameter.examples;
    if (schema) {
      delete schema.example;
    }
    if (example !== undefined) {
      const shown = typeof example === 'string' ? example : JSON.stringify(example);
      const lead = parameter.description ? `${parameter.description.replace(/([^.!?])$/, '$1.')} ` : '';
      parameter.description = `${lead}Example: \`${shown}\`.`;
    }
  }
}

/**
 * The example of a JSON request body, as Swagger UI fills its editor with it and sends it: the
 * required members only, unless the operation gives its own (`@ApiBody({ examples })`). Optional
 * members stay out: pre-filled, they change what a request means (an `authorization` sent to the
 * crate's host, a `uuid` of a workflow that does not exist) and a request edited in one member
 * would break on another.
 */
function requestExample(operation: OperationObject, document: OpenAPIObject): void {
  const body = operation.requestBody;
  if (!body || '$ref' in body) {
    return;
  }
  for (const [mediaType, media] of Object.entries(body.content)) {
    // The operation's one example, shown as the example (Swagger UI would show a list of one).
    const given = Object.values(media.examples ?? {});
    if (given.length === 1 && !('$ref' in given[0]) && media.example === undefined) {
      media.example = given[0].value as unknown;
      delete media.examples;
    }
    if (
      media.example !== undefined ||
      media.examples !== undefined ||
      !media.schema ||
      !/json/.test(mediaType)
    ) {
      continue;
    }
    const example = exampleOf(media.schema, document, new Set(), 'request');
    if (example !== undefined) {
      media.example = example;
    }
  }
}

/**
 * Every error reply gets an example of its own status in its area's shape (Swagger UI would
 * otherwise build one example from the schema's property examples and show it for every
 * status), and every JSON reply without an example gets one built from its schema.
 */
function finishResponse(
  status: number,
  response: ResponseObject,
  document: OpenAPIObject,
  operation: OperationObject,
): void {
  const content = response.content ?? {};
  for (const [mediaType, media] of Object.entries(content)) {
    const ref = media.schema && '$ref' in media.schema ? media.schema.$ref.split('/').pop() : undefined;
    if (ref && ERROR_SCHEMAS.has(ref)) {
      const area = ref as ErrorArea;
      if (!exampleMatches(area, status, media.example)) {
        media.example = errorExample(area, status, response.description, operation);
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
      const example = exampleOf(media.schema, document, new Set(), 'request');
      if (example !== undefined) {
        media.example = example;
      }
    }
  }
}

/**
 * An example composed from the schema's own examples, defaults and enums (undefined if one is
 * missing): of a reply, with every member; of a request, with the required members only.
 */
function exampleOf(
  schema: SchemaObject | ReferenceObject,
  document: OpenAPIObject,
  seen: Set<string>,
  of: 'reply' | 'request',
): unknown {
  if ('$ref' in schema) {
    const name = schema.$ref.split('/').pop() ?? '';
    const target = document.components?.schemas?.[name];
    if (!target || seen.has(name)) {
      return undefined;
    }
    return exampleOf(target, document, new Set([...seen, name]), of);
  }
  if (schema.example !== undefined) {
    return schema.example;
  }
  if (schema.allOf) {
    const parts = schema.allOf.map((part) => exampleOf(part, document, seen, of));
    return parts.every((p) => typeof p === 'object' && p !== null && !Array.isArray(p))
      ? Object.assign({}, ...parts)
      : undefined;
  }
  const alternative = schema.oneOf?.[0] ?? schema.anyOf?.[0];
  if (alternative) {
    return exampleOf(alternative, document, seen, of);
  }
  if (schema.enum && schema.enum.length > 0) {
    return schema.enum[0];
  }
  if (schema.default !== undefined) {
    return schema.default;
  }
  if (schema.type === 'array' && schema.items) {
    const item = exampleOf(schema.items, document, seen, of);
    return item === undefined ? [] : [item];
  }
  if (schema.type === 'object' || schema.properties) {
    const body: Record<string, unknown> = {};
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      const required = schema.required?.includes(name) ?? false;
      if (of === 'request' && !required) {
        continue;
      }
      const value = exampleOf(property, document, seen, of);
      if (value !== undefined) {
        body[name] = value;
      } else if (required) {
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
