import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import type { Viewer } from '../auth/optional-auth.decorator.js';
import { DomainError } from '../common/errors/domain-error.js';
import { TestStatusService, type StoredBuild } from '../test-monitoring/index.js';
import {
  latestVersionOf,
  versionsOf,
  WorkflowAccess,
  WorkflowsService,
  type ArchiveDownload,
  type ListWindow,
  type VersionCrate,
  type WorkflowEntity,
  type WorkflowSearch,
  type WorkflowVersionEntity,
} from '../workflows/index.js';
import { type CrateFile, type WorkflowLanguage } from '../crates/index.js';
import { CrateChecksums, sha256Of } from './crate-checksums.js';
import { Clock } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { ToolsQuery } from './dto/trs-requests.dto.js';
import {
  cratePathsOf,
  descriptorUrlPathOf,
  fileTypeOf,
  parseRequestedType,
  REQUESTED_TYPES,
  toolPathOf,
  type RequestedFile,
  type RequestedType,
  type ToolFileType,
} from './tool-files.js';

/** The one tool class here: every tool is a workflow. */
export const TOOL_CLASS = 'Workflow';

/** Tools per page when the request gives no limit (TRS's default). */
export const DEFAULT_TOOLS_LIMIT = 1000;

/** A file's content goes inline in a JSON reply up to this size; a larger one is given by its `url`. */
export const MAX_INLINE_BYTES = 1024 * 1024;

/** The inline contents of one reply of test files together, at most; the rest are given by their `url`. */
export const MAX_INLINE_TOTAL_BYTES = 16 * 1024 * 1024;

export interface ToolVersionView {
  version: WorkflowVersionEntity;
  /** Each test instance of the version with its latest finished build (undefined without one). */
  finished: (StoredBuild | undefined)[];
  /** API.md 10.2, 16: every instance's latest finished build passed, within STALE_AFTER_DAYS. */
  verified: boolean;
}

export interface ToolView {
  workflow: WorkflowEntity;
  /** The name of the registry that sent the workflow, else its owner's username (API.md 10.2). */
  organization: string;
  /** Older first. */
  versions: ToolVersionView[];
}

/** A page of `GET /tools`, with what its paging headers say. */
export interface ToolPage {
  tools: ToolView[];
  /** A start index, or `last` (the last `limit` tools). */
  offset: number | 'last';
  limit: number;
  /** More tools follow this page. */
  more: boolean;
}

/** A crate file as TRS gives it: the path its `url` names it by, its digest, its text. */
export interface WrappedFile {
  /** What follows `…/descriptor/` in its `url` (`descriptorUrlPathOf`), not yet percent-encoded. */
  urlPath: string;
  language: WorkflowLanguage;
  sha256: string;
  /** Its UTF-8 text; undefined for a file that is not text or that is too large to go inline. */
  content?: string;
}

/**
 * What `/{type}/descriptor` answers: the bare file (a PLAIN_ type: its bytes, checked whole, up
 * to MAX_INLINE_BYTES; a larger one streamed, checked as it goes) or the file wrapped in JSON.
 */
export type DescriptorRead =
  | { plain: true; bytes: Buffer }
  | { plain: true; size: number; stream: Readable }
  | { plain: false; file: WrappedFile };

