import type { INestApplication } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { ClaimTicker } from '../../src/common/claim-ticker.js';

/**
 * The tables that grow with the registry, its monitoring and the machines started: a read that
 * scans one of them costs more with every workflow registered or node started.
 */
export const GROWING_TABLES = [
  'users',
  'workflows',
  'workflow_versions',
  'workflow_version_issues',
  'test_suites',
  'test_instances',
  'test_check_states',
  'builds',
  'api_keys',
  'subscriptions',
  'notification_events',
  'notifications',
  'notification_channels',
  'deliveries',
  'delivery_attempts',
  'github_workflow_instances',
  'followed_repositories',
  'followed_refs',
  'vm_jobs',
  'user_quotas',
  'vm_addresses',
  'dummy_key_pairs',
  'oauth_clients',
  'oauth_grants',
  'oauth_tokens',
  'managed_runs',
  'sign_in_flows',
] as const;

export interface CapturedQuery {
  sql: string;
  parameters: unknown[];
}

/**
 * Runs `action` and returns every statement the app's repositories sent to the database
 * meanwhile, as TypeORM's query runners report them to the data source's logger (before
 * execution, with the driver's parameters), whatever the configured logging.
 */
export async function captureQueries(
  dataSource: DataSource,
  action: () => Promise<void>,
): Promise<CapturedQuery[]> {
  const logger = dataSource.logger;
  const original = logger.logQuery.bind(logger);
  const captured: CapturedQuery[] = [];
  logger.logQuery = (sql, parameters, queryRunner) => {
    captured.push({ sql, parameters: Array.isArray(parameters) ? parameters : [] });
    original(sql, parameters, queryRunner);
  };
  try {
    await action();
  } finally {
    logger.logQuery = original;
  }
  return captured;
}

/** Reads worth a plan: not transaction control, pragmas, inserts or the plans themselves. */
export function isPlannable(sql: string): boolean {
  return /^\s*(SELECT|UPDATE|DELETE|WITH)\b/i.test(sql);
}

/** Table by alias (and by its own name) of every FROM/JOIN of a statement. */
export function tablesByAlias(sql: string): Map<string, string> {
  const aliases = new Map<string, string>();
  const quoted = '[`"]?(\\w+)[`"]?';
  const pattern = new RegExp(`\\b(?:FROM|JOIN|UPDATE)\\s+${quoted}(?:\\s+(?:AS\\s+)?${quoted})?`, 'gi');
  for (const match of sql.matchAll(pattern)) {
    const [, table, alias] = match;
    aliases.set(table, table);
    if (alias && !/^(WHERE|SET|ON|INNER|LEFT|RIGHT|JOIN|ORDER|GROUP|LIMIT|WINDOW)$/i.test(alias)) {
      aliases.set(alias, table);
    }
  }
  return aliases;
}

export interface FullScan {
  table: string;
  plan: string;
}

/**
 * The full scans of growing tables in the statement's plan: on SQLite a `SCAN` step (with or
 * without an index: walking a whole index is a scan too), on MariaDB an access type `ALL` or
 * `index` (that is not re-planned per row).
 */
export async function fullScansOf(dataSource: DataSource, query: CapturedQuery): Promise<FullScan[]> {
  const aliases = tablesByAlias(query.sql);
  const growing = (name: string): string | undefined => {
    const table = aliases.get(name) ?? name;
    return (GROWING_TABLES as readonly string[]).includes(table) ? table : undefined;
  };
  const scans: FullScan[] = [];
  if (dataSource.options.type === 'mariadb') {
    const rows = await dataSource.query<
      { table: string | null; type: string | null; Extra: string | null }[]
    >(`EXPLAIN ${query.sql}`, query.parameters);
    for (const row of rows) {
      const table = row.table ? growing(row.table) : undefined;
      const scan = row.type === 'ALL' || row.type === 'index';
      if (table && scan && !(row.Extra ?? '').includes('Range checked for each record')) {
        scans.push({ table, plan: JSON.stringify(row) });
      }
    }
    return scans;
  }
  const rows = await dataSource.query<{ detail: string }[]>(
    `EXPLAIN QUERY PLAN ${query.sql}`,
    query.parameters,
  );
  for (const { detail } of rows) {
    const scanned = /^SCAN (?:TABLE )?(\w+)/.exec(detail)?.[1];
    const table = scanned ? growing(scanned) : undefined;
    if (table) {
      scans.push({ table, plan: detail });
    }
  }
  return scans;
}

export interface ForeignKeyColumn {
  table: string;
  column: string;
  constraint: string;
}

/**
 * The foreign keys of the live schema whose (leading) column leads no index. SQLite does not
 * index a foreign key by itself (InnoDB does), so a join or cascade through one scans its table.
 */
