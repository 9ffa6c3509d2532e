import { parse } from 'yaml';
import { DomainError } from '../../common/errors/domain-error.js';
import { isRecord } from '../../common/is-record.js';
import {
  folderOf,
  METADATA_FILE,
  parseMainWorkflowOf,
  pathInCrate,
  resolveInCrate,
  type CrateFile,
  type CrateReader,
} from '../../crates/index.js';
import type { RunSpec } from './executor.js';

/** A test definition or a job file is read whole; anything larger is not one. */
const MAX_DEFINITION_BYTES = 1024 * 1024;
/** The input files of one test sent as attachments, together. */
export const MAX_ATTACHMENT_BYTES = 64 * 1024 * 1024;
/**
 * Tests of one definition, each one WES run: the runner keeps their run ids in one handle of at
 * most 255 characters, and six UUIDs fit.
 */
export const MAX_WES_TESTS = 6;

/** One WES run of a managed run: a test of the suite's definition. */
export interface WesRunRequest {
  /** The test's name (its `id`, `label` or `doc`, else its position), for reasons. */
  name: string;
  /** The workflow to run: the version's TRS descriptor URL, or a file beside it (TRS relative_path). */
  workflowUrl: string;
  /** The test's job (`workflow_params`), its relative input files renamed to their attachments. */
  params: Record<string, unknown>;
  /** Input files of the job, by their path in the crate (`workflow_attachment`). */
  attachments: { filename: string; data: Buffer }[];
  /** cwltest's `should_fail`: the test passes when the run fails. */
  shouldFail: boolean;
}

export type WesPlan = { kind: 'runs'; runs: WesRunRequest[] } | { kind: 'refused'; reason: string };

const refused = (reason: string): WesPlan => ({ kind: 'refused', reason });

/**
 * The WES runs of a managed run (API.md 17), read from the stored crate: for `cwltool` suites each
 * test of the cwltest file, for `planemo` suites each test of the Galaxy test file (its `job`,
 * inline or a file), run on the version's main workflow; `snakemake` and `nextflow` suites are one
 * run of the main workflow without parameters (their definition is the engine's own file, which
 * WES has no member for). Job files and test files are YAML or JSON, their relative paths taken
 * from their own folder, as cwltest and planemo take them. Refused (the build's `error`): no TRS
 * URL, a definition that is not a test list, a path that leaves the crate, a tool the TRS does
 * not serve, Directory inputs, more than MAX_WES_TESTS tests.
 */
