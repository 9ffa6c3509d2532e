import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import type { AuthUser } from '../auth/auth-user.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { AppConfig } from '../config/app-config.js';
import {
  ArchiveLock,
  CrateReader,
  CrateStore,
  type IssueSelection,
  METADATA_FILE,
  MissingMetadataError,
  parseCrateGraph,
  readCrateGraph,
  removeQuietly,
  TESTING_SERVICE_CATALOG,
  type TestingServiceCatalog,
  workflowLanguageOf,
} from '../crates/index.js';
import { RepositoryChecks } from './checks/repository-checks.js';
import { CrateFetcher } from './crate-fetcher.js';
import {
  CONFIG_COMPANIONS,
  configSettings,
  followInForce,
  FollowQueue,
  FollowsRepository,
  readRepositoryConfig,
  type RepositoryLink,
  type RepositorySource,
} from '../repositories/index.js';
import {
  checkInstanceAddresses,
  checkStorable,
  configuredServices,
  lookupHost,
  markUncheckable,
  registrationName,
} from './registration-rules.js';
import { VersionArchives } from './version-archives.js';
import { ownedByAnother, versionExists } from './version-writer.js';
import { versionsOf } from './workflow-versions.js';
import { WorkflowsRepository } from './workflows.repository.js';

/** Who registers: a user, or the owner of a followed repository's workflow (API.md 12). */
export type Submitter = Pick<AuthUser, 'id'>;

/**
 * A crate sent by a registry (API.md 10.1): downloaded from `rocLink` as the registry serves it,
 * registered under the registry's uuid, and recorded as coming from there.
 */
export interface RegistrySource {
  /** The registry's id in the registries feature. */
  id: number;
  /** Names the registry in the details of its failures. */
  name: string;
  /** The workflow's id in the registry. */
  identifier: string;
  /** The registry's page of the version (`links.origin`). */
  originLink: string;
  /** Who a new workflow belongs to: the registry's own account, or the local identity of one of its users. */
  submitterId: number;
}

export interface Registration {
  rocLink: string;
  version: string;
  authorization?: string;
  uuid?: string;
  name?: string;
  public?: boolean;
  /**
   * Which repository checks' issues to record; else a `.lifemonitor.yaml`'s `issues` section
   * (API.md 12); all when neither says.
   */
  issues?: IssueSelection;
  /**
   * A followed repository's new tag or push (API.md 12): the archive of this commit, registered
   * as from this ref, instead of resolving `rocLink`.
   */
  repository?: { link: RepositoryLink; source: RepositorySource };
  /** Replaces the workflow's version of this name, when it has one (a followed branch's new commit). */
  replace?: boolean;
  /** Set when a registry sends the crate: the link is its crate URL, its failures are upstream ones. */
  registry?: RegistrySource;
}

export interface Registered {
  uuid: string;
  name: string;
  version: string;
}

/** Where a registration was when it failed: the cause label of its failure metric. */
export type RegistrationStage = 'download' | 'archive' | 'crate' | 'store';

/** How far a registration got: its stage, and the crate's size once downloaded. */
export interface RegistrationProgress {
  stage: RegistrationStage;
  size?: number;
}

/**
 * Registration (API.md 2.1, 10.1, 12): every way in (a link, a followed repository, a registry)
 * goes through one pipeline, from the download to the saved version. WorkflowsService.register
 * counts and logs its outcomes.
 */
@Injectable()
export class RegistrationService {
  constructor(
    private readonly repo: WorkflowsRepository,
    private readonly fetcher: CrateFetcher,
    private readonly reader: CrateReader,
    private readonly store: CrateStore,
    private readonly archiveLock: ArchiveLock,
    private readonly archives: VersionArchives,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly checks: RepositoryChecks,
    private readonly follows: FollowsRepository,
    private readonly followQueue: FollowQueue,
    @Optional()
    @Inject(TESTING_SERVICE_CATALOG)
    private readonly serviceCatalog: TestingServiceCatalog | null = null,
  ) {}

