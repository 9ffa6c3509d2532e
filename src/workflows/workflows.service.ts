import type { Readable } from 'node:stream';
import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { type AuthUser } from '../auth/auth-user.js';
import type { Viewer } from '../auth/optional-auth.decorator.js';
import { DomainError } from '../common/errors/domain-error.js';
import { AppConfig } from '../config/app-config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import {
  ArchiveLock,
  type CrateFile,
  CrateReader,
  CrateStore,
  isNotFound,
  type IssueType,
  pathInCrate,
} from '../crates/index.js';
import {
  type FollowGlobs,
  FollowQueue,
  FollowsRepository,
  type FollowView,
  globProblem,
  MAX_GLOBS,
  RepositoryHosts,
  type RepositoryLink,
} from '../repositories/index.js';
import { RepositoryChecks } from './checks/repository-checks.js';
import { loaded } from './dto/loaded.js';
import type { WorkflowSummaryDto, WorkflowSummaryView, WorkflowView } from './dto/workflow-response.dto.js';
import type { InstanceView, SuitesView, SuiteView } from './dto/suite-response.dto.js';
import type { RegistrySummary } from './registry-directory.js';
import type {
  VersionIssueEntity,
  WorkflowEntity,
  WorkflowVersionEntity,
} from './entities/registry.entities.js';
import { BadgeTokens } from './badge-tokens.js';
import { VersionStatusReader } from './version-status.reader.js';
import { latestVersionOf, versionsOf } from './workflow-versions.js';
import { WorkflowAccess, type VisibleVersion } from './workflow-access.service.js';
import { WorkflowsRepository, type WorkflowChanges } from './workflows.repository.js';
import type { ListWindow, WorkflowSearch } from './workflow-list.reader.js';
import { Clock } from '../common/clock.js';
import {
  RegistrationService,
  type Registered,
  type Registration,
  type RegistrationProgress,
  type RegistrationStage,
  type Submitter,
} from './registration.service.js';
import { VersionArchives } from './version-archives.js';
import {
  WorkflowListsService,
  type ListPage,
  type VersionStatusView,
  type WorkflowSelection,
} from './workflow-lists.service.js';

/** `PUT /workflows/{uuid}`: the workflow's own changes, and what its repository follows. */
export interface WorkflowUpdate extends WorkflowChanges {
  /** The API's globs (API.md 12); null clears them, so that the `.lifemonitor.yaml` applies again. */
  follow?: FollowGlobs | null;
}

export interface ReadOptions {
  previousVersions?: boolean;
  roCrate?: boolean;
}

/** A stored archive ready to be sent; `open` is called only when the bytes are wanted. */
export interface ArchiveDownload {
  sha256: string;
  size: number;
  filename: string;
  open(): Promise<Readable>;
}

/** A version's stored crate, for reads of its files (GA4GH TRS, API.md 10.2). */
export interface VersionCrate extends VisibleVersion {
  /** The main workflow's path in the crate; undefined when the crate names none of its files. */
  mainWorkflowPath?: string;
  /** The paths in the crate of the files its test suites' definitions name. */
  testDefinitionPaths: string[];
  /** The crate's files; not_found when the archive went meanwhile (its version deleted). */
  files(): Promise<CrateFile[]>;
  archive: ArchiveDownload;
}

/** A version's `ro-crate-metadata.json`; it never changes while the archive (`sha256`) does not. */
export interface CrateMetadata {
  sha256: string;
  read(): Promise<object>;
}

function failureCause(error: unknown, stage: RegistrationStage): string {
  if (error instanceof DomainError && error.kind === 'conflict') {
    return 'conflict';
  }
  return error instanceof DomainError ? stage : 'internal';
}

/**
 * The workflow registry: registration (the pipeline is RegistrationService's), reads, archive
 * downloads and deletion.
 */
@Injectable()
export class WorkflowsService {
  private readonly logger = new Logger(WorkflowsService.name);

  constructor(
    private readonly repo: WorkflowsRepository,
    private readonly access: WorkflowAccess,
    private readonly reader: CrateReader,
    private readonly store: CrateStore,
    private readonly archiveLock: ArchiveLock,
    private readonly statuses: VersionStatusReader,
    private readonly config: AppConfig,
    private readonly metrics: MetricsService,
    private readonly clock: Clock,
    private readonly badgeTokens: BadgeTokens,
    private readonly checks: RepositoryChecks,
    private readonly follows: FollowsRepository,
    private readonly followQueue: FollowQueue,
    private readonly registration: RegistrationService,
    private readonly lists: WorkflowListsService,
    private readonly archives: VersionArchives,
    private readonly hosts: RepositoryHosts,
  ) {}

