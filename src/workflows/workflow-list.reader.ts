import type { DataSource } from 'typeorm';
import { type WorkflowLanguage } from '../crates/index.js';

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
 * Which workflows a window of a list holds, as ids in the list's order: the SQL that picks the
 * index each filter and search is read from. It changes with the lists' indexes and query plans
 * (test/e2e/query-plans), not with what a workflow holds; WorkflowsRepository reads the rows.
 */
export class WorkflowListReader {
  constructor(private readonly dataSource: DataSource) {}

  /** The ids of the window the filter selects, in the list's order. */
  async ids(filter: WorkflowFilter, window: ListWindow): Promise<number[]> {
    const { sql, parameters } = windowSql(filter, window);
    const ids = (await this.dataSource.query<{ id: number | string }[]>(sql, parameters)).map((row) =>
      Number(row.id),
    );
    return window.fromEnd ? ids.reverse() : ids;
  }

  /**
   * The ids of the window of the workflows the filter selects that also meet `search`, in the
   * list's order, read from the index of the most selective condition.
   */
  async searchIds(filter: WorkflowFilter, search: WorkflowSearch, window: ListWindow): Promise<number[]> {
    const { from, conditions, parameters, order } = searchSql(filter, search);
    const direction = window.fromEnd ? 'ASC' : 'DESC';
    const rows = await this.dataSource.query<{ id: number | string }[]>(
      `SELECT w.id AS id ${from} WHERE ${conditions.join(' AND ')}
       ORDER BY ${order} ${direction} LIMIT ? OFFSET ?`,
      [...parameters, window.limit, window.offset ?? 0],
    );
    const ids = rows.map((row) => Number(row.id));
    return window.fromEnd ? ids.reverse() : ids;
  }
}

/** A SELECT of the ids (column `id`) of a list's window, in its order, and its parameters. */
export interface WindowSql {
  sql: string;
  parameters: unknown[];
}

/**
 * The SELECT of the ids of the window the filter selects, in the list's order (backwards with
 * `fromEnd`): WorkflowListReader runs it, or a read of the window's rows takes it as a derived
 * table (one round trip for both).
 */
export function windowSql(filter: WorkflowFilter, window: ListWindow): WindowSql {
  const own = ownSide(filter);
  return own && filter.public ? ownAndPublicSql(own, window) : oneSideSql(filter, window);
}

/**
 * One condition (an owner's, the public ones, or none: all), read from the index that leads
 * with it and ends with latest_version_id.
 */
function oneSideSql(filter: WorkflowFilter, window: ListWindow): WindowSql {
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
  return {
    sql: `SELECT w.id AS id FROM workflows w WHERE ${conditions.join(' AND ')}
     ORDER BY w.latest_version_id ${window.fromEnd ? 'ASC' : 'DESC'} LIMIT ? OFFSET ?`,
    parameters,
  };
}

/**
 * The caller's own and the public workflows: an OR of two columns would read every row of
 * both, so each side takes its first offset + limit rows from its own index and the union is
 * cut to the window. A workflow both own and public is one row of the union.
 */
function ownAndPublicSql(own: OwnSide, window: ListWindow): WindowSql {
  const reach = (window.offset ?? 0) + window.limit;
  const before = window.before === undefined ? '' : 'AND w.latest_version_id < ?';
  const direction = window.fromEnd ? 'ASC' : 'DESC';
  const side = (condition: string, alias: string) =>
    `SELECT * FROM (SELECT w.id AS id, w.latest_version_id AS latest FROM workflows w
       WHERE ${condition} AND w.latest_version_id IS NOT NULL ${before}
       ORDER BY w.latest_version_id ${direction} LIMIT ?) ${alias}`;
  const sideParameters = window.before === undefined ? [reach] : [window.before, reach];
  return {
    sql: `SELECT u.id AS id FROM (${side(`${own.column} = ?`, 'own')} UNION ${side('w.is_public = 1', 'pub')}) u
     ORDER BY u.latest ${direction} LIMIT ? OFFSET ?`,
    parameters: [own.value, ...sideParameters, ...sideParameters, window.limit, window.offset ?? 0],
  };
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
