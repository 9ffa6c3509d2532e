import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { DomainError } from '../common/errors/domain-error.js';
import { isForeignKeyViolation, isUniqueViolation } from '../common/errors/unique-violation.js';
import { lockRows } from '../database/dialect.js';
import type { VersionIssue } from './checks/repository-checks.js';
import { type ParsedSuite, type WorkflowLanguage } from '../crates/index.js';
import { type FollowGlobs, type FollowsRepository, type RepositoryLink } from '../repositories/index.js';
import {
  TestInstanceEntity,
  TestSuiteEntity,
  VersionIssueEntity,
  WorkflowEntity,
  WorkflowVersionEntity,
} from './entities/registry.entities.js';
import { insertedId, serviceFor } from './registry-rows.js';
import type { AddedInstance, RegistryEvents } from './registry-events.js';

/** Everything one registration writes. */
export interface NewVersion {
  workflowUuid: string;
  ownerId: number;
  version: string;
  name: string;
  rocLink: string;
  archiveSha256: string;
  archiveSize: number;
  /** The ref and commit of a GitHub repository link. */
  source?: { ref: string; commit: string };
  /** The crate's main workflow (its @id) and that workflow's language, when the crate names them. */
  mainWorkflow?: string;
  language?: WorkflowLanguage;
  suites: ParsedSuite[];
  /** What the repository checks found (API.md 12). */
  issues: readonly VersionIssue[];
  now: Date;
  /** Sets the workflow's visibility when given (a new workflow is private otherwise). */
  public?: boolean;
  /** Replaces the workflow's version of this name, when it has one (a followed branch's push). */
  replace?: boolean;
  /** The GitHub repository of a repository link, and the globs its `.lifemonitor.yaml` follows. */
  repository?: RepositoryLink & { fileFollow: FollowGlobs | null };
  /** Where the crate came from when a registry sent it (API.md 10.1). */
  registry?: RegistryOrigin;
}

/** What a registration saved. */
export interface SavedVersion {
  version: WorkflowVersionEntity;
  /** The archive of the version replaced, for the caller to remove when no version uses it any more. */
  replacedArchive?: string;
  /** The repository is to be polled now: following it began or changed (API.md 12). */
  pollDue: boolean;
}

/** The registry a version came from: its id, the workflow's id there, the registry's page of the version. */
export interface RegistryOrigin {
  id: number;
  identifier: string;
  originLink: string;
}

/**
 * What one registration writes, inside the transaction WorkflowsRepository.saveVersion opens:
 * the rows of a version and of what the crate declares. It changes with what a registration
 * records; the registry's reads and other writes stay in WorkflowsRepository.
 */
export class VersionWriter {
  constructor(
    private readonly events: RegistryEvents,
    private readonly follows: FollowsRepository,
  ) {}