export async function planWesRuns(
  spec: RunSpec,
  reader: CrateReader,
  maxUncompressedBytes: number,
): Promise<WesPlan> {
  if (spec.workflowUrl === null) {
    return refused(
      "the version's main workflow has no TRS descriptor URL for the WES endpoint to fetch (PUBLIC_BASE_URL is not set, or the crate names no main workflow in a language TRS serves)",
    );
  }
  const workflowUrl = spec.workflowUrl;
  if (spec.engine === 'snakemake' || spec.engine === 'nextflow') {
    return {
      kind: 'runs',
      runs: [{ name: 'workflow', workflowUrl, params: {}, attachments: [], shouldFail: false }],
    };
  }
  if (spec.engine !== 'cwltool' && spec.engine !== 'planemo') {
    return refused(`the suite's engine '${spec.engine}' is not one the wes executor runs`);
  }
  if (!spec.definitionPath) {
    return refused('the suite has no test definition file');
  }
  let files: Map<string, CrateFile>;
  try {
    files = new Map(
      (await reader.files(spec.archivePath, maxUncompressedBytes)).map((file) => [file.path, file]),
    );
  } catch (error) {
    if (error instanceof DomainError) {
      return refused(`the crate cannot be read: ${error.message}`);
    }
    throw error;
  }
  const crate = new CrateFiles(files);
  const definitionPath = resolveInCrate('', spec.definitionPath);
  const definition = definitionPath === undefined ? undefined : await crate.yaml(definitionPath);
  if (definitionPath === undefined || definition === undefined) {
    return refused(`the test definition '${spec.definitionPath}' is not a file of the crate`);
  }
  if ('problem' in definition) {
    return refused(`the test definition ${definition.problem}`);
  }
  const mainPath = await crate.mainWorkflowPath();
  if (mainPath === undefined) {
    return refused('the crate names no main workflow that is one of its files');
  }
  const tests = definition.document;
  if (!Array.isArray(tests) || tests.length === 0) {
    return refused(`the test definition is not a list of tests (${spec.engine}'s format)`);
  }
  if (tests.length > MAX_WES_TESTS) {
    return refused(
      `the test definition has ${tests.length} tests; the wes executor runs at most ${MAX_WES_TESTS} per suite`,
    );
  }
  const runs: WesRunRequest[] = [];
  const definitionFolder = folderOf(definitionPath);
  for (const [index, entry] of tests.entries()) {
    if (!isRecord(entry)) {
      return refused(`test ${index + 1} of the definition is not a mapping`);
    }
    const named = [entry.id, entry.label, entry.doc].find(
      (value) => typeof value === 'string' || typeof value === 'number',
    );
    const name = named === undefined ? `${index + 1}` : `${named}`.slice(0, 80);
    let url = workflowUrl;
    if (spec.engine === 'cwltool') {
      if (typeof entry.tool !== 'string') {
        return refused(`test ${name} has no 'tool'`);
      }
      const toolPath = resolveInCrate(definitionFolder, entry.tool);
      const toolUrl = toolPath === undefined ? undefined : descriptorUrl(workflowUrl, mainPath, toolPath);
      if (toolUrl === undefined) {
        return refused(
          `test ${name}: its tool '${entry.tool}' is neither the main workflow nor a file in its folder (what TRS serves)`,
        );
      }
      url = toolUrl;
    }
    const job = await jobOf(crate, entry.job, definitionFolder, name);
    if (typeof job === 'string') {
      return refused(job);
    }
    const attachments: WesRunRequest['attachments'] = [];
    const problem = await attachInputs(crate, job.params, job.folder, attachments);
    if (problem !== undefined) {
      return refused(`test ${name}: ${problem}`);
    }
    runs.push({
      name,
      workflowUrl: url,
      params: job.params,
      attachments,
      shouldFail: entry.should_fail === true,
    });
  }
  return { kind: 'runs', runs };
}

/**
 * The TRS URL of `path`: the main workflow's own, or, for a file in the main workflow's folder, its
 * path from there resolved against the main workflow's URL (`…/PLAIN_CWL/descriptor/main.cwl`
 * gives `…/descriptor/tools/x.cwl`: the descriptor's `relative_path`, API.md 10.2); undefined for
 * a file TRS does not serve that way.
 */
function descriptorUrl(workflowUrl: string, mainPath: string, path: string): string | undefined {
  if (path === mainPath) {
    return workflowUrl;
  }
  const folder = folderOf(mainPath);
  if (folder !== '' && !path.startsWith(`${folder}/`)) {
    return undefined;
  }
  const relative = folder === '' ? path : path.slice(folder.length + 1);
  return new URL(relative.split('/').map(encodeURIComponent).join('/'), workflowUrl).href;
}

/** A test's job: a file (its parameters and folder), an inline mapping (the definition's folder), or none. */
async function jobOf(
  crate: CrateFiles,
  job: unknown,
  definitionFolder: string,
  name: string,
): Promise<{ params: Record<string, unknown>; folder: string } | string> {
  if (job === undefined || job === null) {
    return { params: {}, folder: definitionFolder };
  }
  if (isRecord(job)) {
    return { params: structuredClone(job), folder: definitionFolder };
  }
  if (typeof job !== 'string') {
    return `test ${name}: its job is neither a file nor a mapping`;
  }
  const path = resolveInCrate(definitionFolder, job);
  const parsed = path === undefined ? undefined : await crate.yaml(path);
  if (path === undefined || parsed === undefined) {
    return `test ${name}: its job '${job}' is not a file of the crate`;
  }
  if ('problem' in parsed) {
    return `test ${name}: its job ${parsed.problem}`;
  }
  const params = parsed.document ?? {};
  if (!isRecord(params)) {
    return `test ${name}: its job '${job}' is not a mapping of inputs`;
  }
  return { params, folder: folderOf(path) };
}

