import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import { parse } from 'yaml';
import type { WesReply } from '../fakes/wes-fake.js';

const WES_DOCUMENT = 'test/fixtures/wes/workflow_execution_service.openapi.yaml';
/** The service-info document the WES one refers to by URL, as the TRS tests keep it; never fetched. */
const SERVICE_INFO_DOCUMENT = 'test/fixtures/trs/service-info.yaml';
const SERVICE_INFO_URL =
  'https://raw.githubusercontent.com/ga4gh-discovery/ga4gh-service-info/v1.0.0/service-info.yaml';
const WES_ID = 'https://wes.test/workflow_execution_service.openapi.yaml';

interface OpenApiDocument {
  paths: Record<string, Record<string, { responses?: Record<string, OpenApiResponse> }>>;
}

interface OpenApiResponse {
  content?: Record<string, { schema?: { $ref?: string } }>;
}

/**
 * Checks an answer of the WES fake against the response its operation and status have in the
 * GA4GH WES 1.1.0 document itself (with ajv, as test/support/trs.ts checks TRS answers): returns
 * the problems, none for a valid answer; a status the operation does not document is one.
 */
export function wesReplyValidator(): (reply: WesReply) => string[] {
  const ajv = new Ajv({ strict: false, allErrors: true });
  // CommonJS: its module object is the plugin, and so is its `default`.
  ajvFormats.default(ajv);
  const wes = parse(readFileSync(WES_DOCUMENT, 'utf8')) as OpenApiDocument;
  const serviceInfo = parse(readFileSync(SERVICE_INFO_DOCUMENT, 'utf8')) as object;
  if (!readFileSync(WES_DOCUMENT, 'utf8').includes(`${SERVICE_INFO_URL}#`)) {
    throw new Error(`${WES_DOCUMENT} no longer refers to ${SERVICE_INFO_URL}`);
  }
  ajv.addSchema({ ...wes, $id: WES_ID });
  ajv.addSchema({ ...serviceInfo, $id: SERVICE_INFO_URL });
  const compiled = new Map<string, ValidateFunction>();
  return (reply) => {
    const where = `${reply.method.toUpperCase()} ${reply.path} ${reply.status}`;
    const response = wes.paths[reply.path]?.[reply.method]?.responses?.[String(reply.status)];
    const ref = response?.content?.['application/json']?.schema?.$ref;
    if (ref === undefined || !ref.startsWith('#/components/schemas/')) {
      return [`${where}: the WES document has no JSON answer for it`];
    }
    let validate = compiled.get(ref);
    if (!validate) {
      validate = ajv.compile({ $ref: `${WES_ID}${ref}` });
      compiled.set(ref, validate);
    }
    return validate(reply.body)
      ? []
      : (validate.errors ?? []).map((error) => `${where}: ${error.instancePath} ${error.message ?? ''}`);
  };
}
