import { Injectable } from '@nestjs/common';
import { hasRole, type AuthUser } from '../auth/auth-user.js';
import type { Viewer } from '../auth/optional-auth.decorator.js';
import { DomainError } from '../common/errors/domain-error.js';
import { latestVersionOf, versionsOf } from './workflow-versions.js';
import type { TestInstanceEntity } from './entities/test-instance.entity.js';
import type { TestSuiteEntity } from './entities/test-suite.entity.js';
import type { WorkflowVersionEntity } from './entities/workflow-version.entity.js';
import type { WorkflowEntity } from './entities/workflow.entity.js';
import { WorkflowsRepository } from './workflows.repository.js';

export interface VisibleVersion {
  /** With its versions (each with its submitter) loaded. */
  workflow: WorkflowEntity;
  version: WorkflowVersionEntity;
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
  constructor(private readonly repo: WorkflowsRepository) {}

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
    if (version === undefined) {
      return { workflow, version: latestVersionOf(workflow) };
    }
    const found = versionsOf(workflow).find((candidate) => candidate.version === version);
    if (!found) {
      throw new DomainError('not_found', `The workflow ${uuid} has no version '${version}'`);
    }
    return { workflow, version: found };
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
}

export function canSee(workflow: WorkflowEntity, user: Viewer): boolean {
  return workflow.public || (user !== undefined && canEdit(workflow, user));
}

export function canEdit(workflow: WorkflowEntity, user: AuthUser): boolean {
  return workflow.ownerId === user.id || hasRole(user, 'admin');
}
