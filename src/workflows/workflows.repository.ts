import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository, type EntityManager } from 'typeorm';
import { DomainError } from '../common/errors/domain-error.js';
import { isForeignKeyViolation, isUniqueViolation } from '../common/errors/unique-violation.js';
import type { VersionIssue } from './checks/repository-checks.js';
import { UNCHECKABLE_INSTANCE } from './checks/test-suites.checks.js';
import { loaded } from './dto/loaded.js';
import type { ParsedSuite } from './crate/ro-crate-parser.js';
import type { WorkflowLanguage } from './crate/workflow-language.js';
import {
  TestInstanceEntity,
  TestSuiteEntity,
  VersionIssueEntity,
  WorkflowEntity,
  WorkflowVersionEntity,
} from './entities/registry.entities.js';
import { TestServiceEntity } from './entities/test-service.entity.js';
import { UserEntity } from '../auth/entities/user.entity.js';
import { RegistryEvents, type AddedInstance } from './registry-events.js';
import { lockRows } from '../database/dialect.js';
import { findOneJoined } from '../database/find-one-joined.js';
import { retryOnDeadlock } from '../database/retry-on-deadlock.js';
import { inList, PlainEntities } from '../database/plain-entities.js';
import type { RepositoryLink } from './crate/github-repository.js';
import type { FollowGlobs } from './follow/follow-rules.js';
import { FollowsRepository } from './follow/follows.repository.js';

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

/** What `PUT /workflows/{uuid}` changes; absent members stay. */
export interface WorkflowChanges {
  /** The latest version's name, which is the workflow's (API.md 2.3). */
  name?: string;
  public?: boolean;
  /** Days between periodic re-runs (API.md 11); null: the service's default. */
  rerunIntervalDays?: number | null;
}

/** An instance added to a suite through the API. */
export interface NewInstance {
  suiteId: number;
  versionId: number;
  name: string;
  serviceType: string;
  serviceUrl: string;
  resource: string;
  now: Date;
}

export interface Page {
  limit?: number;
  offset?: number;
}

/** A raw row of instanceFacts. */
export interface InstanceFactRow {
  instance_id: number | string;
  instance_uuid: string;
  instance_name: string | null;
  version_id: number | string;
  version: string;
  version_name: string;
  workflow_id: number | string;
  workflow_uuid: string;
}

/**
 * Which workflows a list shows: `ownerId`'s (or, for a registry, those from `registryId`; with
 * both, the owner's from that registry), the public ones, or both (with `public`); none: all of
 * them (an admin's `GET /workflows`). Each is read on the list's order from an index that ends
 * with latest_version_id.
 */
export interface WorkflowFilter {
  ownerId?: number;
  registryId?: number;
  public?: boolean;
}

/**
 * A stretch of a list in its order (latest version registered last first): `limit` workflows
 * from `offset`, or after the workflow whose latest version is `before` (a keyset: a streamed
 * list reads batch after batch without counting the rows before it).
 */
export interface ListWindow {
  limit: number;
  offset?: number;
  before?: number;
  /** Read from the end of the order backwards (the list's last workflows, oldest first). */
  fromEnd?: boolean;
}

/**
 * Conditions on the workflows a list shows, besides who may see them: the workflow's uuid, the
 * name and the language of its latest version (which are the workflow's), its owner's username.
 * Each is read from an index of its own, in the list's order.
 */
export interface WorkflowSearch {
  uuid?: string;
  name?: string;
  language?: WorkflowLanguage;
  ownerName?: string;
  /** The registry that sent the workflow (by its id in the registries feature); null: none did. */
  registryId?: number | null;
}

/**
 * All SQL of the registry. Writes that touch a stored archive run under ArchiveLock, which
 * keeps "is any version still using this archive?" and "store it / delete it" together.
 */
