import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config/app-config.js';
import { dataSourceOptions, openDataSource } from '../../src/database/data-source.js';
import { baseTestEnv, createTestDatabase, testDatabase } from '../support/create-test-app.js';

/** The migration that moves monitoring's check state out of the registry's tables. */
const MIGRATION = 'MonitoringCheckState1763800000000';
const STAMP = 1763800000000;

/** A DATETIME as one string, whichever driver read it (mysql2 gives Dates, SQLite strings). */
function when(value: unknown): string | null {
  if (value === null || value === undefined) {
    return null;
  }
  if (value instanceof Date) {
    return value.toISOString();
  }
  const text = value as string;
  return new Date(/^\d{4}-\d{2}-\d{2} /.test(text) ? `${text.replace(' ', 'T')}Z` : text).toISOString();
}

interface CheckState {
  instance: number;
  next_check_at: string | null;
  lease_owner: string | null;
  lease_until: string | null;
  etag: string | null;
  failure_count: number;
  last_checked_at: string | null;
  last_check_failed: number;
  last_error: string | null;
}

/** What the instances' check state was in the old schema, one row per instance. */
const BEFORE: CheckState[] = [
  {
    instance: 1,
    next_check_at: '2024-05-01T12:05:00.000Z',
    lease_owner: null,
    lease_until: null,
    etag: 'W/"abc"',
    failure_count: 0,
    last_checked_at: '2024-05-01T12:00:00.000Z',
    last_check_failed: 0,
    last_error: null,
  },
  {
    instance: 2,
    next_check_at: '2024-05-01T18:00:00.000Z',
    lease_owner: 'copy-a#7',
    lease_until: '2024-05-01T12:10:00.000Z',
    etag: null,
    failure_count: 3,
    last_checked_at: null,
    last_check_failed: 1,
    last_error: 'GitHub answered 502',
  },
  {
    instance: 3,
    next_check_at: '2024-05-01T12:00:00.000Z',
    lease_owner: null,
    lease_until: null,
    etag: null,
    failure_count: 0,
    last_checked_at: null,
    last_check_failed: 0,
    last_error: null,
  },
];
const COLUMNS = [
  'next_check_at',
  'lease_owner',
  'lease_until',
  'etag',
  'failure_count',
  'last_checked_at',
  'last_check_failed',
  'last_error',
] as const;

function normalize(row: Record<string, unknown>, idColumn: string): CheckState {
  return {
    instance: Number(row[idColumn]),
    next_check_at: when(row.next_check_at),
    lease_owner: (row.lease_owner as string | null) ?? null,
    lease_until: when(row.lease_until),
    etag: (row.etag as string | null) ?? null,
    failure_count: Number(row.failure_count),
    last_checked_at: when(row.last_checked_at),
    last_check_failed: Number(row.last_check_failed),
    last_error: (row.last_error as string | null) ?? null,
  };
}

/** A DATETIME literal both databases read as that UTC time. */
function sqlTime(iso: string | null): string | null {
  return iso === null
    ? null
    : iso
        .replace('T', ' ')
        .replace('Z', '')
        .replace(/\.000$/, '');
}

async function undoDownTo(dataSource: DataSource, stamp: number): Promise<void> {
  for (;;) {
    const [last] = await dataSource.query<{ timestamp: number | string }[]>(
      'SELECT timestamp FROM migrations ORDER BY timestamp DESC LIMIT 1',
    );
    if (!last || Number(last.timestamp) < stamp) {
      return;
    }
    await dataSource.undoLastMigration({ transaction: 'each' });
  }
}