  /**
   * Downloads, reads and stores a crate as a new version, atomically: on any failure no row
   * and no file are left behind. `progress` tells the caller how far it got. Throws DomainError
   * invalid_input (the link, the archive or the crate is unusable) or conflict (the uuid has
   * this version or belongs to another user).
   */
  async register(user: Submitter, input: Registration, progress: RegistrationProgress): Promise<Registered> {
    const uuid = input.uuid ?? randomUUID();
    const ownerId = input.registry?.submitterId ?? user.id;
    // Answered before downloading anything; the transaction checks again, race-free. A uuid of
    // our own is new: there is nothing to look up.
    const exists =
      input.uuid !== undefined &&
      (await this.refuseKnownConflicts(uuid, input.version, ownerId, input.registry?.id, input.replace));
    const { crate, source, repository, repositoryName } = input.repository
      ? await this.fetcher.fetchAt(input.rocLink, input.repository.link, input.repository.source)
      : input.registry
        ? await this.fetcher.fetchFromUpstream(input.rocLink, input.authorization, input.registry.name)
        : await this.fetcher.fetch(input.rocLink, input.version, input.authorization);
    progress.size = crate.size;
    let stored = false;
    try {
      progress.stage = 'archive';
      const { metadata, files, companion } = await this.reader
        .read(
          crate.bytes ?? crate.path,
          this.config.registry.maxUncompressedBytes,
          undefined,
          repository ? CONFIG_COMPANIONS : undefined,
        )
        .catch((error: unknown) => {
          if (repositoryName && source && error instanceof MissingMetadataError) {
            throw new DomainError(
              'invalid_input',
              `${repositoryName} has no ${METADATA_FILE} at its root ` +
                `(ref '${source.ref}', commit ${source.commit})`,
            );
          }
          throw error;
        });
      progress.stage = 'crate';
      const services = this.serviceCatalog?.serviceTypes() ?? [];
      const graph = readCrateGraph(metadata, { services });
      const read = parseCrateGraph(graph, { services });
      // A repository's .lifemonitor.yaml says what the body does not (API.md 12).
      const repositoryConfig = repository ? readRepositoryConfig(companion) : undefined;
      const settings = configSettings(repositoryConfig ?? {});
      const name = registrationName(input.name ?? settings.name, read);
      checkStorable(read.suites, read.mainWorkflow);
      const parsed = { ...read, suites: markUncheckable(read.suites, services) };
      if (!this.config.registry.allowPrivateNetworkLinks) {
        await checkInstanceAddresses(
          parsed.suites,
          lookupHost,
          configuredServices(this.config.monitoring.services),
        );
      }
      // Every way in (a link, a repository, a registry) registers here, so every one is checked here.
      const issues = await this.checks.run(
        {
          crate: parsed,
          graph,
          files: new Set(files),
          repository: repository && source ? { ...repository, ...source } : undefined,
          following: repositoryConfig && {
            file: repositoryConfig.file,
            problem: repositoryConfig.problem,
            // The API's globs win over the file's (API.md 12).
            branches: followInForce(exists ? await this.follows.apiFollowOf(uuid) : null, settings.follow)
              .globs.branches,
          },
        },
        input.issues ?? settings.issues,
      );
      progress.stage = 'store';
      const saved = await this.archiveLock.exclusive(crate.sha256, async () => {
        await this.store.put(crate.path, crate.sha256);
        stored = true;
        try {
          return await this.repo.saveVersion({
            workflowUuid: uuid,
            ownerId,
            version: input.version,
            name,
            rocLink: input.rocLink,
            archiveSha256: crate.sha256,
            archiveSize: crate.size,
            source,
            mainWorkflow: parsed.mainWorkflow?.id,
            language: workflowLanguageOf(parsed.mainWorkflow),
            suites: parsed.suites,
            issues,
            now: new Date(this.clock.nowMs()),
            // The file's visibility is that of a new workflow: a later version does not change it.
            public: input.public ?? (exists ? undefined : settings.public),
            replace: input.replace,
            repository: repository ? { ...repository, fileFollow: settings.follow } : undefined,
            registry: input.registry,
          });
        } catch (error) {
          await this.archives.forgetIfUnused(crate.sha256);
          throw error;
        }
      });
      const replaced = saved.replacedArchive;
      if (replaced !== undefined && replaced !== crate.sha256) {
        // Under its own lock, once the new archive's is given back: two locks are never held at once.
        await this.archiveLock.exclusive(replaced, () => this.archives.forgetIfUnused(replaced));
      }
      if (saved.pollDue) {
        this.followQueue.wake();
      }
      return { uuid, name, version: input.version };
    } finally {
      // For every failure before the store took the file (a move: the path is gone then).
      if (!stored) {
        await removeQuietly(crate.path);
      }
    }
  }

  /** True when the workflow exists already. */
  private async refuseKnownConflicts(
    uuid: string,
    version: string,
    ownerId: number,
    registryId: number | undefined,
    replace = false,
  ): Promise<boolean> {
    const workflow = await this.repo.findWorkflow(uuid);
    if (!workflow) {
      return false;
    }
    // As the transaction decides (mayAddVersion): the owner, or for a registry's workflow that registry.
    if (workflow.ownerId !== ownerId && (registryId === undefined || workflow.registryId !== registryId)) {
      throw ownedByAnother(uuid);
    }
    if (!replace && versionsOf(workflow).some((existing) => existing.version === version)) {
      throw versionExists(uuid, version);
    }
    return true;
  }
}