/** Absolute URIs (`https:`, `s3:`, `file:`) are the WES endpoint's to fetch. */
const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * Attaches every File of `value` (CWL's `{class: File, location|path}`, secondaryFiles too) whose
 * location is relative: WES 1.1 takes relative input URLs as names of attached files, so the file
 * is attached under its path in the crate and its `location` becomes that path. Returns why not.
 */
async function attachInputs(
  crate: CrateFiles,
  value: unknown,
  folder: string,
  attachments: WesRunRequest['attachments'],
): Promise<string | undefined> {
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = await attachInputs(crate, item, folder, attachments);
      if (problem !== undefined) {
        return problem;
      }
    }
    return undefined;
  }
  if (!isRecord(value)) {
    return undefined;
  }
  const where = value.location ?? value.path;
  if (
    (value.class === 'File' || value.class === 'Directory') &&
    typeof where === 'string' &&
    !ABSOLUTE_URI.test(where)
  ) {
    if (value.class === 'Directory') {
      return `its input Directory '${where}' cannot be sent to a WES endpoint (only files are attached)`;
    }
    const path = resolveInCrate(folder, where);
    const data = path === undefined ? undefined : await crate.bytes(path, MAX_ATTACHMENT_BYTES);
    if (path === undefined || data === undefined) {
      return `its input '${where}' is not a file of the crate`;
    }
    if (!attachments.some((attached) => attached.filename === path)) {
      const total = attachments.reduce((sum, attached) => sum + attached.data.length, data.length);
      if (total > MAX_ATTACHMENT_BYTES) {
        return `its input files are larger than ${MAX_ATTACHMENT_BYTES} bytes together`;
      }
      attachments.push({ filename: path, data });
    }
    value.location = path;
    delete value.path;
  }
  for (const [key, item] of Object.entries(value)) {
    if (key !== 'location' && key !== 'path') {
      const problem = await attachInputs(crate, item, folder, attachments);
      if (problem !== undefined) {
        return problem;
      }
    }
  }
  return undefined;
}

/** The files of a stored crate, read whole and bounded. */
class CrateFiles {
  constructor(private readonly files: Map<string, CrateFile>) {}

  /** The file's bytes; undefined when the crate has no such file or it is larger than `maxBytes`. */
  async bytes(path: string, maxBytes: number): Promise<Buffer | undefined> {
    const file = this.files.get(path);
    if (file === undefined || file.size > maxBytes) {
      return undefined;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of await file.open()) {
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks);
  }

  /** The file as YAML (JSON is YAML), or why it is not; undefined when the crate has no such file. */
  async yaml(path: string): Promise<{ document: unknown } | { problem: string } | undefined> {
    const file = this.files.get(path);
    if (file === undefined) {
      return undefined;
    }
    const data = await this.bytes(path, MAX_DEFINITION_BYTES);
    if (data === undefined) {
      return { problem: `'${path}' is larger than ${MAX_DEFINITION_BYTES} bytes` };
    }
    try {
      return { document: parse(data.toString('utf8')) as unknown };
    } catch (error) {
      return { problem: `'${path}' is not YAML: ${(error as Error).message.split('\n')[0]}` };
    }
  }

  async mainWorkflowPath(): Promise<string | undefined> {
    const data = await this.bytes(METADATA_FILE, 16 * 1024 * 1024);
    if (data === undefined) {
      return undefined;
    }
    try {
      const main = parseMainWorkflowOf(JSON.parse(data.toString('utf8')));
      return main === undefined ? undefined : pathInCrate(main.id);
    } catch {
      return undefined;
    }
  }
}
