import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import { parse } from 'yaml';
import type { LinkServer } from '../fakes/link-server.js';
import type { TestApp } from './create-test-app.js';
import { METADATA_DESCRIPTOR, TEST_TERMS } from './registry.js';
import { buildZip, type ZipEntrySpec } from './zip-builder.js';

const TRS_DOCUMENT = 'test/fixtures/trs/openapi.yaml';
const SERVICE_INFO_DOCUMENT = 'test/fixtures/trs/service-info.yaml';
/** Where openapi.yaml's `/service-info` points; resolved to the local copy, never fetched. */
const SERVICE_INFO_URL =
  'https://raw.githubusercontent.com/ga4gh-discovery/ga4gh-service-info/v1.0.0/service-info.yaml';
const TRS_ID = 'https://trs.test/openapi.yaml';

/** The reply schemas of GA4GH TRS 2.1.0 that the service answers with. */
export type TrsSchema =
  | 'Tool'
  | 'Tool[]'
  | 'ToolVersion'
  | 'ToolVersion[]'
  | 'ToolClass[]'
  | 'FileWrapper'
  | 'FileWrapper[]'
  | 'ToolFile[]'
  | 'Error'
  | 'Service';

/**
 * Validators of TRS replies against the TRS 2.1.0 document itself (its `components.schemas`; the
 * service-info reply against GA4GH service-info 1.0.0, which the document refers to), with ajv:
 * OpenAPI 3.0's `nullable` is ajv's own keyword, its `example` is left unchecked (strict: false),
 * and formats (`int32`, `uri`, `date-time`) are checked with ajv-formats.
 */
export function trsValidators(): (schema: TrsSchema, body: unknown) => ErrorObject[] {
  const ajv = new Ajv({ strict: false, allErrors: true });
  // CommonJS: its module object is the plugin, and so is its `default`.
  ajvFormats.default(ajv);
  const trs = parse(readFileSync(TRS_DOCUMENT, 'utf8')) as { paths: Record<string, { $ref?: string }> };
  const serviceInfo = parse(readFileSync(SERVICE_INFO_DOCUMENT, 'utf8')) as object;
  if (trs.paths['/service-info']?.$ref?.startsWith(`${SERVICE_INFO_URL}#`) !== true) {
    throw new Error(`${TRS_DOCUMENT} no longer refers to ${SERVICE_INFO_URL} for /service-info`);
  }
  ajv.addSchema({ ...trs, $id: TRS_ID });
  ajv.addSchema({ ...serviceInfo, $id: SERVICE_INFO_URL });
  const ref = (name: string) => ({ $ref: `${TRS_ID}#/components/schemas/${name}` });
  const schemas: Record<TrsSchema, object> = {
    Tool: ref('Tool'),
    'Tool[]': { type: 'array', items: ref('Tool') },
    ToolVersion: ref('ToolVersion'),
    'ToolVersion[]': { type: 'array', items: ref('ToolVersion') },
    'ToolClass[]': { type: 'array', items: ref('ToolClass') },
    FileWrapper: ref('FileWrapper'),
    'FileWrapper[]': { type: 'array', items: ref('FileWrapper') },
    'ToolFile[]': { type: 'array', items: ref('ToolFile') },
    Error: ref('Error'),
    Service: { $ref: `${SERVICE_INFO_URL}#/components/schemas/Service` },
  };
  const compiled = new Map<TrsSchema, ValidateFunction>();
  return (schema, body) => {
    let validate = compiled.get(schema);
    if (!validate) {
      validate = ajv.compile(schemas[schema]);
      compiled.set(schema, validate);
    }
    return validate(body) ? [] : [...(validate.errors ?? [])];
  };
}

export interface CwlCrateSpec {
  /** The main workflow's folder in the crate (`''`: the crate's root). */
  folder?: string;
  /** Where the step's tool sits, relative to the main workflow's folder (a relative `run:`). */
  toolPath?: string;
  /** Any text: crates with different markers have different bytes. */
  marker?: string;
  /** The language the crate names for its main workflow (default `#cwl`, Workflow RO-Crate's). */
  language?: { '@id': string; name?: string } | null;
}

/** A CWL workflow of one step whose tool it imports with a relative `run:`. */
export function cwlWorkflow(toolPath: string): string {
  return [
    'cwlVersion: v1.2',
    'class: Workflow',
    'inputs:',
    '  message: string',
    'outputs:',
    '  out:',
    '    type: File',
    '    outputSource: say/out',
    'steps:',
    '  say:',
    `    run: ${toolPath}`,
    '    in:',
    '      message: message',
    '    out: [out]',
    '',
  ].join('\n');
}

