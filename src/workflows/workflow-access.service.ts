import { Inject, Injectable, Optional } from '@nestjs/common';
import { hasRole, type AuthUser } from '../auth/auth-user.js';
import type { Viewer } from '../auth/optional-auth.decorator.js';
import { DomainError } from '../common/errors/domain-error.js';
import { latestVersionOf, versionsOf } from './workflow-versions.js';
import type {
  TestInstanceEntity,
  TestSuiteEntity,
  WorkflowEntity,
  WorkflowVersionEntity,
} from './entities/registry.entities.js';
import { BadgeTokens } from './badge-tokens.js';
import { WorkflowsRepository } from './workflows.repository.js';
import { REGISTRY_DIRECTORY, type RegistryDirectory, type RegistrySummary } from './registry-directory.js';

export interface VisibleVersion {
  /** With its versions (each with its submitter) loaded. */
  workflow: WorkflowEntity;
  version: WorkflowVersionEntity;
  /** The registry the workflow came from (API.md 10.1), null for one registered by link; read by visibleVersion. */
  registry?: RegistrySummary | null;
}

export interface BadgeVersion extends VisibleVersion {
  /**
   * `shared` when anybody with the URL may see this badge (a public workflow, or a badge token in
   * the URL), so shared caches may keep it; `personal` when it was the caller's own token.
   */
  audience: 'shared' | 'personal';
}

/**
 * Lookups by uuid that apply the visibility rule of area B (API.md 2, 5.1): a public workflow,
 * and everything in it, is readable by anybody (a viewer may be anonymous); a private one exists
 * only for its owner and for admins. Anybody else gets the same not_found as for a uuid that
 * was never registered, so that uuids do not leak. Writes need the owner or an admin (see
 * `editableWorkflow`). Exported for test monitoring.
 */
@Injectable()
export class WorkflowAccess {
  constructor(
    private readonly repo: WorkflowsRepository,
    private readonly badgeTokens: BadgeTokens,
    @Optional()
    @Inject(REGISTRY_DIRECTORY)
    private readonly registries: RegistryDirectory | null = null,
  ) {}

  /** The registry a workflow came from, null for one registered by link (or whose registry is gone). */
  async registryOf(workflow: WorkflowEntity): Promise<RegistrySummary | null> {
    if (workflow.registryId === null || this.registries === null) {
      return null;
    }
    return (await this.registries.describe(workflow.registryId)) ?? null;
  }

  /** The id of the registry of this name; undefined when there is none (or no registries feature). */
  async registryNamed(name: string): Promise<number | undefined> {
    return this.registries === null ? undefined : this.registries.idOf(name);
  }

  async visibleWorkflow(uuid: string, user: Viewer): Promise<WorkflowEntity> {
    const workflow = await this.repo.findWorkflow(uuid);
    if (!workflow || !canSee(workflow, user) || versionsOf(workflow).length === 0) {
      throw new DomainError('not_found', `No workflow ${uuid}`);
    }
    return workflow;
  }

  /** The given version, or the latest when `version` is undefined. */
  async visibleVersion(uuid: string, version: string | undefined, user: Viewer): Promise<VisibleVersion> {
    const workflow = await this.visibleWorkflow(uuid, user);
    return { ...versionOf(workflow, version), registry: await this.registryOf(workflow) };
  }

  /**
   * A version for its badge (API.md 5.2): visible to the caller, or opened by the workflow's badge
   * token. A wrong or revoked token is the same not_found as no token: a badge never tells a
   * private workflow exists.
   */
  async badgeVersion(
    uuid: string,
    version: string | undefined,
    user: Viewer,
    badgeToken: string | undefined,
  ): Promise<BadgeVersion> {
    const workflow = await this.repo.findWorkflow(uuid);
    if (workflow && versionsOf(workflow).length > 0) {
      if (canSee(workflow, user)) {
        return {
          ...versionOf(workflow, version),
          audience: workflow.public ? 'shared' : 'personal',
        };
      }
      if (badgeToken !== undefined && this.badgeTokens.matches(badgeToken, workflow.badgeTokenSha256)) {
        return { ...versionOf(workflow, version), audience: 'shared' };
      }
    }
    throw new DomainError('not_found', `No workflow ${uuid}`);
  }

  /** With its instances (and their services) and its version's workflow loaded. */
  async visibleSuite(uuid: string, user: Viewer): Promise<TestSuiteEntity> {
    const suite = await this.repo.findSuite(uuid);
    const workflow = suite?.version?.workflow;
    if (!suite || !workflow || !canSee(workflow, user)) {
      throw new DomainError('not_found', `No test suite ${uuid}`);
    }
    return suite;
  }