export async function unindexedForeignKeys(dataSource: DataSource): Promise<ForeignKeyColumn[]> {
  const foreignKeys: ForeignKeyColumn[] = [];
  const leading = new Set<string>();
  if (dataSource.options.type === 'mariadb') {
    for (const row of await dataSource.query<{ t: string; c: string; n: string }[]>(
      `SELECT TABLE_NAME AS t, COLUMN_NAME AS c, CONSTRAINT_NAME AS n FROM information_schema.KEY_COLUMN_USAGE
       WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME IS NOT NULL AND ORDINAL_POSITION = 1`,
    )) {
      foreignKeys.push({ table: row.t, column: row.c, constraint: row.n });
    }
    for (const row of await dataSource.query<{ t: string; c: string }[]>(
      `SELECT TABLE_NAME AS t, COLUMN_NAME AS c FROM information_schema.STATISTICS
       WHERE TABLE_SCHEMA = DATABASE() AND SEQ_IN_INDEX = 1`,
    )) {
      leading.add(`${row.t}.${row.c}`);
    }
  } else {
    const tables = await dataSource.query<{ name: string }[]>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    );
    for (const { name: table } of tables) {
      for (const key of await dataSource.query<{ id: number; seq: number; table: string; from: string }[]>(
        `PRAGMA foreign_key_list("${table}")`,
      )) {
        if (key.seq === 0) {
          foreignKeys.push({ table, column: key.from, constraint: `${table} → ${key.table} (#${key.id})` });
        }
      }
      const columns = await dataSource.query<{ name: string; type: string; pk: number }[]>(
        `PRAGMA table_info("${table}")`,
      );
      const primary = columns.filter((column) => column.pk > 0);
      // A single INTEGER PRIMARY KEY is the rowid: the table itself is ordered by it.
      if (primary.length === 1 && primary[0].type.toUpperCase() === 'INTEGER') {
        leading.add(`${table}.${primary[0].name}`);
      }
      for (const index of await dataSource.query<{ name: string }[]>(`PRAGMA index_list("${table}")`)) {
        const [first] = (
          await dataSource.query<{ seqno: number; name: string }[]>(`PRAGMA index_info("${index.name}")`)
        ).sort((a, b) => a.seqno - b.seqno);
        if (first) {
          leading.add(`${table}.${first.name}`);
        }
      }
    }
  }
  return foreignKeys.filter((key) => !leading.has(`${key.table}.${key.column}`));
}

/**
 * Stops the app's claim tickers (the job poller, the lease and follow schedulers) once their tick
 * in flight is done: a test that compares the statements of two captures must not find a tick's
 * statements in one of them. Resolves with how many it stopped.
 */
export async function stopClaimTickers(app: INestApplication): Promise<number> {
  const tickers = [...app.get(ModulesContainer).values()].flatMap((module) =>
    [...module.providers.values()].flatMap((wrapper) =>
      wrapper.instance instanceof ClaimTicker ? [wrapper.instance] : [],
    ),
  );
  for (const ticker of new Set(tickers)) {
    await ticker.beforeApplicationShutdown();
    ticker.onModuleDestroy();
  }
  return new Set(tickers).size;
}

/**
 * The sorts the statement's plan does once per outer row, in a correlated subquery: on MariaDB a
 * `DEPENDENT SUBQUERY` step `Using filesort`; on SQLite a `USE TEMP B-TREE` step under a
 * `CORRELATED` subquery. A subquery that orders by an index it walks sorts nothing.
 */
export async function sortsPerRowOf(dataSource: DataSource, query: CapturedQuery): Promise<string[]> {
  if (dataSource.options.type === 'mariadb') {
    const rows = await dataSource.query<{ select_type: string; Extra: string | null }[]>(
      `EXPLAIN ${query.sql}`,
      query.parameters,
    );
    return rows
      .filter(
        (row) => row.select_type === 'DEPENDENT SUBQUERY' && (row.Extra ?? '').includes('Using filesort'),
      )
      .map((row) => JSON.stringify(row));
  }
  const rows = await dataSource.query<{ id: number; parent: number; detail: string }[]>(
    `EXPLAIN QUERY PLAN ${query.sql}`,
    query.parameters,
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  const correlated = (row: { parent: number }): boolean => {
    for (let up = byId.get(row.parent); up; up = byId.get(up.parent)) {
      if (up.detail.includes('CORRELATED')) {
        return true;
      }
    }
    return false;
  };
  return rows
    .filter((row) => row.detail.startsWith('USE TEMP B-TREE') && correlated(row))
    .map((row) => row.detail);
}