export const CWL_TOOL = [
  'cwlVersion: v1.2',
  'class: CommandLineTool',
  'baseCommand: echo',
  'inputs:',
  '  message:',
  '    type: string',
  '    inputBinding:',
  '      position: 1',
  'outputs:',
  '  out:',
  '    type: stdout',
  'stdout: message.txt',
  '',
].join('\n');

/** The files of `cwlCrate(spec)`, by path in the crate. */
export function cwlCrateFiles(spec: CwlCrateSpec = {}): Record<string, string> {
  const folder = spec.folder ? `${spec.folder}/` : '';
  const toolPath = spec.toolPath ?? 'tools/say.cwl';
  const main = `${folder}workflow.cwl`;
  const tool = new URL(toolPath, `file:///${main}`).pathname.slice(1);
  const language = spec.language === undefined ? { '@id': '#cwl' } : spec.language;
  const metadata = {
    '@context': 'https://w3id.org/ro/crate/1.1/context',
    '@graph': [
      METADATA_DESCRIPTOR,
      {
        '@id': './',
        '@type': 'Dataset',
        name: `say ${spec.marker ?? 'hello'}`,
        mainEntity: { '@id': main },
        hasPart: [{ '@id': main }, { '@id': tool }, { '@id': 'test/job.yml' }, { '@id': 'README.md' }],
        mentions: [{ '@id': '#suite1' }],
      },
      {
        '@id': main,
        '@type': ['File', 'SoftwareSourceCode', 'ComputationalWorkflow'],
        name: 'say',
        ...(language === null ? {} : { programmingLanguage: { '@id': language['@id'] } }),
      },
      ...(language === null
        ? []
        : [
            {
              '@id': language['@id'],
              '@type': 'ComputerLanguage',
              name: language.name ?? 'Common Workflow Language',
            },
          ]),
      { '@id': tool, '@type': 'File' },
      { '@id': 'README.md', '@type': 'File' },
      {
        '@id': '#suite1',
        '@type': 'TestSuite',
        name: 'suite one',
        instance: [{ '@id': '#instance1' }],
        definition: { '@id': 'checks/say-test.yml' },
      },
      {
        '@id': '#instance1',
        '@type': 'TestInstance',
        name: 'GitHub Actions',
        runsOn: { '@id': `${TEST_TERMS}GithubService` },
        url: 'https://api.github.com',
        resource: 'repos/o/say/actions/workflows/ci.yml',
      },
      {
        '@id': 'checks/say-test.yml',
        '@type': ['File', 'TestDefinition'],
        conformsTo: { '@id': `${TEST_TERMS}PlanemoEngine` },
        engineVersion: '>=0.74',
      },
    ],
  };
  return {
    'ro-crate-metadata.json': JSON.stringify(metadata, null, 2),
    [main]: cwlWorkflow(toolPath),
    [tool]: CWL_TOOL,
    'checks/say-test.yml': `- job: ../test/job.yml\n  outputs:\n    out: {checksum: ignored}\n# ${spec.marker ?? ''}\n`,
    'test/job.yml': 'message: hello\n',
    'README.md': `# say\n\nA workflow that says ${spec.marker ?? 'hello'}.\n`,
  };
}

/** A Workflow Testing RO-Crate of a CWL workflow importing its tool with a relative `run:`. */
export function cwlCrate(spec: CwlCrateSpec = {}, extra: ZipEntrySpec[] = []): Buffer {
  return buildZip([...Object.entries(cwlCrateFiles(spec)).map(([name, data]) => ({ name, data })), ...extra]);
}

/** Registers a crate, served by `links`, as `token`'s (version 1.0 unless `body` says otherwise); returns its uuid. */
export async function registerCrate(
  t: TestApp,
  links: LinkServer,
  token: string,
  crate: Buffer,
  body: Record<string, unknown> = {},
): Promise<string> {
  const link = links.route(`/${randomUUID()}.zip`, { kind: 'bytes', body: crate });
  const registered = await t.http
    .post('/users/current/workflows')
    .set('Authorization', `Bearer ${token}`)
    .send({ roc_link: link, version: '1.0', ...body });
  expect({ status: registered.status, body: registered.body }).toMatchObject({ status: 201 });
  return (registered.body as { uuid: string }).uuid;
}