@Injectable()
export class WorkflowsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(WorkflowEntity) private readonly workflows: Repository<WorkflowEntity>,
    @InjectRepository(WorkflowVersionEntity) private readonly versions: Repository<WorkflowVersionEntity>,
    @InjectRepository(TestSuiteEntity) private readonly suites: Repository<TestSuiteEntity>,
    @InjectRepository(TestInstanceEntity) private readonly instances: Repository<TestInstanceEntity>,
    private readonly events: RegistryEvents,
    private readonly follows: FollowsRepository,
  ) {
    this.plain = {
      workflows: new PlainEntities(dataSource, WorkflowEntity, 'w'),
      versions: new PlainEntities(dataSource, WorkflowVersionEntity, 'v'),
      submitters: new PlainEntities(dataSource, UserEntity, 'u'),
      instances: new PlainEntities(dataSource, TestInstanceEntity, 'i'),
      suites: new PlainEntities(dataSource, TestSuiteEntity, 's'),
      services: new PlainEntities(dataSource, TestServiceEntity, 'sv'),
      issues: new PlainEntities(dataSource, VersionIssueEntity, 'vi'),
    };
  }

  /**
   * Readers of the hot reads' fixed SQL (every read of a workflow, its status and its list
   * pages): building a query and hydrating entities through TypeORM's query builder cost several
   * times the read itself. Each reader's SQL aliases are the ones its SELECT lists name.
   */
  private readonly plain: {
    workflows: PlainEntities<WorkflowEntity>;
    versions: PlainEntities<WorkflowVersionEntity>;
    submitters: PlainEntities<UserEntity>;
    instances: PlainEntities<TestInstanceEntity>;
    suites: PlainEntities<TestSuiteEntity>;
    services: PlainEntities<TestServiceEntity>;
    issues: PlainEntities<VersionIssueEntity>;
  };

  /** The workflow with its versions, each with its submitter. */
  async findWorkflow(uuid: string): Promise<WorkflowEntity | null> {
    const { workflows, versions, submitters } = this.plain;
    const rows = await this.dataSource.query<Record<string, unknown>[]>(
      `SELECT ${workflows.selectList}, ${versions.selectList}, ${submitters.selectList}
       FROM workflows w
         LEFT JOIN workflow_versions v ON v.workflow_id = w.id
         LEFT JOIN users u ON u.id = v.submitter_id
       WHERE w.uuid = ?`,
      [uuid],
    );
    const [first] = rows;
    if (first === undefined) {
      return null;
    }
    const workflow = Object.assign(workflows.from(first), { versions: [] as WorkflowVersionEntity[] });
    for (const row of rows) {
      if (!versions.isAbsent(row)) {
        const version = versions.from(row);
        if (!submitters.isAbsent(row)) {
          version.submitter = submitters.from(row);
        }
        workflow.versions.push(version);
      }
    }
    return workflow;
  }

  /**
   * A window of the workflows the filter selects, with their versions, the one whose latest
   * version was registered last first (version ids grow with registration). The order is the
   * row's latest_version_id, so the window is read from the index (owner_id, latest_version_id)
   * and costs the same whatever the number of workflows.
   */
  async listWorkflows(filter: WorkflowFilter, window: ListWindow): Promise<WorkflowEntity[]> {
    return this.workflowsByIds(await this.listIds(filter, window));
  }

  /**
   * `listWorkflows` of the workflows that also meet `search`. The window is read from the index of
   * the most selective condition (uuid, then name, language, owner; none: the list's own), in the
   * list's order, so a page costs what its rows cost however many workflows there are.
   */
  async searchWorkflows(
    filter: WorkflowFilter,
    search: WorkflowSearch,
    window: ListWindow,
  ): Promise<WorkflowEntity[]> {
    if (Object.values(search).every((value) => value === undefined)) {
      return this.listWorkflows(filter, window);
    }
    const { from, conditions, parameters, order } = searchSql(filter, search);
    const direction = window.fromEnd ? 'ASC' : 'DESC';
    const rows = await this.dataSource.query<{ id: number | string }[]>(
      `SELECT w.id AS id ${from} WHERE ${conditions.join(' AND ')}
       ORDER BY ${order} ${direction} LIMIT ? OFFSET ?`,
      [...parameters, window.limit, window.offset ?? 0],
    );
    const ids = rows.map((row) => Number(row.id));
    return this.workflowsByIds(window.fromEnd ? ids.reverse() : ids);
  }

  /** The workflows of `ids`, in that order, each with its versions. */
  private async workflowsByIds(ids: readonly number[]): Promise<WorkflowEntity[]> {
    if (ids.length === 0) {
      return [];
    }
    const { workflows, versions } = this.plain;
    const rows = await this.dataSource.query<Record<string, unknown>[]>(
      `SELECT ${workflows.selectList}, ${versions.selectList}
       FROM workflows w LEFT JOIN workflow_versions v ON v.workflow_id = w.id
       WHERE w.id IN (${inList(ids.length)})`,
      ids,
    );
    const byId = new Map<number, WorkflowEntity>();
    for (const row of rows) {
      const read = workflows.from(row);
      let workflow = byId.get(read.id);
      if (!workflow) {
        workflow = Object.assign(read, { versions: [] });
        byId.set(read.id, workflow);
      }
      if (!versions.isAbsent(row)) {
        workflow.versions?.push(versions.from(row));
      }
    }
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /** How many workflows the window holds: its ids alone, from the same index as listWorkflows. */
  async windowLength(filter: WorkflowFilter, window: ListWindow): Promise<number> {
    return (await this.listIds(filter, window)).length;
  }

  private async listIds(filter: WorkflowFilter, window: ListWindow): Promise<number[]> {
    const own = ownSide(filter);
    const ids =
      own && filter.public ? await this.ownAndPublicIds(own, window) : await this.windowIds(filter, window);
    return window.fromEnd ? ids.reverse() : ids;
  }

  /**
   * One condition (an owner's, the public ones, or none: all), read from the index that leads
   * with it and ends with latest_version_id.
   */
  private async windowIds(filter: WorkflowFilter, window: ListWindow): Promise<number[]> {
    const conditions = ['w.latest_version_id IS NOT NULL'];
    const parameters: number[] = [];
    const own = ownSide(filter);
    if (own) {
      conditions.push(`${own.column} = ?`);
      parameters.push(own.value);
      if (own.column === 'w.owner_id' && filter.registryId !== undefined) {
        // One owner's workflows from one registry: the owner's index, its rows filtered.
        conditions.push('w.registry_id = ?');
        parameters.push(filter.registryId);
      }
    } else if (filter.public) {
      conditions.push('w.is_public = 1');
    }
    if (window.before !== undefined) {
      conditions.push('w.latest_version_id < ?');
      parameters.push(window.before);
    }
    parameters.push(window.limit, window.offset ?? 0);
    const rows = await this.dataSource.query<{ id: number | string }[]>(
      `SELECT w.id AS id FROM workflows w WHERE ${conditions.join(' AND ')}
       ORDER BY w.latest_version_id ${window.fromEnd ? 'ASC' : 'DESC'} LIMIT ? OFFSET ?`,
      parameters,
    );
    return rows.map((row) => Number(row.id));
  }

  /**
   * The caller's own and the public workflows: an OR of two columns would read every row of
   * both, so each side takes its first offset + limit rows from its own index and the union is
   * cut to the window. A workflow both own and public is one row of the union.
   */
  private async ownAndPublicIds(own: OwnSide, window: ListWindow): Promise<number[]> {
    const reach = (window.offset ?? 0) + window.limit;
    const before = window.before === undefined ? '' : 'AND w.latest_version_id < ?';
    const direction = window.fromEnd ? 'ASC' : 'DESC';
    const side = (condition: string, alias: string) =>
      `SELECT * FROM (SELECT w.id AS id, w.latest_version_id AS latest FROM workflows w
         WHERE ${condition} AND w.latest_version_id IS NOT NULL ${before}
         ORDER BY w.latest_version_id ${direction} LIMIT ?) ${alias}`;
    const sideParameters = window.before === undefined ? [reach] : [window.before, reach];
    const rows = await this.dataSource.query<{ id: number | string }[]>(
      `SELECT u.id AS id FROM (${side(`${own.column} = ?`, 'own')} UNION ${side('w.is_public = 1', 'pub')}) u
       ORDER BY u.latest ${direction} LIMIT ? OFFSET ?`,
      [own.value, ...sideParameters, ...sideParameters, window.limit, window.offset ?? 0],
    );
    return rows.map((row) => Number(row.id));
  }

  /**
   * The issues of these versions (API.md 12) by version id, each version's in the order recorded
   * (errors first); every id given has an entry.
   */
  async issuesOf(versionIds: readonly number[]): Promise<Map<number, VersionIssueEntity[]>> {
    const byVersion = new Map(versionIds.map((id): [number, VersionIssueEntity[]] => [id, []]));
    if (versionIds.length === 0) {
      return byVersion;
    }
    const { issues } = this.plain;
    const rows = await this.dataSource.query<Record<string, unknown>[]>(
      `SELECT ${issues.selectList} FROM workflow_version_issues vi
       WHERE vi.version_id IN (${inList(versionIds.length)}) ORDER BY vi.id`,
      [...versionIds],
    );
    for (const row of rows) {
      const issue = issues.from(row);
      byVersion.get(issue.versionId)?.push(issue);
    }
    return byVersion;
  }

  /** The usernames of these users, by id (one read by primary key). */
  async usernames(userIds: readonly number[]): Promise<Map<number, string>> {
    if (userIds.length === 0) {
      return new Map();
    }
    const rows = await this.dataSource.query<{ id: number | string; username: string }[]>(
      `SELECT u.id AS id, u.username AS username FROM users u WHERE u.id IN (${inList(userIds.length)})`,
      userIds,
    );
    return new Map(rows.map((row) => [Number(row.id), row.username]));
  }

  /** The version's suites with their instances and services, in the crate's order. */
  findSuitesOf(versionId: number): Promise<TestSuiteEntity[]> {
    return this.suites.find({
      where: { versionId },
      relations: { instances: { service: true } },
      order: { id: 'ASC', instances: { id: 'ASC' } },
    });
  }

  /** The suite with its instances (and their services) and its version's workflow. */
  findSuite(uuid: string): Promise<TestSuiteEntity | null> {
    return findOneJoined(this.suites, {
      where: { uuid },
      relations: { instances: { service: true }, version: { workflow: true } },
      order: { instances: { id: 'ASC' } },
    });
  }

  /** The instance with its service and its suite's version's workflow. */
  findInstance(uuid: string): Promise<TestInstanceEntity | null> {
    return findOneJoined(this.instances, {
      where: { uuid },
      relations: { service: true, suite: { version: { workflow: true } } },
    });
  }

  /** Instances by id, with their service and suite. */
  findInstancesByIds(ids: readonly number[]): Promise<TestInstanceEntity[]> {
    if (ids.length === 0) {
      return Promise.resolve([]);
    }
    return this.instancesWithServiceAndSuite(ids);
  }

  /** A streamed list reads its latest builds' instances a batch after another. */
  private instancesWithServiceAndSuite(ids: readonly number[]): Promise<TestInstanceEntity[]> {
    return this.instancesWhere(`i.id IN (${inList(ids.length)})`, ids);
  }

  /** Instances with their suite and service, suite by suite, in crate order (ids grow with it). */
  private async instancesWhere(
    condition: string,
    parameters: readonly unknown[],
  ): Promise<TestInstanceEntity[]> {
    const { instances, suites, services } = this.plain;
    const rows = await this.dataSource.query<Record<string, unknown>[]>(
      `SELECT ${instances.selectList}, ${suites.selectList}, ${services.selectList}
       FROM test_instances i
         JOIN test_suites s ON s.id = i.suite_id
         JOIN test_services sv ON sv.id = i.service_id
       WHERE ${condition}
       ORDER BY s.id, i.id`,
      [...parameters],
    );
    return rows.map((row) =>
      Object.assign(instances.from(row), { suite: suites.from(row), service: services.from(row) }),
    );
  }

  /**
   * For each instance: its uuid and name, its version and workflow (ids, uuid, version string,
   * the version's name), read with `manager` (a transaction of the caller's, or the default).
   */
  async instanceFacts(
    manager: EntityManager | undefined,
    ids: readonly number[],
  ): Promise<InstanceFactRow[]> {
    if (ids.length === 0) {
      return [];
    }
    return (manager ?? this.dataSource.manager)
      .createQueryBuilder(TestInstanceEntity, 'i')
      .innerJoin('i.suite', 's')
      .innerJoin('s.version', 'v')
      .innerJoin('v.workflow', 'w')
      .select('i.id', 'instance_id')
      .addSelect('i.uuid', 'instance_uuid')
      .addSelect('i.name', 'instance_name')
      .addSelect('v.id', 'version_id')
      .addSelect('v.version', 'version')
      .addSelect('v.name', 'version_name')
      .addSelect('w.id', 'workflow_id')
      .addSelect('w.uuid', 'workflow_uuid')
      .where('i.id IN (:...ids)', { ids: [...ids] })
      .getRawMany<InstanceFactRow>();
  }

  /**
   * Every version of the workflows these versions belong to (id, workflow, version string, source
   * ref, registration time): what the builds-per-version rule needs to know of each (API.md 7.2).
   */
  async versionsBeside(
    versionIds: readonly number[],
  ): Promise<Pick<WorkflowVersionEntity, 'id' | 'workflowId' | 'version' | 'sourceRef' | 'registeredAt'>[]> {
    if (versionIds.length === 0) {
      return [];
    }
    return this.versions
      .createQueryBuilder('v')
      .select(['v.id', 'v.workflowId', 'v.version', 'v.sourceRef', 'v.registeredAt'])
      .where((qb) => {
        const owners = qb
          .subQuery()
          .select('o.workflowId')
          .from(WorkflowVersionEntity, 'o')
          .where('o.id IN (:...versionIds)')
          .getQuery();
        return `v.workflowId IN ${owners}`;
      })
      .setParameter('versionIds', [...versionIds])
      .getMany();
  }

  /** The instances of a version with their suite and service, suite by suite, in crate order. */
  instancesOfVersion(versionId: number): Promise<TestInstanceEntity[]> {
    return this.instancesWhere('s.version_id = ?', [versionId]);
  }

  /** The instances of a suite with their suite and service. */
  instancesOfSuite(suiteId: number): Promise<TestInstanceEntity[]> {
    return this.instancesWhere('i.suite_id = ?', [suiteId]);
  }

  /**
   * Versions whose main workflow was never read (registered before it was kept), after `afterId`
   * in id order: a walk of the primary key.
   */
  async versionsWithoutMainWorkflow(
    afterId: number,
    limit: number,
  ): Promise<{ id: number; archiveSha256: string }[]> {
    const rows = await this.dataSource.query<{ id: number | string; sha256: string }[]>(
      `SELECT v.id AS id, v.archive_sha256 AS sha256 FROM workflow_versions v
       WHERE v.id > ? AND v.main_workflow IS NULL ORDER BY v.id LIMIT ?`,
      [afterId, limit],
    );
    return rows.map((row) => ({ id: Number(row.id), archiveSha256: row.sha256 }));
  }

  /** Records a version's main workflow and language, unless they were recorded meanwhile. */
  async recordMainWorkflow(
    versionId: number,
    mainWorkflow: string,
    language: WorkflowLanguage | null,
  ): Promise<void> {
    await this.dataSource.query(
      `UPDATE workflow_versions SET main_workflow = ?, workflow_language = ?
       WHERE id = ? AND main_workflow IS NULL`,
      [mainWorkflow, language, versionId],
    );
  }

  /** True while some version still uses the stored archive. */
  isArchiveUsed(sha256: string): Promise<boolean> {
    return this.versions.existsBy({ archiveSha256: sha256 });
  }

  /** The archives some version uses, in one query: a snapshot, to be checked again under the lock before removing. */
  async usedArchives(): Promise<Set<string>> {
    const rows = await this.versions
      .createQueryBuilder('version')
      .select('DISTINCT version.archiveSha256', 'sha256')
      .getRawMany<{ sha256: string }>();
    return new Set(rows.map((row) => row.sha256));
  }

  /**
   * Saves a version in one transaction: the workflow (created on its first version), the
   * version, its suites and instances (RegistryEvents' listeners are told of them in the same
   * transaction), and the test services they run on (shared by (type, url), created when new),
   * with the version it replaces deleted and the repository it came from recorded. Throws
   * DomainError('conflict') when the workflow belongs to another user or already has this version.
   */
  async saveVersion(input: NewVersion): Promise<SavedVersion> {
    return retryOnDeadlock(() => this.dataSource.transaction((tx) => this.insertVersion(tx, input)));
  }

  private async insertVersion(tx: EntityManager, input: NewVersion): Promise<SavedVersion> {
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
    // The workflow's row is this transaction's (created or locked above): lists see the new order with the version.
    await tx.update(WorkflowEntity, { id: workflowId }, { latestVersionId: version.id });
    // Sorted, so that two copies creating the same services take their locks in one order.
    const serviceKeys = [
      ...new Set(
        input.suites.flatMap((suite) => suite.instances.map((i) => serviceKey(i.serviceType, i.serviceUrl))),
      ),
    ].sort();
    const serviceIds = new Map<string, number>();
    for (const key of serviceKeys) {
      const [type, url] = JSON.parse(key) as [string, string];
      serviceIds.set(key, await this.serviceFor(tx, type, url));
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
            managed: false,
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

  /**
   * Adds an instance to a suite in one transaction, with its test service (shared by (type, url),
   * created when new); RegistryEvents' listeners make it due for a first check in the same
   * transaction. Returns its uuid. Throws DomainError('not_found') when the suite went meanwhile.
   */
  async addInstance(input: NewInstance): Promise<string> {
    try {
      return await retryOnDeadlock(() =>
        this.dataSource.transaction(async (tx) => {
          const serviceId = await this.serviceFor(tx, input.serviceType, input.serviceUrl);
          const uuid = randomUUID();
          const instanceId = insertedId(
            await tx.insert(TestInstanceEntity, {
              uuid,
              suiteId: input.suiteId,
              serviceId,
              rocInstance: null,
              name: input.name,
              resource: input.resource,
              managed: false,
            }),
          );
          await this.events.instancesAdded(
            tx,
            [
              {
                instanceId,
                versionId: input.versionId,
                serviceId,
                serviceType: input.serviceType,
                resource: input.resource,
              },
            ],
            input.now,
          );
          return uuid;
        }),
      );
    } catch (error) {
      if (isForeignKeyViolation(error)) {
        throw new DomainError('not_found', 'The test suite was deleted meanwhile');
      }
      throw error;
    }
  }

  /**
   * Changes an instance's name and resource in one transaction; when the resource changes,
   * RegistryEvents' listeners start its monitoring over in the same transaction, or, for an
   * instance that was never checked (its crate gave no resource it could check), start it as for a
   * new instance. False when the instance was gone already.
   */
  async updateInstance(
    id: number,
    changes: { name?: string; resource?: string },
    now: Date,
  ): Promise<boolean> {
    return retryOnDeadlock(() =>
      this.dataSource.transaction(async (tx) => {
        const query = tx
          .createQueryBuilder(TestInstanceEntity, 'i')
          .innerJoinAndSelect('i.service', 'service')
          .innerJoinAndSelect('i.suite', 'suite')
          .where('i.id = :id', { id });
        const current = await lockRows(query, 'write').getOne();
        if (!current) {
          return false;
        }
        if (changes.resource !== undefined && current.uncheckedReason !== null) {
          await this.startChecking(tx, current, changes.resource, now);
          await tx.update(TestInstanceEntity, { id }, { ...changes, uncheckedReason: null });
          return true;
        }
        await tx.update(TestInstanceEntity, { id }, changes);
        if (changes.resource !== undefined && changes.resource !== current.resource) {
          const serviceType = current.service?.type ?? '';
          await this.events.instanceRetargeted(
            tx,
            { instanceId: id, serviceType, resource: changes.resource },
            now,
          );
        }
        return true;
      }),
    );
  }

  /**
   * An instance that was never checked now has a resource its service can check: monitoring takes
   * it up as a new one, and its version's issue of uncheckable instances goes once none is left.
   */
  private async startChecking(
    tx: EntityManager,
    instance: TestInstanceEntity,
    resource: string,
    now: Date,
  ): Promise<void> {
    const versionId = loaded(instance.suite, 'instance.suite').versionId;
    await this.events.instancesAdded(
      tx,
      [
        {
          instanceId: instance.id,
          versionId,
          serviceId: instance.serviceId,
          serviceType: loaded(instance.service, 'instance.service').type,
          resource,
        },
      ],
      now,
    );
    const others = await tx
      .createQueryBuilder(TestInstanceEntity, 'i')
      .innerJoin('i.suite', 's')
      .where('s.versionId = :versionId AND i.id <> :id AND i.uncheckedReason IS NOT NULL', {
        versionId,
        id: instance.id,
      })
      .getCount();
    if (others === 0) {
      await tx.delete(VersionIssueEntity, { versionId, issueType: UNCHECKABLE_INSTANCE.id });
    }
  }

  /** Deletes an instance; its builds and check state go with it by cascade, in the same statement. False when it was gone. */
  async deleteInstance(id: number): Promise<boolean> {
    const result = await this.instances.delete({ id });
    return (result.affected ?? 0) > 0;
  }

  /** Get-or-create by (type, url); a unique violation means another registration created it meanwhile. */
  private async serviceFor(tx: EntityManager, type: string, url: string): Promise<number> {
    const existing = await this.findService(tx, type, url);
    if (existing) {
      return existing.id;
    }
    try {
      return insertedId(await tx.insert(TestServiceEntity, { uuid: randomUUID(), type, url }));
    } catch (error) {
      if (!isUniqueViolation(error)) {
        throw error;
      }
      const created = await this.findService(tx, type, url);
      if (!created) {
        throw error;
      }
      return created.id;
    }
  }

  private findService(tx: EntityManager, type: string, url: string): Promise<TestServiceEntity | null> {
    const query = tx
      .createQueryBuilder(TestServiceEntity, 's')
      .where('s.type = :type AND s.url = :url', { type, url });
    // A locking read sees rows committed after this transaction's snapshot (InnoDB's consistent reads would not).
    return lockRows(query, 'read').getOne();
  }

  /** Applies `PUT /workflows/{uuid}` in one transaction; false when the workflow or its latest version was gone. */
  async updateWorkflow(
    workflowId: number,
    latestVersionId: number,
    changes: WorkflowChanges,
  ): Promise<boolean> {
    return this.dataSource.transaction(async (tx) => {
      if (changes.public !== undefined || changes.rerunIntervalDays !== undefined) {
        const updated = await tx.update(
          WorkflowEntity,
          { id: workflowId },
          { public: changes.public, rerunIntervalDays: changes.rerunIntervalDays },
        );
        if ((updated.affected ?? 0) === 0) {
          return false;
        }
        if (changes.rerunIntervalDays !== undefined) {
          await this.events.rerunIntervalChanged(tx, workflowId, changes.rerunIntervalDays);
        }
      }
      if (changes.name !== undefined) {
        const renamed = await tx.update(
          WorkflowVersionEntity,
          { id: latestVersionId },
          { name: changes.name },
        );
        if ((renamed.affected ?? 0) === 0) {
          return false;
        }
      }
      return true;
    });
  }

  /** Renames one version (`PUT /workflows/{uuid}/versions/{version}`); false when it was gone. */
  async renameVersion(versionId: number, name: string): Promise<boolean> {
    return ((await this.versions.update({ id: versionId }, { name })).affected ?? 0) > 0;
  }

  /** Renames a test suite (`PUT /suites/{uuid}`); false when it was gone. */
  async renameSuite(suiteId: number, name: string): Promise<boolean> {
    return ((await this.suites.update({ id: suiteId }, { name })).affected ?? 0) > 0;
  }

  /**
   * A registry is gone: its workflows stay, registered as if by link (from the index of the lists
   * by registry). Inside the transaction that deletes the registry.
   */
  async forgetRegistry(tx: EntityManager, registryId: number): Promise<void> {
    await tx.update(WorkflowEntity, { registryId }, { registryId: null, registryIdentifier: null });
  }

  /**
   * Stores a new badge token unless the workflow's changed since it was read (`previousSha256`,
   * null when it had none): two requests issuing at once keep one token. False when it had changed.
   */
  async setBadgeToken(
    workflowId: number,
    token: { sha256: string; sealed: string },
    previousSha256: string | null,
  ): Promise<boolean> {
    const query = this.workflows
      .createQueryBuilder()
      .update(WorkflowEntity)
      .set({ badgeTokenSha256: token.sha256, badgeTokenSealed: token.sealed })
      .where('id = :workflowId', { workflowId });
    if (previousSha256 === null) {
      query.andWhere('badge_token_sha256 IS NULL');
    } else {
      query.andWhere('badge_token_sha256 = :previousSha256', { previousSha256 });
    }
    return ((await query.execute()).affected ?? 0) > 0;
  }

  /** Forgets the workflow's badge token: badges then need a token of someone who may see it. */
  async revokeBadgeToken(workflowId: number): Promise<void> {
    await this.workflows.update({ id: workflowId }, { badgeTokenSha256: null, badgeTokenSealed: null });
  }

  /**
   * Deletes a workflow with every version (suites, instances and builds go by cascade). Returns
   * the archives its versions used, for the caller to remove those no other version uses; null
   * when the workflow was gone already.
   */
  async deleteWorkflow(workflowId: number): Promise<string[] | null> {
    return this.dataSource.transaction(async (tx) => {
      const archives = await tx
        .createQueryBuilder(WorkflowVersionEntity, 'v')
        .select('DISTINCT v.archive_sha256', 'sha256')
        .where('v.workflow_id = :workflowId', { workflowId })
        .getRawMany<{ sha256: string }>();
      const deleted = await tx.delete(WorkflowEntity, { id: workflowId });
      return (deleted.affected ?? 0) === 0 ? null : archives.map((row) => row.sha256);
    });
  }

  /**
   * Deletes a version (its suites, instances and builds go by cascade) and, when it was the
   * last one, its workflow. False when the version was gone already.
   */
  async deleteVersion(version: WorkflowVersionEntity): Promise<boolean> {
    return this.dataSource.transaction(async (tx) => {
      // Serialises deletions of one workflow's versions across copies, so that exactly one sees "none left".
      await lockRows(
        tx.createQueryBuilder(WorkflowEntity, 'w').where('w.id = :id', { id: version.workflowId }),
        'write',
      ).getOne();
      const deleted = await tx.delete(WorkflowVersionEntity, { id: version.id });
      if ((deleted.affected ?? 0) === 0) {
        return false;
      }
      const [{ latest }] = await tx
        .createQueryBuilder(WorkflowVersionEntity, 'v')
        .select('MAX(v.id)', 'latest')
        .where('v.workflowId = :workflowId', { workflowId: version.workflowId })
        .getRawMany<{ latest: number | string | null }>();
      if (latest === null) {
        await tx.delete(WorkflowEntity, { id: version.workflowId });
      } else {
        await tx.update(WorkflowEntity, { id: version.workflowId }, { latestVersionId: Number(latest) });
      }
      return true;
    });
  }
}

function serviceKey(type: string, url: string): string {
  return JSON.stringify([type, url]);
}

function insertedId(result: { identifiers: Record<string, unknown>[] }): number {
  const id = Number(result.identifiers[0]?.id);
  if (!Number.isSafeInteger(id)) {
    throw new Error('the database returned no id for an inserted row');
  }
  return id;
}

export function versionExists(uuid: string, version: string): DomainError {
  return new DomainError('conflict', `The workflow ${uuid} already has a version '${version}'`);
}

/** The column and value of a list filter's own side (an owner's, or a registry's), if it has one. */
interface OwnSide {
  column: 'w.owner_id' | 'w.registry_id';
  value: number;
}

function ownSide(filter: WorkflowFilter): OwnSide | undefined {
  if (filter.ownerId !== undefined) {
    return { column: 'w.owner_id', value: filter.ownerId };
  }
  return filter.registryId === undefined ? undefined : { column: 'w.registry_id', value: filter.registryId };
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

/**
 * The FROM and WHERE of a search: driven by the latest version's row (its name or language
 * index, ordered by its id, which is the workflow's latest_version_id) when the search names
 * either, else by the workflow's; the uuid, the owner and who may see it are conditions on the
 * workflow's row.
 */
function searchSql(
  filter: WorkflowFilter,
  search: WorkflowSearch,
): { from: string; conditions: string[]; parameters: unknown[]; order: string } {
  const conditions: string[] = [];
  const parameters: unknown[] = [];
  const byVersion = search.name !== undefined || search.language !== undefined;
  if (search.name !== undefined) {
    conditions.push('v.name = ?');
    parameters.push(search.name);
  }
  if (search.language !== undefined) {
    conditions.push('v.workflow_language = ?');
    parameters.push(search.language);
  }
  if (!byVersion) {
    conditions.push('w.latest_version_id IS NOT NULL');
  }
  if (search.uuid !== undefined) {
    conditions.push('w.uuid = ?');
    parameters.push(search.uuid);
  }
  if (search.ownerName !== undefined) {
    conditions.push('w.owner_id = (SELECT o.id FROM users o WHERE o.username = ?)');
    parameters.push(search.ownerName);
  }
  if (search.registryId === null) {
    conditions.push('w.registry_id IS NULL');
  } else if (search.registryId !== undefined) {
    conditions.push('w.registry_id = ?');
    parameters.push(search.registryId);
  }
  // The viewer's own side: a user's workflows, or those a registry sent (its token's view).
  const own = ownSide(filter);
  if (own && filter.public) {
    conditions.push(`(w.is_public = 1 OR ${own.column} = ?)`);
    parameters.push(own.value);
  } else if (own) {
    conditions.push(`${own.column} = ?`);
    parameters.push(own.value);
  } else if (filter.public) {
    conditions.push('w.is_public = 1');
  }
  return byVersion
    ? {
        from: 'FROM workflow_versions v JOIN workflows w ON w.latest_version_id = v.id',
        conditions,
        parameters,
        order: 'v.id',
      }
    : { from: 'FROM workflows w', conditions, parameters, order: 'w.latest_version_id' };
}