  /**
   * Downloads, reads and stores a crate as a new version, atomically: on any failure no row
   * and no file are left behind. Throws DomainError invalid_input (the link, the archive or
   * the crate is unusable) or conflict (the uuid has this version or belongs to another user).
   */
  async register(user: Submitter, input: Registration): Promise<Registered> {
    const progress: RegistrationProgress = { stage: 'download' };
    const started = performance.now();
    const took = () => `${Math.round(performance.now() - started)} ms`;
    try {
      const registered = await this.registration.register(user, input, progress);
      this.metrics.registrations.inc({ result: 'created' });
      this.logger.log(
        `registered workflow ${registered.uuid} version ${registered.version} (${progress.size ?? 0} bytes) in ${took()}`,
      );
      return registered;
    } catch (error) {
      this.metrics.registrations.inc({ result: 'failed' });
      this.metrics.registrationFailures.inc({ cause: failureCause(error, progress.stage) });
      // Refusals are outcomes, not faults (the filter logs the unexpected ones at error). The link is
      // left out: it may carry a credential in its query.
      if (error instanceof DomainError) {
        const size = progress.size === undefined ? '' : ` (${progress.size} bytes)`;
        this.logger.log(
          `registration of ${input.uuid ? `workflow ${input.uuid} ` : ''}version ${input.version}${size} refused ` +
            `at ${progress.stage} after ${took()}: ${error.message}`,
        );
      }
      throw error;
    }
  }

  // The lists are WorkflowListsService's; other features and the controllers reach them here,
  // through the registry's one service.

  /**
   * A page of the caller's own workflows as replies (with links after `baseUrl`), the one whose
   * latest version was registered last first.
   */
  list(user: AuthUser, page: ListPage, withStatus: boolean, baseUrl: string): Promise<WorkflowSummaryDto[]> {
    return this.lists.list(user, page, withStatus, baseUrl);
  }

  /** The caller's whole list, batch by batch (WorkflowListsService.listBatches). */
  listBatches(
    user: AuthUser,
    offset: number | undefined,
    withStatus: boolean,
    baseUrl: string,
  ): AsyncGenerator<WorkflowSummaryDto[]> {
    return this.lists.listBatches(user, offset, withStatus, baseUrl);
  }

  /** A page of the workflows one registry sent, or of one owner's (API.md 10.1). */
  listOf(selection: WorkflowSelection, page: ListPage, withStatus: boolean): Promise<WorkflowSummaryView[]> {
    return this.lists.listOf(selection, page, withStatus);
  }

  /** `listOf` whole, batch by batch. */
  batchesOf(
    selection: WorkflowSelection,
    offset: number | undefined,
    withStatus: boolean,
  ): AsyncGenerator<WorkflowSummaryView[]> {
    return this.lists.batchesOf(selection, offset, withStatus);
  }

  /** The status summary of each version of these workflows, by version id. */
  versionStatuses(workflows: readonly WorkflowEntity[]): Promise<Map<number, VersionStatusView>> {
    return this.lists.versionStatuses(workflows);
  }

  /** A page of what `GET /workflows` shows the viewer (API.md 5.1). */
  listVisible(viewer: Viewer, page: ListPage, withStatus: boolean): Promise<WorkflowSummaryView[]> {
    return this.lists.listVisible(viewer, page, withStatus);
  }

  /** `listVisible` as replies, with links after `baseUrl`. */
  visibleReplies(
    viewer: Viewer,
    page: ListPage,
    withStatus: boolean,
    baseUrl: string,
  ): Promise<WorkflowSummaryDto[]> {
    return this.lists.visibleReplies(viewer, page, withStatus, baseUrl);
  }

  /** `visibleReplies` whole, batch by batch. */
  visibleBatches(
    viewer: Viewer,
    offset: number | undefined,
    withStatus: boolean,
    baseUrl: string,
  ): AsyncGenerator<WorkflowSummaryDto[]> {
    return this.lists.visibleBatches(viewer, offset, withStatus, baseUrl);
  }

  /** A window of what `listVisible` shows that also meets `search`; no status. */
  search(viewer: Viewer, search: WorkflowSearch, window: ListWindow): Promise<WorkflowEntity[]> {
    return this.lists.search(viewer, search, window);
  }

  /** The usernames of these workflows' owners, by owner id. */
  ownerNames(workflows: readonly WorkflowEntity[]): Promise<Map<number, string>> {
    return this.lists.ownerNames(workflows);
  }