  /** With its service and its suite's version's workflow loaded. */
  async visibleInstance(uuid: string, user: Viewer): Promise<TestInstanceEntity> {
    const instance = await this.repo.findInstance(uuid);
    const workflow = instance?.suite?.version?.workflow;
    if (!instance || !workflow || !canSee(workflow, user)) {
      throw new DomainError('not_found', `No test instance ${uuid}`);
    }
    return instance;
  }

  /** `visibleInstance`, of a workflow the caller may change (forbidden when they only see it). */
  async editableInstance(uuid: string, user: AuthUser): Promise<TestInstanceEntity> {
    const instance = await this.visibleInstance(uuid, user);
    const workflow = instance.suite?.version?.workflow;
    if (workflow && !canEdit(workflow, user)) {
      throw new DomainError(
        'forbidden',
        `Only the owner of the workflow ${workflow.uuid} or an admin may change it`,
      );
    }
    return instance;
  }

  /**
   * A workflow the caller may change: not_found when they may not even see it, forbidden when
   * they see it (it is public) but are neither its owner nor an admin.
   */
  async editableWorkflow(uuid: string, user: AuthUser): Promise<WorkflowEntity> {
    const workflow = await this.visibleWorkflow(uuid, user);
    if (!canEdit(workflow, user)) {
      throw new DomainError('forbidden', `Only the owner of the workflow ${uuid} or an admin may change it`);
    }
    return workflow;
  }

  /** `editableWorkflow` at one version (the latest when undefined). */
  async editableVersion(uuid: string, version: string | undefined, user: AuthUser): Promise<VisibleVersion> {
    const visible = await this.visibleVersion(uuid, version, user);
    if (!canEdit(visible.workflow, user)) {
      throw new DomainError('forbidden', `Only the owner of the workflow ${uuid} or an admin may change it`);
    }
    return visible;
  }

  /** A suite whose workflow the caller may change (as `editableWorkflow`). */
  async editableSuite(uuid: string, user: AuthUser): Promise<TestSuiteEntity> {
    const suite = await this.visibleSuite(uuid, user);
    const workflow = loadedWorkflowOf(suite);
    if (!canEdit(workflow, user)) {
      throw new DomainError(
        'forbidden',
        `Only the owner of the workflow ${workflow.uuid} or an admin may change its test suites`,
      );
    }
    return suite;
  }
}

function loadedWorkflowOf(suite: TestSuiteEntity): WorkflowEntity {
  const workflow = suite.version?.workflow;
  if (!workflow) {
    throw new Error('a suite read without its workflow');
  }
  return workflow;
}

/** The given version of a workflow (its versions loaded), or the latest when `version` is undefined. */
function versionOf(workflow: WorkflowEntity, version: string | undefined): VisibleVersion {
  if (version === undefined) {
    return { workflow, version: latestVersionOf(workflow) };
  }
  const found = versionsOf(workflow).find((candidate) => candidate.version === version);
  if (!found) {
    throw new DomainError('not_found', `The workflow ${workflow.uuid} has no version '${version}'`);
  }
  return { workflow, version: found };
}

/**
 * canSee in SQL, for reads that decide for many users at once (the subscribers an event tells):
 * `workflow` and `user` are the aliases of a joined WorkflowEntity and UserEntity row. Roles are
 * stored comma-separated.
 */
export function visibleToSql(workflow: string, user: string): string {
  const roles = `${user}.roles`;
  return (
    `(${workflow}.public = 1 OR ${workflow}.ownerId = ${user}.id OR ${roles} = 'admin'` +
    ` OR ${roles} LIKE 'admin,%' OR ${roles} LIKE '%,admin' OR ${roles} LIKE '%,admin,%')`
  );
}

export function canSee(workflow: WorkflowEntity, user: Viewer): boolean {
  return workflow.public || (user !== undefined && canEdit(workflow, user));
}

/**
 * A person: their own workflows (an admin: all). A registry's token: the workflows that came
 * from that registry, whoever of its users sent them, and nothing else (API.md 10.1).
 */
export function canEdit(workflow: WorkflowEntity, user: AuthUser): boolean {
  if (user.registry !== undefined) {
    return workflow.registryId === user.registry.id;
  }
  return workflow.ownerId === user.id || hasRole(user, 'admin');
}
