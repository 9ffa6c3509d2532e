import type { DataSource } from 'typeorm';
import { inList } from '../database/plain-entities.js';
import { windowSql, type ListWindow, type WorkflowFilter } from './workflow-list.reader.js';
import type { TestInstanceEntity, TestSuiteEntity } from './entities/registry.entities.js';
import type { TestServiceEntity } from './entities/test-service.entity.js';

/** A version as a list's item shows it. */
export interface ListedVersion {
  id: number;
  version: string;
  name: string;
}

/** A workflow as a list's item shows it: its versions older first. */
export interface ListedWorkflow {
  uuid: string;
  public: boolean;
  /** Its place in the list's order (a streamed list's keyset). */
  latestVersionId: number;
  versions: ListedVersion[];
}

/** An instance as a list item's latest build shows it, with its suite's uuid and its service. */
export type ListedInstance = Pick<
  TestInstanceEntity,
  'id' | 'uuid' | 'name' | 'managed' | 'resource' | 'rocInstance'
> & {
  suite: Pick<TestSuiteEntity, 'uuid'>;
  service: Pick<TestServiceEntity, 'type' | 'url' | 'uuid'>;
};

interface RawListedWorkflow {
  id: number | string;
  uuid: string;
  is_public: number | string | boolean;
  latest_version_id: number | string;
  version_id: number | string;
  version: string;
  name: string;
}

interface RawListedInstance {
  id: number | string;
  uuid: string;
  name: string | null;
  managed: number | string | boolean;
  resource: string;
  roc_instance: string | null;
  suite_uuid: string;
  service_type: string;
  service_url: string;
  service_uuid: string;
}

/**
 * The rows of a list's items, only the columns the items show, mapped straight from the raw
 * rows: reading whole workflows and versions (and hydrating them) was three quarters of a
 * streamed batch's read. Whole entities are WorkflowsRepository's; which workflows a window
 * holds is WorkflowListReader's.
 */
export class ListedWorkflowsReader {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * The workflows of a window of a list, in the list's order: the window's ids (windowSql) as a
   * derived table, each id's row by primary key and its versions by the workflow's index, in one
   * round trip. CROSS JOIN keeps SQLite's planner to that order (on a small table it scanned the
   * versions and looked each up in the window); MariaDB reads it as a plain JOIN.
   */
  async workflows(filter: WorkflowFilter, window: ListWindow): Promise<ListedWorkflow[]> {
    const ids = windowSql(filter, window);
    const rows = await this.dataSource.query<RawListedWorkflow[]>(
      `SELECT w.id AS id, w.uuid AS uuid, w.is_public AS is_public, w.latest_version_id AS latest_version_id,
              v.id AS version_id, v.version AS version, v.name AS name
       FROM (${ids.sql}) k
         CROSS JOIN workflows w ON w.id = k.id
         CROSS JOIN workflow_versions v ON v.workflow_id = w.id`,
      ids.parameters,
    );
    const byId = new Map<number, ListedWorkflow>();
    for (const row of rows) {
      const id = Number(row.id);
      let workflow = byId.get(id);
      if (!workflow) {
        workflow = {
          uuid: row.uuid,
          public: Number(row.is_public) === 1,
          latestVersionId: Number(row.latest_version_id),
          versions: [],
        };
        byId.set(id, workflow);
      }
      workflow.versions.push({ id: Number(row.version_id), version: row.version, name: row.name });
    }
    const workflows = [...byId.values()];
    for (const workflow of workflows) {
      // Ids grow with registration: older first, as versionsOf orders a workflow's versions.
      workflow.versions.sort((a, b) => a.id - b.id);
    }
    // The list's order, latest version registered last first (as WorkflowListReader.ids gives
    // it, `fromEnd` too): the join keeps no order, and latest_version_id is each workflow's own.
    return workflows.sort((a, b) => b.latestVersionId - a.latestVersionId);
  }

  /** Instances by id, each with its suite's uuid and its service (rows by primary key). */
  async instances(ids: readonly number[]): Promise<Map<number, ListedInstance>> {
    if (ids.length === 0) {
      return new Map();
    }
    const rows = await this.dataSource.query<RawListedInstance[]>(
      `SELECT i.id AS id, i.uuid AS uuid, i.name AS name, i.managed AS managed, i.resource AS resource,
              i.roc_instance AS roc_instance, s.uuid AS suite_uuid,
              sv.type AS service_type, sv.url AS service_url, sv.uuid AS service_uuid
       FROM test_instances i
         JOIN test_suites s ON s.id = i.suite_id
         JOIN test_services sv ON sv.id = i.service_id
       WHERE i.id IN (${inList(ids.length)})`,
      [...ids],
    );
    return new Map(
      rows.map((row): [number, ListedInstance] => [
        Number(row.id),
        {
          id: Number(row.id),
          uuid: row.uuid,
          name: row.name,
          managed: Number(row.managed) === 1,
          resource: row.resource,
          rocInstance: row.roc_instance,
          suite: { uuid: row.suite_uuid },
          service: { type: row.service_type, url: row.service_url, uuid: row.service_uuid },
        },
      ]),
    );
  }
}
