import { posix } from 'node:path';
import { folderOf, resolveInCrate, WORKFLOW_LANGUAGES, type WorkflowLanguage } from '../crates/index.js';

/** TRS's file types (ToolFile.file_type) that a crate's files can have; crates hold no container files. */
export type ToolFileType = 'PRIMARY_DESCRIPTOR' | 'SECONDARY_DESCRIPTOR' | 'TEST_FILE' | 'OTHER';

/** A `{type}` of a TRS path: a descriptor type, wrapped in JSON or plain. */
export interface RequestedType {
  language: WorkflowLanguage;
  plain: boolean;
}

/**
 * `CWL`, `PLAIN_CWL`, or `plain-CWL` as Dockstore and cwltool spell it (any case): undefined
 * for anything else.
 */
export function parseRequestedType(type: string): RequestedType | undefined {
  const match = /^(plain[_-])?([a-z]+)$/i.exec(type);
  const language = WORKFLOW_LANGUAGES.find((candidate) => candidate === match?.[2].toUpperCase());
  return match && language ? { language, plain: match[1] !== undefined } : undefined;
}

/** Every spelling `parseRequestedType` takes, canonical ones first: for the error of a wrong one. */
export const REQUESTED_TYPES = [
  ...WORKFLOW_LANGUAGES,
  ...WORKFLOW_LANGUAGES.map((language) => `PLAIN_${language}`),
];

/** Names of the files other than the main one that are written in each language. */
const SECONDARY: Record<WorkflowLanguage, RegExp> = {
  CWL: /\.cwl$/i,
  GALAXY: /\.(ga|gxwf\.ya?ml)$/i,
  NFL: /(\.nf|(^|\/)nextflow\.config)$/i,
  SMK: /(\.smk|(^|\/)snakefile)$/i,
  WDL: /\.wdl$/i,
};

/** What a version's crate says about its files (paths in the crate). */
export interface CrateRoles {
  mainWorkflowPath?: string;
  language: WorkflowLanguage | null;
  testDefinitionPaths: readonly string[];
}

/**
 * A crate file's type (API.md 10.2): the main workflow is the primary descriptor; a file a test
 * definition names, or in a folder named `test` or `tests`, a test file; another file in the main
 * workflow's language a secondary descriptor; anything else other.
 */
export function fileTypeOf(path: string, crate: CrateRoles): ToolFileType {
  if (path === crate.mainWorkflowPath) {
    return 'PRIMARY_DESCRIPTOR';
  }
  if (crate.testDefinitionPaths.includes(path) || /(^|\/)tests?\//.test(path)) {
    return 'TEST_FILE';
  }
  if (crate.language !== null && SECONDARY[crate.language].test(path)) {
    return 'SECONDARY_DESCRIPTOR';
  }
  return 'OTHER';
}

/** A path in the crate as TRS gives it: relative to the main workflow's folder (`../` for files above it). */
export function toolPathOf(cratePath: string, mainWorkflowPath: string | undefined): string {
  return posix.relative(folderOf(mainWorkflowPath ?? ''), cratePath);
}

/**
 * A tool path as one piece of a URL after `…/descriptor/`: each segment encoded, the slashes kept,
 * except in a path that climbs (`../x`), which goes whole as one segment so that clients do not
 * resolve its `..` away before sending it.
 */
export function toolPathInUrl(toolPath: string): string {
  return toolPath.startsWith('../')
    ? encodeURIComponent(toolPath)
    : toolPath.split('/').map(encodeURIComponent).join('/');
}

/**
 * A file asked for by what follows `…/{type}/` in a descriptor URL: `descriptor/{path}`, or
 * `{path}` alone (`after: 'type'`), where a relative import that climbs out of the main workflow's
 * folder lands when resolved against `…/{type}/descriptor/{name}`: cwltool builds that URL from
 * the `PRIMARY_DESCRIPTOR`'s path in `/files`, percent-encoded as one segment, so its
 * `run: ../tools/x.cwl` climbs out of `descriptor/`.
 */
export interface RequestedFile {
  after: 'descriptor' | 'type';
  path: string;
}

/**
 * The crate paths a descriptor URL may name, in the order they are tried (API.md 10.2), each
 * inside the crate. After `descriptor/`: from the main workflow's folder (the paths served from
 * the start, those `/files` gives), then from the crate's root (the main workflow's own URL
 * carries its crate path, so imports resolved against it land there). After `{type}/` alone:
 * from the main workflow's parent folder, none for a main workflow at the crate's root.
 */
export function cratePathsOf(mainWorkflowPath: string, requested: RequestedFile): string[] {
  const folder = folderOf(mainWorkflowPath);
  const candidates =
    requested.after === 'descriptor'
      ? [resolveInCrate(folder, requested.path), resolveInCrate('', requested.path)]
      : [folder === '' ? undefined : resolveInCrate(folderOf(folder), requested.path)];
  return [...new Set(candidates.filter((path): path is string => path !== undefined))];
}

/**
 * The path after `…/descriptor/` in the `url` of a file of a reply (API.md 10.2). The main
 * workflow's is its path in the crate (`workflows/main.cwl`), so that a relative import resolved
 * against that URL lands on the crate path of the file it names; but where the same path also
 * names a file from the main workflow's folder (tried first), it stays the tool path, which
 * names the main workflow alone. Other files: their tool path, as `/files` gives it.
 */
export function descriptorUrlPathOf(
  cratePath: string,
  mainWorkflowPath: string,
  inCrate: (path: string) => boolean,
): string {
  const toolPath = toolPathOf(cratePath, mainWorkflowPath);
  if (cratePath !== mainWorkflowPath) {
    return toolPath;
  }
  const [served] = cratePathsOf(mainWorkflowPath, { after: 'descriptor', path: cratePath }).filter(inCrate);
  return served === cratePath ? cratePath : toolPath;
}
