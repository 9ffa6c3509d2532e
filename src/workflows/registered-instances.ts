import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { TestInstanceEntity } from './entities/test-instance.entity.js';
import { WorkflowsRepository } from './workflows.repository.js';

/** What a check of an instance needs to know about it. */
export interface CheckTarget {
  id: number;
  resource: string;
  service: { id: number; type: string; url: string };
}

/** What a notification says about an instance. */
export interface InstanceFacts {
  instanceId: number;
  instanceUuid: string;
  instanceName: string | null;
  versionId: number;
  version: string;
  /** The version's name (the workflow's name as that version registered it). */
  name: string;
  workflowId: number;
  workflowUuid: string;
}

/**
 * The registry's read port for test monitoring: the lookups of registered instances that
 * monitoring needs, so that it reads no registry table itself. (Lookups by uuid with the
 * visibility rule are WorkflowAccess.)
 */
@Injectable()
export class RegisteredInstances {
  constructor(private readonly repo: WorkflowsRepository) {}

  /** By id, with their service; ids of deleted instances are absent. */
  async checkTargets(ids: readonly number[]): Promise<Map<number, CheckTarget>> {
    const found = await this.repo.findInstancesByIds(ids);
    return new Map(
      found.map((instance) => [
        instance.id,
        {
          id: instance.id,
          resource: instance.resource,
          service: {
            id: instance.serviceId,
            type: instance.service?.type ?? '',
            url: instance.service?.url ?? '',
          },
        },
      ]),
    );
  }

  /** By id, read in `tx` when given (inside a caller's transaction); ids of deleted instances are absent. */
  async facts(tx: EntityManager | undefined, ids: readonly number[]): Promise<Map<number, InstanceFacts>> {
    const rows = await this.repo.instanceFacts(tx, ids);
    return new Map(
      rows.map((row) => [
        Number(row.instance_id),
        {
          instanceId: Number(row.instance_id),
          instanceUuid: row.instance_uuid,
          instanceName: row.instance_name,
          versionId: Number(row.version_id),
          version: row.version,
          name: row.version_name,
          workflowId: Number(row.workflow_id),
          workflowUuid: row.workflow_uuid,
        },
      ]),
    );
  }

  /** A version's instances with their suite and service, suite by suite, in crate order. */
  ofVersion(versionId: number): Promise<TestInstanceEntity[]> {
    return this.repo.instancesOfVersion(versionId);
  }

  /** A suite's instances with their suite and service, in crate order. */
  ofSuite(suiteId: number): Promise<TestInstanceEntity[]> {
    return this.repo.instancesOfSuite(suiteId);
  }
}
