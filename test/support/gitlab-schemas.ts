import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import ajvFormats from 'ajv-formats';

const FOLDER = 'test/fixtures/gitlab/schemas';
const BASE = 'https://gitlab.test/schemas/';

function files(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? files(join(folder, entry.name))
      : entry.name.endsWith('.json')
        ? [join(folder, entry.name)]
        : [],
  );
}

/**
 * GitLab's own rules, read by its specs' matcher and not by JSON Schema: `"date"` is a type there
 * (a string holding a date), and the jobs listing carries `failure_reason` on failed jobs (GitLab's
 * API documentation shows it) where the snapshot of job.json has no member for it.
 */
function asGitlabReads(path: string, schema: unknown): unknown {
  const text = JSON.stringify(schema).replace(/"date"/g, '"string"');
  const read = JSON.parse(text) as { properties?: Record<string, unknown> };
  if (path === 'public_api/v4/job.json' && read.properties) {
    read.properties.failure_reason = { type: 'string' };
  }
  return read;
}

/**
 * Validators of GitLab's v4 replies against GitLab's own JSON Schemas
 * (test/fixtures/gitlab/schemas/, from gitlabhq's spec/fixtures/api/schemas/), every file loaded
 * so that their relative `$ref`s to siblings resolve. `validate('public_api/v4/pipelines.json', body)`
 * answers the errors, none when the body conforms.
 */
export function gitlabSchemas(): (schema: string, body: unknown) => ErrorObject[] {
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajvFormats.default(ajv);
  for (const file of files(FOLDER)) {
    const path = relative(FOLDER, file).split('\\').join('/');
    const schema = asGitlabReads(path, JSON.parse(readFileSync(file, 'utf8'))) as object;
    ajv.addSchema({ ...schema, $id: `${BASE}${path}` });
  }
  return (schema, body) => {
    const validate = ajv.getSchema(`${BASE}${schema}`);
    if (!validate) {
      throw new Error(`no GitLab schema ${schema}`);
    }
    return validate(body) ? [] : [...(validate.errors ?? [])];
  };
}