export interface ListedFile {
  toolPath: string;
  fileType: ToolFileType;
  /** Absent for a file the archive cannot give back. */
  sha256?: string;
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * `verified` of a version (API.md 10.2, 16) from its instances' latest finished builds: it has
 * instances, each has one, each passed, and each started within the last `staleAfterDays` days.
 */
export function isVerified(
  finished: readonly (StoredBuild | undefined)[],
  now: Date,
  staleAfterDays: number,
): boolean {
  const since = now.getTime() - staleAfterDays * DAY_MS;
  return (
    finished.length > 0 &&
    finished.every(
      (build) => build !== undefined && build.status === 'passed' && build.startedAt.getTime() >= since,
    )
  );
}

/**
 * GA4GH TRS 2.1.0, read-only (API.md 10.2): a read model over the registry and its stored crates,
 * built from the registry's own reads (so the same visibility rule, API.md 5.1) and test
 * monitoring's builds. A tool is a workflow, its versions the workflow's versions.
 */
@Injectable()
export class TrsService {
  constructor(
    private readonly workflows: WorkflowsService,
    private readonly access: WorkflowAccess,
    private readonly status: TestStatusService,
    private readonly checksums: CrateChecksums,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /** A page of the tools the viewer may see that meet the query's filters, in the registry's list order. */
  async tools(viewer: Viewer, query: ToolsQuery): Promise<ToolPage> {
    const limit = query.limit ?? DEFAULT_TOOLS_LIMIT;
    const offset =
      query.offset === undefined || query.offset === 'last' ? (query.offset ?? 0) : Number(query.offset);
    const search = await this.searchOf(query);
    if (search === undefined) {
      return { tools: [], offset, limit, more: false };
    }
    // One more than the page tells whether another follows, without counting the rest.
    const window: ListWindow = offset === 'last' ? { limit, fromEnd: true } : { limit: limit + 1, offset };
    const found = await this.workflows.search(viewer, search, window);
    return {
      tools: await this.views(found.slice(0, limit)),
      offset,
      limit,
      more: offset !== 'last' && found.length > limit,
    };
  }

  async tool(id: string, viewer: Viewer): Promise<ToolView> {
    const [view] = await this.views([await this.workflows.workflow(id, viewer)]);
    return view;
  }

  async version(
    id: string,
    versionId: string,
    viewer: Viewer,
  ): Promise<{ tool: ToolView; version: ToolVersionView }> {
    const workflow = await this.workflows.workflow(id, viewer);
    const picked = pickVersion(workflow, versionId);
    const [tool] = await this.views([workflow]);
    const version = tool.versions.find((candidate) => candidate.version.id === picked.id);
    if (!version) {
      throw noVersion(id, versionId);
    }
    return { tool, version };
  }

  /**
   * The main workflow (no `wanted`), or the file a descriptor URL names (`cratePathsOf`), of a
   * version whose descriptor type is `type`'s: bare for a PLAIN_ type, else wrapped in JSON.
   */
  async descriptor(
    id: string,
    versionId: string,
    type: string,
    wanted: RequestedFile | undefined,
    viewer: Viewer,
  ): Promise<DescriptorRead> {
    const { crate, requested } = await this.crateOf(id, versionId, type, viewer);
    const main = crate.mainWorkflowPath;
    if (main === undefined) {
      throw new DomainError(
        'not_found',
        `The crate of the tool ${id} at version '${versionId}' names no main workflow in it`,
      );
    }
    const byPath = new Map((await crate.files()).map((file) => [file.path, file]));
    const paths = wanted === undefined ? [main] : cratePathsOf(main, wanted);
    const file = paths.map((path) => byPath.get(path)).find((found) => found !== undefined);
    if (!file) {
      const asked = wanted === undefined ? main : wanted.after === 'type' ? `../${wanted.path}` : wanted.path;
      throw new DomainError('not_found', `The tool ${id} at version '${versionId}' has no file '${asked}'`);
    }
    if (!requested.plain) {
      const urlPath = descriptorUrlPathOf(file.path, main, (path) => byPath.has(path));
      return {
        plain: false,
        file: await wrapped(file, urlPath, requested.language, MAX_INLINE_BYTES),
      };
    }
    if (file.size <= MAX_INLINE_BYTES) {
      // Read and checked before the reply starts, so that a damaged entry is a 404, not a cut reply.
      return { plain: true, bytes: await bytesOf(file) };
    }
    return { plain: true, size: file.size, stream: await unreadable(file, file.open()) };
  }

  /** Every file of the version's crate with its type and SHA-256 (API.md 10.2). */
  async files(id: string, versionId: string, type: string, viewer: Viewer): Promise<ListedFile[]> {
    const { crate } = await this.crateOf(id, versionId, type, viewer);
    const files = await crate.files();
    const digests = await this.checksums.of(crate.version.archiveSha256, files);
    return files.map((file) => ({
      toolPath: toolPathOf(file.path, crate.mainWorkflowPath),
      fileType: fileTypeOf(file.path, rolesOf(crate)),
      sha256: digests.get(file.path),
    }));
  }

  /** The version's crate archive, for `/{type}/files?format=zip`. */
  async archive(id: string, versionId: string, type: string, viewer: Viewer): Promise<ArchiveDownload> {
    return (await this.crateOf(id, versionId, type, viewer)).crate.archive;
  }

  /** The version's test files, wrapped (their contents inline up to MAX_INLINE_TOTAL_BYTES in all). */
  async tests(id: string, versionId: string, type: string, viewer: Viewer): Promise<WrappedFile[]> {
    const { crate, requested } = await this.crateOf(id, versionId, type, viewer);
    const roles = rolesOf(crate);
    const tests = (await crate.files()).filter((file) => fileTypeOf(file.path, roles) === 'TEST_FILE');
    let budget = MAX_INLINE_TOTAL_BYTES;
    const wrappedFiles: WrappedFile[] = [];
    for (const file of tests) {
      const limit = Math.min(MAX_INLINE_BYTES, budget);
      const one = await wrapped(
        file,
        toolPathOf(file.path, crate.mainWorkflowPath),
        requested.language,
        limit,
      );
      budget -= one.content === undefined ? 0 : file.size;
      wrappedFiles.push(one);
    }
    return wrappedFiles;
  }

  /** The version's crate, when its descriptor type is the one asked for. */
  private async crateOf(
    id: string,
    versionId: string,
    type: string,
    viewer: Viewer,
  ): Promise<{ crate: VersionCrate; requested: RequestedType }> {
    const requested = parseRequestedType(type);
    if (!requested) {
      const message = `type must be one of ${REQUESTED_TYPES.join(', ')} (or plain-<TYPE>)`;
      throw new DomainError('invalid_input', message, [{ field: 'type', message }]);
    }
    const version = pickVersion(await this.workflows.workflow(id, viewer), versionId);
    if (version.language !== requested.language) {
      throw new DomainError(
        'not_found',
        `The tool ${id} at version '${versionId}' has no ${requested.language} descriptor` +
          (version.language === null ? '' : ` (it is ${version.language})`),
      );
    }
    return { crate: await this.workflows.crate(id, version.version, viewer), requested };
  }

  /**
   * The registry search a query asks for; undefined when a filter names what no tool here has.
   * `organization` is what the tools show as theirs: a registry's name (the workflows it sent),
   * else an owner's username (their workflows that no registry sent).
   */
  private async searchOf(query: ToolsQuery): Promise<WorkflowSearch | undefined> {
    const search = searchOf(query);
    if (search === undefined || query.organization === undefined) {
      return search;
    }
    const registryId = await this.access.registryNamed(query.organization);
    return registryId === undefined
      ? { ...search, ownerName: query.organization, registryId: null }
      : { ...search, registryId };
  }

  private async views(workflows: readonly WorkflowEntity[]): Promise<ToolView[]> {
    const [owners, registries, finished] = await Promise.all([
      this.workflows.ownerNames(workflows),
      Promise.all(workflows.map((workflow) => this.access.registryOf(workflow))),
      this.status.latestFinishedOfVersions(
        workflows.flatMap((workflow) => versionsOf(workflow).map((version) => version.id)),
      ),
    ]);
    const now = new Date(this.clock.nowMs());
    return workflows.map((workflow, index) => ({
      workflow,
      organization: registries[index]?.name ?? owners.get(workflow.ownerId) ?? '',
      versions: versionsOf(workflow).map((version) => {
        const builds = finished.get(version.id) ?? [];
        return {
          version,
          finished: builds,
          verified: isVerified(builds, now, this.config.monitoring.staleAfterDays),
        };
      }),
    }));
  }
}

/**
 * The registry search a query asks for, but its organization; undefined when a filter names what
 * no tool here has (an alias, a class other than Workflow, a checker, tags, an image registry, a
 * description, an author), or two different names.
 */
function searchOf(query: ToolsQuery): WorkflowSearch | undefined {
  const unsatisfiable =
    query.alias !== undefined ||
    (query.toolClass !== undefined && query.toolClass !== TOOL_CLASS) ||
    query.checker === true ||
    [query.tags, query.registry, query.description, query.author].some((value) => value !== undefined) ||
    (query.name !== undefined && query.toolname !== undefined && query.name !== query.toolname);
  if (unsatisfiable) {
    return undefined;
  }
  return {
    uuid: query.id,
    name: query.name ?? query.toolname,
    language: query.descriptorType,
  };
}

/** The version named `versionId`; `latest`, when no version has that name, is the latest one (cwltool's default). */
function pickVersion(workflow: WorkflowEntity, versionId: string): WorkflowVersionEntity {
  const named = versionsOf(workflow).find((version) => version.version === versionId);
  if (named) {
    return named;
  }
  if (versionId === 'latest') {
    return latestVersionOf(workflow);
  }
  throw noVersion(workflow.uuid, versionId);
}

function noVersion(id: string, versionId: string): DomainError {
  return new DomainError('not_found', `The tool ${id} has no version '${versionId}'`);
}

function rolesOf(crate: VersionCrate): {
  mainWorkflowPath?: string;
  language: WorkflowLanguage | null;
  testDefinitionPaths: readonly string[];
} {
  return {
    mainWorkflowPath: crate.mainWorkflowPath,
    language: crate.version.language,
    testDefinitionPaths: crate.testDefinitionPaths,
  };
}

/**
 * `work` on a crate file, its refusal (an encrypted or damaged entry, one whose bytes are more than
 * it declares) turned into the not_found of a file that cannot be served.
 */
function unreadable<T>(file: CrateFile, work: Promise<T>): Promise<T> {
  return work.catch((error: unknown) => {
    if (error instanceof DomainError && error.kind === 'invalid_input') {
      throw new DomainError(
        'not_found',
        `The file '${file.path}' of the crate cannot be read: ${error.message}`,
      );
    }
    throw error;
  });
}

/** A (small) file's bytes, checked whole against its size and CRC. */
function bytesOf(file: CrateFile): Promise<Buffer> {
  return unreadable(
    file,
    (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of await file.open()) {
        chunks.push(chunk as Buffer);
      }
      return Buffer.concat(chunks);
    })(),
  );
}

/** A file with its digest, and its text when it is UTF-8 of at most `inlineLimit` bytes. */
async function wrapped(
  file: CrateFile,
  urlPath: string,
  language: WorkflowLanguage,
  inlineLimit: number,
): Promise<WrappedFile> {
  if (file.size > inlineLimit) {
    return { urlPath, language, sha256: await unreadable(file, sha256Of(file)) };
  }
  const bytes = await bytesOf(file);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  try {
    return { urlPath, language, sha256, content: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    // Not text: the url gives its bytes.
    return { urlPath, language, sha256 };
  }
}