describe(`the check-state migration (${testDatabase()})`, () => {
  let dataDir: string;
  let database: { url: string; drop(): Promise<void> };
  let dataSource: DataSource;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'check-state-migration-'));
    database = await createTestDatabase(dataDir);
    dataSource = await openDataSource(dataSourceOptions(loadConfig(baseTestEnv(dataDir, database.url))));
    await undoDownTo(dataSource, STAMP);
    // The registry as the old schema held it: three instances on two services, one paused.
    await dataSource.query(
      "INSERT INTO users (id, username, password_hash, roles, active) VALUES (1, 'alice', 'x', 'user', 1)",
    );
    await dataSource.query("INSERT INTO workflows (id, uuid, owner_id) VALUES (1, 'w-1', 1)");
    await dataSource.query(
      `INSERT INTO workflow_versions (id, uuid, workflow_id, version, name, roc_link, archive_sha256, archive_size, submitter_id)
       VALUES (1, 'v-1', 1, '1.0', 'wf', 'http://127.0.0.1/c.zip', '${'a'.repeat(64)}', 1, 1),
              (2, 'v-2', 1, '2.0', 'wf', 'http://127.0.0.1/c.zip', '${'a'.repeat(64)}', 1, 1)`,
    );
    await dataSource.query(
      "INSERT INTO test_suites (id, uuid, version_id, roc_suite) VALUES (1, 's-1', 1, '#s1'), (2, 's-2', 2, '#s2')",
    );
    await dataSource.query(
      `INSERT INTO test_services (id, uuid, type, url, paused_until)
       VALUES (1, 'sv-1', 'github', 'https://api.github.com', '2024-05-01 13:00:00'),
              (2, 'sv-2', 'travis', 'https://api.travis-ci.com', NULL)`,
    );
    for (const state of BEFORE) {
      const suite = state.instance === 3 ? 2 : 1;
      const service = state.instance === 2 ? 2 : 1;
      await dataSource.query(
        `INSERT INTO test_instances (id, uuid, suite_id, service_id, roc_instance, resource, managed, ${COLUMNS.join(', ')})
         VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          state.instance,
          `i-${state.instance}`,
          suite,
          service,
          `#i${state.instance}`,
          `repos/o/r${state.instance}`,
          sqlTime(state.next_check_at),
          state.lease_owner,
          sqlTime(state.lease_until),
          state.etag,
          state.failure_count,
          sqlTime(state.last_checked_at),
          state.last_check_failed,
          state.last_error,
        ],
      );
    }
    await dataSource.query(
      `INSERT INTO builds (instance_id, build_id, status, started_at, duration_seconds, url)
       VALUES (1, '7_1', 'passed', '2024-05-01 11:59:00', 30, 'https://ci.example.org/7')`,
    );
  });

  afterEach(async () => {
    await dataSource.destroy();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('moves every check state and pause, value for value, into monitoring’s tables', async () => {
    await dataSource.runMigrations({ transaction: 'each' });
    const states = await dataSource.query<Record<string, unknown>[]>(
      `SELECT instance_id, service_id, version_id, ${COLUMNS.join(', ')} FROM test_check_states ORDER BY instance_id`,
    );
    expect(states.map((row) => normalize(row, 'instance_id'))).toEqual(BEFORE);
    expect(states.map((row) => [Number(row.service_id), Number(row.version_id)])).toEqual([
      [1, 1],
      [2, 1],
      [1, 2],
    ]);
    const pauses = await dataSource.query<Record<string, unknown>[]>(
      'SELECT service_id, paused_until FROM test_service_pauses',
    );
    expect(pauses.map((row) => [Number(row.service_id), when(row.paused_until)])).toEqual([
      [1, '2024-05-01T13:00:00.000Z'],
    ]);
    const instanceColumns = (await dataSource.createQueryRunner().getTable('test_instances'))?.columns.map(
      (column) => column.name,
    );
    expect(instanceColumns).not.toEqual(expect.arrayContaining(['next_check_at']));
    expect(instanceColumns?.filter((name) => (COLUMNS as readonly string[]).includes(name))).toEqual([]);
    const serviceColumns = (await dataSource.createQueryRunner().getTable('test_services'))?.columns.map(
      (column) => column.name,
    );
    expect(serviceColumns).not.toContain('paused_until');
  });

  it('puts every value back into the registry’s tables when undone', async () => {
    await dataSource.runMigrations({ transaction: 'each' });
    // A check after the move changes the state the way down() must carry back.
    await dataSource.query(
      'UPDATE test_check_states SET etag = \'W/"new"\', failure_count = 0, last_check_failed = 0, last_error = NULL WHERE instance_id = 2',
    );
    await undoDownTo(dataSource, STAMP);
    const [last] = await dataSource.query<{ name: string }[]>(
      'SELECT name FROM migrations ORDER BY timestamp DESC LIMIT 1',
    );
    expect(last.name).not.toBe(MIGRATION);
    const rows = await dataSource.query<Record<string, unknown>[]>(
      `SELECT id, ${COLUMNS.join(', ')} FROM test_instances ORDER BY id`,
    );
    expect(rows.map((row) => normalize(row, 'id'))).toEqual([
      BEFORE[0],
      { ...BEFORE[1], etag: 'W/"new"', failure_count: 0, last_check_failed: 0, last_error: null },
      BEFORE[2],
    ]);
    const services = await dataSource.query<Record<string, unknown>[]>(
      'SELECT id, paused_until FROM test_services ORDER BY id',
    );
    expect(services.map((row) => [Number(row.id), when(row.paused_until)])).toEqual([
      [1, '2024-05-01T13:00:00.000Z'],
      [2, null],
    ]);
    // Rebuilding test_instances (SQLite) must not take the builds that reference it along.
    const builds = await dataSource.query<{ n: number | string }[]>('SELECT COUNT(*) AS n FROM builds');
    expect(Number(builds[0].n)).toBe(1);
    // And up again, with the same values.
    await dataSource.runMigrations({ transaction: 'each' });
    const states = await dataSource.query<Record<string, unknown>[]>(
      `SELECT instance_id, ${COLUMNS.join(', ')} FROM test_check_states ORDER BY instance_id`,
    );
    expect(states.map((row) => normalize(row, 'instance_id'))).toEqual(
      rows.map((row) => normalize(row, 'id')),
    );
  });
});
