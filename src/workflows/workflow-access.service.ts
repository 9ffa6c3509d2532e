import { Injectable } from '@nestjs/common';
import { hasRole, type AuthUser } from '../auth/auth-user.js';
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
 * Lookups by uuid that apply the visibility rule of area B: a workflow, and everything in
 * it, exists only for its owner and for admins. Anybody else gets the same not_found as for
 * a uuid that was never registered, so that uuids do not leak. Exported for test monitoring.
 */
@Injectable()
export class WorkflowAccess {
  constructor(private readonly repo: WorkflowsRepository) {}

  async visibleWorkflow(uuid: string, user: AuthUser): Promise<WorkflowEntity> {
    const workflow = await this.repo.findWorkflow(uuid);
    if (!workflow || !canSee(workflow, user) || versionsOf(workflow).length === 0) {
      throw new DomainError('not_found', `No workflow ${uuid}`);
    }
    return workflow;
  }

  /** The given version, or the latest when `version` is undefined. */
  async visibleVersion(uuid: string, version: string | undefined, user: AuthUser): Promise<VisibleVersion> {
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
  async visibleSuite(uuid: string, user: AuthUser): Promise<TestSuiteEntity> {
    const suite = await this.repo.findSuite(uuid);
    const workflow = suite?.version?.workflow;
    if (!suite || !workflow || !canSee(workflow, user)) {
      throw new DomainError('not_found', `No test suite ${uuid}`);
    }
    return suite;
  }

  /** With its service and its suite's version's workflow loaded. */
  async visibleInstance(uuid: string, user: AuthUser): Promise<TestInstanceEntity> {
    const instance = await this.repo.findInstance(uuid);
    const workflow = instance?.suite?.version?.workflow;
    if (!instance || !workflow || !canSee(workflow, user)) {
      throw new DomainError('not_found', `No test instance ${uuid}`);
    }
    return instance;
  }
}

export function canSee(workflow: WorkflowEntity, user: AuthUser): boolean {
  return workflow.ownerId === user.id || hasRole(user, 'admin');
}
