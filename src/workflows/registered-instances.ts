import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { pathInCrate, WORKFLOW_LANGUAGES, type WorkflowLanguage } from '../crates/index.js';
import type { TestInstanceEntity } from './entities/registry.entities.js';
import { WorkflowsRepository } from './workflows.repository.js';

/** What a check of an instance needs to know about it. */
export interface CheckTarget {
  id: number;
  resource: string;
  service: { id: number; type: string; url: string };
  /** Its version, for the builds-per-version rule (API.md 7.2). */
  version: TargetVersion;
}

/** A version as the builds-per-version rule sees it (API.md 7.2). */
export interface TargetVersion {
  id: number;
  /** The version string, e.g. `1.0`: a branch or tag of that name, if the repository has one, holds its runs. */
  version: string;
  /** The ref a GitHub repository link registered (API.md 7.1), else null. */
  sourceRef: string | null;
  registeredAt: Date;
  /** Whether an earlier version of the workflow exists (the first version's window has no start, API.md 7.2 as built). */
  first: boolean;
  /** When the workflow's next version was registered; null for the latest. */
  nextRegisteredAt: Date | null;
}

/** What a managed run of an instance runs (API.md 17): its version's crate and its suite's definition. */
export interface RunSource {
  instanceUuid: string;
  /** The crate store's key of the version's archive. */
  archiveSha256: string;
  /** The suite's test definition, a path in the crate; null when the crate names none. */
  definitionPath: string | null;
  /** The definition's engine as the registry stores it (2.5's `test_engine.type`: `cwltool`). */
  engine: string | null;
  workflowUuid: string;
  /** The version string. */
  version: string;
  /** The main workflow's path in the crate; undefined when the crate names none in it. */
  mainWorkflowPath: string | undefined;
  /** The main workflow's language; null when it is none the registry tells apart. */
  language: WorkflowLanguage | null;
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
    const versions = await this.targetVersions(
      found.flatMap((instance) => (instance.suite ? [instance.suite.versionId] : [])),
    );
    const targets = new Map<number, CheckTarget>();
    for (const instance of found) {
      const version = instance.suite ? versions.get(instance.suite.versionId) : undefined;
      // Deleted with its version since the instance was read: nothing to check.
      if (!version) {
        continue;
      }
      targets.set(instance.id, {
        id: instance.id,
        resource: instance.resource,
        service: {
          id: instance.serviceId,
          type: instance.service?.type ?? '',
          url: instance.service?.url ?? '',
        },
        version,
      });
    }
    return targets;
  }

  /** What a managed run of the instance runs; undefined for an instance that is gone. One query. */
  async runSource(instanceId: number): Promise<RunSource | undefined> {
    const row = await this.repo.runSource(instanceId);
    return row
      ? {
          instanceUuid: row.instance_uuid,
          archiveSha256: row.archive_sha256,
          definitionPath: row.definition_path,
          engine: row.engine_type,
          workflowUuid: row.workflow_uuid,
          version: row.version,
          mainWorkflowPath: row.main_workflow === null ? undefined : pathInCrate(row.main_workflow),
          language: WORKFLOW_LANGUAGES.find((language) => language === row.workflow_language) ?? null,
        }
      : undefined;
  }

  /** These versions with the registration time of each one's next version, in one query. */
  private async targetVersions(versionIds: readonly number[]): Promise<Map<number, TargetVersion>> {
    const all = await this.repo.versionsBeside([...new Set(versionIds)]);
    const wanted = new Set(versionIds);
    const result = new Map<number, TargetVersion>();
    for (const version of all) {
      if (!wanted.has(version.id)) {
        continue;
      }
      const isLater = (other: (typeof all)[number]): boolean =>
        other.registeredAt.getTime() > version.registeredAt.getTime() ||
        (other.registeredAt.getTime() === version.registeredAt.getTime() && other.id > version.id);
      const siblings = all.filter(
        (other) => other.workflowId === version.workflowId && other.id !== version.id,
      );
      const later = siblings.filter(isLater);
      const next = later.reduce<Date | null>(
        (earliest, other) =>
          earliest === null || other.registeredAt < earliest ? other.registeredAt : earliest,
        null,
      );
      result.set(version.id, {
        id: version.id,
        version: version.version,
        sourceRef: version.sourceRef,
        registeredAt: version.registeredAt,
        first: siblings.every(isLater),
        nextRegisteredAt: next,
      });
    }
    return result;
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