  async insert(tx: EntityManager, input: NewVersion): Promise<SavedVersion> {
    const { id: workflowId, created: newWorkflow } = await this.workflowFor(tx, input);
    // Its suites, instances and builds go with it by cascade; the workflow's row is locked above.
    const replaced = input.replace
      ? await tx.findOne(WorkflowVersionEntity, {
          select: { id: true, archiveSha256: true },
          where: { workflowId, version: input.version },
        })
      : null;
    if (replaced) {
      await tx.delete(WorkflowVersionEntity, { id: replaced.id });
    }
    const pollDue = input.repository
      ? await this.follows.recordSource(tx, workflowId, input.repository, input.now)
      : false;
    const version = tx.create(WorkflowVersionEntity, {
      uuid: randomUUID(),
      workflowId,
      version: input.version,
      name: input.name,
      rocLink: input.rocLink,
      archiveSha256: input.archiveSha256,
      archiveSize: input.archiveSize,
      sourceRef: input.source?.ref ?? null,
      sourceCommit: input.source?.commit ?? null,
      mainWorkflow: input.mainWorkflow ?? null,
      language: input.language ?? null,
      originLink: input.registry?.originLink ?? null,
      submitterId: input.ownerId,
      registeredAt: input.now,
    });
    try {
      version.id = insertedId(await tx.insert(WorkflowVersionEntity, version));
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw versionExists(input.workflowUuid, input.version);
      }
      throw error;
    }
    // The workflow's row is this transaction's (created or locked above): lists see the new order with the
    // version, and the wall its status (a new version has no builds yet).
    await tx.update(
      WorkflowEntity,
      { id: workflowId },
      { latestVersionId: version.id, testStatus: 'not_available' },
    );
    // Sorted, so that two copies creating the same services take their locks in one order.
    const serviceKeys = [
      ...new Set(
        input.suites.flatMap((suite) => suite.instances.map((i) => serviceKey(i.serviceType, i.serviceUrl))),
      ),
    ].sort();
    const serviceIds = new Map<string, number>();
    for (const key of serviceKeys) {
      const [type, url] = JSON.parse(key) as [string, string];
      serviceIds.set(key, await serviceFor(tx, type, url));
    }
    const added: AddedInstance[] = [];
    for (const suite of input.suites) {
      const suiteId = insertedId(
        await tx.insert(TestSuiteEntity, {
          uuid: randomUUID(),
          versionId: version.id,
          rocSuite: suite.id,
          name: suite.name ?? null,
          definitionPath: suite.definition?.path ?? null,
          engineType: suite.definition?.engineType ?? null,
          engineVersion: suite.definition?.engineVersion ?? null,
        }),
      );
      for (const instance of suite.instances) {
        const serviceId = serviceIds.get(serviceKey(instance.serviceType, instance.serviceUrl));
        const instanceId = insertedId(
          await tx.insert(TestInstanceEntity, {
            uuid: randomUUID(),
            suiteId,
            serviceId,
            rocInstance: instance.id,
            name: instance.name ?? null,
            resource: instance.resource,
            managed: instance.managed === true,
            uncheckedReason: instance.uncheckedReason ?? null,
          }),
        );
        // One that can never be checked gets no check state (API.md 12): monitoring never sees it.
        if (instance.uncheckedReason !== undefined) {
          continue;
        }
        added.push({
          instanceId,
          versionId: version.id,
          serviceId: Number(serviceId),
          serviceType: instance.serviceType,
          serviceUrl: instance.serviceUrl,
          resource: instance.resource,
        });
      }
    }
    if (input.issues.length > 0) {
      await tx.insert(
        VersionIssueEntity,
        input.issues.map((issue) => ({
          versionId: version.id,
          issueType: issue.id,
          name: issue.name,
          description: issue.description,
          severity: issue.severity,
        })),
      );
    }
    await this.events.instancesAdded(tx, added, input.now);
    await this.events.versionAdded(
      tx,
      {
        workflowId,
        workflowUuid: input.workflowUuid,
        versionId: version.id,
        submitterId: input.ownerId,
        newWorkflow,
      },
      input.now,
    );
    return { version, replacedArchive: replaced?.archiveSha256, pollDue };
  }

  /** The id of the version's workflow, created when this is its first version. */
  private async workflowFor(tx: EntityManager, input: NewVersion): Promise<{ id: number; created: boolean }> {
    const query = tx
      .createQueryBuilder(WorkflowEntity, 'w')
      .where('w.uuid = :uuid', { uuid: input.workflowUuid });
    // Locked so that deleting its last version in another copy waits for this registration.
    const existing = await lockRows(query, 'write').getOne();
    if (existing) {
      if (!mayAddVersion(existing, input)) {
        throw ownedByAnother(input.workflowUuid);
      }
      if (input.public !== undefined && input.public !== existing.public) {
        await tx.update(WorkflowEntity, { id: existing.id }, { public: input.public });
      }
      return { id: existing.id, created: false };
    }
    try {
      const id = insertedId(
        await tx.insert(WorkflowEntity, {
          uuid: input.workflowUuid,
          ownerId: input.ownerId,
          createdAt: input.now,
          public: input.public ?? false,
          registryId: input.registry?.id ?? null,
          registryIdentifier: input.registry?.identifier ?? null,
        }),
      );
      return { id, created: true };
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new DomainError(
          'conflict',
          `The workflow ${input.workflowUuid} was being registered by another request at the same time`,
        );
      }
      // The owner's account deleted since the request began.
      if (isForeignKeyViolation(error)) {
        throw new DomainError('not_found', 'The account registering it was deleted meanwhile');
      }
      throw error;
    }
  }
}

function serviceKey(type: string, url: string): string {
  return JSON.stringify([type, url]);
}

export function versionExists(uuid: string, version: string): DomainError {
  return new DomainError('conflict', `The workflow ${uuid} already has a version '${version}'`);
}

/**
 * Who may add a version to an existing workflow: its owner; for a workflow that came from a
 * registry, that registry, whichever of its users sends it (the workflow keeps its first owner).
 */
function mayAddVersion(existing: WorkflowEntity, input: NewVersion): boolean {
  if (input.registry !== undefined && existing.registryId === input.registry.id) {
    return true;
  }
  return existing.ownerId === input.ownerId;
}

export function ownedByAnother(uuid: string): DomainError {
  return new DomainError('conflict', `The workflow ${uuid} belongs to another user`);
}