  /**
   * `PUT /workflows/{uuid}/versions/{version}`: renames that version. `changes.version`, when sent
   * (WorkflowHub sends it), must be the version itself: a version is not relabelled. Owner or
   * admin, or the registry the workflow came from.
   */
  async updateVersion(
    uuid: string,
    version: string,
    changes: { name?: string; version?: string },
    user: AuthUser,
  ): Promise<void> {
    if (changes.version !== undefined && changes.version !== version) {
      const message = `version must be the path's ('${version}'): a version is not relabelled`;
      throw new DomainError('invalid_input', message, [{ field: 'version', message }]);
    }
    const visible = await this.access.editableVersion(uuid, version, user);
    if (changes.name !== undefined && !(await this.repo.renameVersion(visible.version.id, changes.name))) {
      throw new DomainError('not_found', `The workflow ${uuid} has no version '${version}'`);
    }
  }

  /** `PUT /suites/{uuid}`: renames a test suite (nothing to change without a name). Owner or admin (or its registry). */
  async updateSuite(uuid: string, name: string | undefined, user: AuthUser): Promise<void> {
    const suite = await this.access.editableSuite(uuid, user);
    if (name !== undefined && !(await this.repo.renameSuite(suite.id, name))) {
      throw new DomainError('not_found', `No test suite ${uuid}`);
    }
  }

  /**
   * A registry is being deleted: its workflows stay, without a registry (the registries feature
   * calls this inside the transaction that deletes it).
   */
  forgetRegistry(tx: EntityManager, registryId: number): Promise<void> {
    return this.repo.forgetRegistry(tx, registryId);
  }

  /** The latest version, or the given one, with what the options ask for. */
  async get(
    uuid: string,
    version: string | undefined,
    user: Viewer,
    options: ReadOptions,
  ): Promise<WorkflowView> {
    const visible = await this.access.visibleVersion(uuid, version, user);
    const view: WorkflowView = { ...visible };
    if (options.previousVersions) {
      view.previous = versionsOf(visible.workflow).filter((other) => other.id < visible.version.id);
    }
    await this.withIssues([visible.version, ...(view.previous ?? [])]);
    view.follow = await this.followOf(visible.workflow);
    if (options.roCrate) {
      view.metadata = await this.metadataOf(uuid, visible.version);
    }
    return view;
  }

  /** A version's crate metadata, read from its archive only when `read` is called (an ETag match needs no read). */
  async metadata(uuid: string, version: string, user: Viewer): Promise<CrateMetadata> {
    const visible = await this.access.visibleVersion(uuid, version, user);
    return {
      sha256: visible.version.archiveSha256,
      read: () => this.metadataOf(uuid, visible.version),
    };
  }

  private async metadataOf(uuid: string, version: WorkflowVersionEntity): Promise<object> {
    const path = this.store.pathOf(version.archiveSha256);
    try {
      const { metadata } = await this.reader.read(path, this.config.registry.maxUncompressedBytes);
      // The crate was parsed as an object when it was registered.
      return metadata as object;
    } catch (error) {
      // A concurrent deletion of the version removes the archive after the lookup: the reader then fails
      // with ENOENT, or calls the archive damaged when the file went away between two of its reads.
      if (isNotFound(error) || !(await this.store.has(version.archiveSha256))) {
        throw new DomainError('not_found', `The workflow ${uuid} has no version '${version.version}'`);
      }
      throw error;
    }
  }

  async workflow(uuid: string, user: Viewer): Promise<WorkflowEntity> {
    return this.access.visibleWorkflow(uuid, user);
  }

  /**
   * What the workflow's repository follows (API.md 12); null when it was not registered from one.
   * The caller has read the workflow, with its versions, under the visibility rule. Read only for
   * a workflow with a version from a repository link: the others have no row to read.
   */
  async followOf(workflow: WorkflowEntity): Promise<FollowView | null> {
    if (!versionsOf(workflow).some((version) => version.sourceRef !== null)) {
      return null;
    }
    return (await this.follows.followOf(workflow.id)) ?? null;
  }

  /** The workflow with every version's issues loaded (`GET /workflows/{uuid}/versions`), and its registry. */
  async versions(uuid: string, user: Viewer): Promise<VersionsView> {
    const workflow = await this.access.visibleWorkflow(uuid, user);
    await this.withIssues(versionsOf(workflow));
    return { workflow, registry: await this.access.registryOf(workflow) };
  }

  /** What the repository checks found when the version was registered (API.md 12), errors first. */
  async issuesOf(version: WorkflowVersionEntity): Promise<VersionIssueEntity[]> {
    return (await this.repo.issuesOf([version.id])).get(version.id) ?? [];
  }

  /** Every type of issue the repository checks report (`GET /workflows/issues`). */
  issueTypes(): readonly IssueType[] {
    return this.checks.types();
  }

