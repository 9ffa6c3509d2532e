import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository, type EntityManager } from 'typeorm';
import { type WorkflowLanguage } from '../crates/index.js';
import {
  TestInstanceEntity,
  TestSuiteEntity,
  VersionIssueEntity,
  WorkflowEntity,
  WorkflowVersionEntity,
} from './entities/registry.entities.js';
import { TestServiceEntity } from './entities/test-service.entity.js';
import { UserEntity } from '../auth/entities/user.entity.js';
import { RegistryEvents } from './registry-events.js';
import { lockRows } from '../database/dialect.js';
import { findOneJoined } from '../database/find-one-joined.js';
import { retryOnDeadlock } from '../database/retry-on-deadlock.js';
import { inList, PlainEntities } from '../database/plain-entities.js';
import { FollowsRepository } from '../repositories/index.js';
import {
  WorkflowListReader,
  type ListWindow,
  type WorkflowFilter,
  type WorkflowSearch,
} from './workflow-list.reader.js';
import { VersionWriter, type NewVersion, type SavedVersion } from './version-writer.js';
import {
  ListedWorkflowsReader,
  type ListedInstance,
  type ListedWorkflow,
} from './listed-workflows.reader.js';

/** What `PUT /workflows/{uuid}` changes; absent members stay. */
export interface WorkflowChanges {
  /** The latest version's name, which is the workflow's (API.md 2.3). */
  name?: string;
  public?: boolean;
  /** Days between periodic re-runs (API.md 11); null: the service's default. */
  rerunIntervalDays?: number | null;
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
 * The registry's reads, and its writes of workflows and versions; the SQL of list windows is
 * WorkflowListReader's, a registration's rows VersionWriter's, and the instances an owner adds
 * InstancesRepository's. Writes that touch a stored archive run under ArchiveLock, which
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
    this.lists = new WorkflowListReader(dataSource);
    this.listed = new ListedWorkflowsReader(dataSource);
    this.writer = new VersionWriter(events, follows);
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

  private readonly lists: WorkflowListReader;
  private readonly listed: ListedWorkflowsReader;
  private readonly writer: VersionWriter;

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
    return this.workflowsByIds(await this.lists.ids(filter, window));
  }

  /** `listWorkflows` with only what the list's items show of each workflow and version. */
  async listedWorkflows(filter: WorkflowFilter, window: ListWindow): Promise<ListedWorkflow[]> {
    return this.listed.workflows(filter, window);
  }

  /** The instances of a list's latest builds, by id, with only what the items show of them. */
  listedInstances(ids: readonly number[]): Promise<Map<number, ListedInstance>> {
    return this.listed.instances(ids);
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
    return this.workflowsByIds(await this.lists.searchIds(filter, search, window));
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
    return (await this.lists.ids(filter, window)).length;
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

  /** What a managed run of the instance needs (RegisteredInstances.runSource); undefined when it is gone. */
  async runSource(instanceId: number): Promise<RunSourceRow | undefined> {
    const [row] = await this.dataSource.query<RunSourceRow[]>(
      `SELECT i.uuid AS instance_uuid, v.archive_sha256, s.definition_path, s.engine_type,
         w.uuid AS workflow_uuid, v.version, v.main_workflow, v.workflow_language
       FROM test_instances i
         JOIN test_suites s ON s.id = i.suite_id
         JOIN workflow_versions v ON v.id = s.version_id
         JOIN workflows w ON w.id = v.workflow_id
       WHERE i.id = ?`,
      [instanceId],
    );
    return row;
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
    return retryOnDeadlock(() => this.dataSource.transaction((tx) => this.writer.insert(tx, input)));
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
    // Retried: the workflow row's lock, then the cascade into check states, meets a check's recording
    // (check states, then the workflow's stored status) in the other order on MariaDB.
    return retryOnDeadlock(() =>
      this.dataSource.transaction(async (tx) => {
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
          // With the wall's status: the new latest version's (StoredTestStatuses).
          await tx.query(
            `UPDATE workflows SET latest_version_id = ?,
             test_status = (SELECT v.test_status FROM workflow_versions v WHERE v.id = ?) WHERE id = ?`,
            [Number(latest), Number(latest), version.workflowId],
          );
        }
        return true;
      }),
    );
  }
}

/** The columns of `runSource`'s one row. */
export interface RunSourceRow {
  instance_uuid: string;
  archive_sha256: string;
  definition_path: string | null;
  engine_type: string | null;
  workflow_uuid: string;
  version: string;
  main_workflow: string | null;
  workflow_language: string | null;
}