  /** Loads each version's `issues`. */
  private async withIssues(versions: readonly WorkflowVersionEntity[]): Promise<void> {
    const issues = await this.repo.issuesOf(versions.map((version) => version.id));
    for (const version of versions) {
      version.issues = issues.get(version.id) ?? [];
    }
  }

  /**
   * `PUT /workflows/{uuid}`: renames (the latest version's name) and/or sets `public`; the
   * workflow at its latest version afterwards. Owner or admin (see WorkflowAccess.editableWorkflow).
   */
  async update(uuid: string, update: WorkflowUpdate, user: AuthUser): Promise<WorkflowView> {
    const { follow, ...changes } = update;
    const workflow = await this.access.editableWorkflow(uuid, user);
    // Refused before anything is written.
    const repository = follow === undefined ? undefined : followableRepository(workflow, follow, this.hosts);
    if (!(await this.repo.updateWorkflow(workflow.id, latestVersionOf(workflow).id, changes))) {
      // Deleted, or its latest version replaced, by a concurrent request.
      throw new DomainError('not_found', `No workflow ${uuid}`);
    }
    if (repository && follow !== undefined) {
      if (await this.follows.setApiFollow(workflow.id, repository, follow, new Date(this.clock.nowMs()))) {
        this.followQueue.wake();
      }
    }
    return this.get(uuid, undefined, user, {});
  }

  /**
   * The workflow's badge token (API.md 5.2), issued on first request and the same afterwards
   * until revoked. Owner or admin.
   */
  async badgeToken(uuid: string, user: AuthUser): Promise<string> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const workflow = await this.access.editableWorkflow(uuid, user);
      const stored = workflow.badgeTokenSealed
        ? this.badgeTokens.unseal(workflow.badgeTokenSealed)
        : undefined;
      if (stored !== undefined && this.badgeTokens.matches(stored, workflow.badgeTokenSha256)) {
        return stored;
      }
      const issued = this.badgeTokens.issue();
      if (await this.repo.setBadgeToken(workflow.id, issued, workflow.badgeTokenSha256)) {
        return issued.token;
      }
      // Another request issued or revoked one since the read: read again, and keep theirs.
    }
    throw new DomainError(
      'conflict',
      `The badge token of workflow ${uuid} is being changed by other requests`,
    );
  }

  /** Revokes the badge token; the next `badgeToken` issues a new one. Owner or admin. */
  async revokeBadgeToken(uuid: string, user: AuthUser): Promise<void> {
    const workflow = await this.access.editableWorkflow(uuid, user);
    await this.repo.revokeBadgeToken(workflow.id);
  }

  /**
   * Deletes the whole workflow: every version with its suites, instances and builds, and each
   * archive no other workflow's version uses.
   */
  async deleteWorkflow(uuid: string, user: AuthUser): Promise<void> {
    const workflow = await this.access.editableWorkflow(uuid, user);
    const archives = await this.repo.deleteWorkflow(workflow.id);
    if (archives === null) {
      throw new DomainError('not_found', `No workflow ${uuid}`);
    }
    for (const sha256 of archives) {
      // Under each archive's lock, as a version deletion does: a registration storing the same bytes meanwhile keeps them.
      await this.archiveLock.exclusive(sha256, () => this.archives.forgetIfUnused(sha256));
    }
  }

  /**
   * Deletes a version with its suites, instances and builds, its archive when no other version
   * uses the same bytes, and the workflow when it was its last version.
   */
  async deleteVersion(uuid: string, version: string, user: AuthUser): Promise<void> {
    const visible = await this.access.editableVersion(uuid, version, user);
    const sha256 = visible.version.archiveSha256;
    const deleted = await this.archiveLock.exclusive(sha256, async () => {
      const done = await this.repo.deleteVersion(visible.version);
      if (done) {
        await this.archives.forgetIfUnused(sha256);
      }
      return done;
    });
    if (!deleted) {
      throw new DomainError('not_found', `The workflow ${uuid} has no version '${version}'`);
    }
  }

  async archive(uuid: string, version: string, user: Viewer): Promise<ArchiveDownload> {
    return this.downloadOf(await this.access.visibleVersion(uuid, version, user));
  }

  /** The stored crate of a version the viewer may see, for reads of its files. */
  async crate(uuid: string, version: string, user: Viewer): Promise<VersionCrate> {
    const visible = await this.access.visibleVersion(uuid, version, user);
    const suites = await this.repo.findSuitesOf(visible.version.id);
    const main = visible.version.mainWorkflow;
    return {
      ...visible,
      mainWorkflowPath: main === null ? undefined : pathInCrate(main),
      testDefinitionPaths: suites.flatMap((suite) => {
        const path = suite.definitionPath === null ? undefined : pathInCrate(suite.definitionPath);
        return path === undefined ? [] : [path];
      }),
      files: async () => {
        const path = this.store.pathOf(visible.version.archiveSha256);
        try {
          return await this.reader.files(path, this.config.registry.maxUncompressedBytes);
        } catch (error) {
          if (isNotFound(error) || !(await this.store.has(visible.version.archiveSha256))) {
            throw new DomainError('not_found', `The workflow ${uuid} has no version '${version}'`);
          }
          throw error;
        }
      },
      archive: this.downloadOf(visible),
    };
  }

  private downloadOf(visible: VisibleVersion): ArchiveDownload {
    const uuid = visible.workflow.uuid;
    const version = visible.version.version;
    const { archiveSha256: sha256, archiveSize: size } = visible.version;
    return {
      sha256,
      size,
      filename: `${visible.workflow.uuid}_${visible.version.version}.crate.zip`,
      open: async () => {
        const stream = await this.store.read(sha256);
        if (!stream) {
          // Deleted between the lookup and now, by a concurrent deletion of the version.
          throw new DomainError('not_found', `The workflow ${uuid} has no version '${version}'`);
        }
        return stream;
      },
    };
  }

  /** The suites of the given version, or of the latest. */
  /** The suites of a version (default latest) with the last checks of their instances. */
  async suites(uuid: string, version: string | undefined, user: Viewer): Promise<SuitesView> {
    const visible = await this.access.visibleVersion(uuid, version, user);
    return this.withLastChecks(await this.repo.findSuitesOf(visible.version.id), visible.version);
  }

  /** One suite with the last checks of its instances. */
  async suite(uuid: string, user: Viewer): Promise<SuiteView> {
    const suite = await this.access.visibleSuite(uuid, user);
    const version = loaded(suite.version, 'suite.version');
    return { suite, lastChecks: (await this.withLastChecks([suite], version)).lastChecks };
  }

  async instance(uuid: string, user: Viewer): Promise<InstanceView> {
    const instance = await this.access.visibleInstance(uuid, user);
    const version = loaded(instance.suite?.version, 'instance.suite.version');
    return { instance, lastChecks: await this.statuses.lastChecksOf([instance], version.registeredAt) };
  }

  private async withLastChecks(
    suites: SuitesView['suites'],
    version: WorkflowVersionEntity,
  ): Promise<SuitesView> {
    const instances = suites.flatMap((suite) => suite.instances ?? []);
    return { suites, lastChecks: await this.statuses.lastChecksOf(instances, version.registeredAt) };
  }
}

/** `GET /workflows/{uuid}/versions`: the workflow with its versions loaded, and where it came from. */
export interface VersionsView {
  workflow: WorkflowEntity;
  registry: RegistrySummary | null;
}

/**
 * The repository a workflow follows (API.md 12): that of its latest version registered from a
 * repository link (on any host). Throws DomainError('invalid_input') for a workflow registered from
 * other links only, and for globs that are not.
 */
function followableRepository(
  workflow: WorkflowEntity,
  follow: FollowGlobs | null,
  hosts: RepositoryHosts,
): RepositoryLink {
  for (const [field, globs] of [
    ['follow.tags', follow?.tags ?? []],
    ['follow.branches', follow?.branches ?? []],
  ] as const) {
    if (globs.length > MAX_GLOBS) {
      throw new DomainError('invalid_input', `${field} has more than ${MAX_GLOBS} globs`, [
        { field, message: `at most ${MAX_GLOBS} globs` },
      ]);
    }
    for (const glob of globs) {
      const problem = globProblem(glob);
      if (problem !== undefined) {
        const message = `${field}: ${JSON.stringify(glob).slice(0, 80)} ${problem}`;
        throw new DomainError('invalid_input', message, [{ field, message }]);
      }
    }
  }
  const fromRepository = versionsOf(workflow)
    .filter((version) => version.sourceRef !== null)
    .map((version) => hosts.forLink(version.rocLink)?.repository)
    .at(-1);
  if (!fromRepository) {
    throw new DomainError(
      'invalid_input',
      `the workflow ${workflow.uuid} was not registered from a repository link (of ${hosts.names().join(', ')}): ` +
        'only such a workflow follows its repository',
      [
        {
          field: 'follow',
          message: 'only a workflow registered from a repository link can follow it',
        },
      ],
    );
  }
  return { site: fromRepository.site, owner: fromRepository.owner, repo: fromRepository.repo };
}
