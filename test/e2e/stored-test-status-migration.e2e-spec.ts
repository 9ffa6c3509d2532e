import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config/app-config.js';
import { dataSourceOptions, openDataSource } from '../../src/database/data-source.js';
import { baseTestEnv, createTestDatabase, testDatabase } from '../support/create-test-app.js';

/** The migration that stores the test statuses the wall orders by. */
const STAMP = 1795770000000;
const SHA = 'a'.repeat(64);

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

describe(`the stored test status migration (${testDatabase()})`, () => {
  let dataDir: string;
  let database: { url: string; drop(): Promise<void> };
  let dataSource: DataSource;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'stored-status-migration-'));
    database = await createTestDatabase(dataDir);
    dataSource = await openDataSource(dataSourceOptions(loadConfig(baseTestEnv(dataDir, database.url))));
    await undoDownTo(dataSource, STAMP);
    // Three workflows as the schema before held them: the first with two versions.
    await dataSource.query(
      "INSERT INTO users (id, username, password_hash, roles, active) VALUES (1, 'alice', 'x', 'user', 1)",
    );
    await dataSource.query(
      `INSERT INTO workflows (id, uuid, owner_id, latest_version_id)
       VALUES (1, 'w-1', 1, 2), (2, 'w-2', 1, 3), (3, 'w-3', 1, 4)`,
    );
    await dataSource.query(
      `INSERT INTO workflow_versions (id, uuid, workflow_id, version, name, roc_link, archive_sha256, archive_size, submitter_id)
       VALUES (1, 'v-1', 1, '1.0', 'wf', 'http://127.0.0.1/c.zip', '${SHA}', 1, 1),
              (2, 'v-2', 1, '2.0', 'wf', 'http://127.0.0.1/c.zip', '${SHA}', 1, 1),
              (3, 'v-3', 2, '1.0', 'wf', 'http://127.0.0.1/c.zip', '${SHA}', 1, 1),
              (4, 'v-4', 3, '1.0', 'wf', 'http://127.0.0.1/c.zip', '${SHA}', 1, 1)`,
    );
    await dataSource.query(
      `INSERT INTO test_suites (id, uuid, version_id, roc_suite)
       VALUES (1, 's-1', 1, '#s'), (2, 's-2', 2, '#s'), (3, 's-3', 3, '#s'), (4, 's-4', 4, '#s')`,
    );
    await dataSource.query(
      "INSERT INTO test_services (id, uuid, type, url) VALUES (1, 'sv-1', 'github', 'https://api.github.com')",
    );
    // Instance → its suite (and version): 1 and 2 of version 1, 3 and 4 of version 2, 5 of 3, 6 of 4.
    const suiteOf = [1, 1, 2, 2, 3, 4];
    for (const [index, suite] of suiteOf.entries()) {
      const id = index + 1;
      await dataSource.query(
        `INSERT INTO test_instances (id, uuid, suite_id, service_id, roc_instance, resource, managed)
         VALUES (?, ?, ?, 1, ?, ?, 0)`,
        [id, `i-${id}`, suite, `#i${id}`, `repos/o/r/actions/workflows/${id}.yml`],
      );
      await dataSource.query(
        `INSERT INTO test_check_states (instance_id, service_id, version_id, next_check_at)
         VALUES (?, 1, ?, '2024-05-01 12:00:00')`,
        [id, suite],
      );
    }
    const builds: [number, string, string, string][] = [
      // Version 1: one passing (a later run still running does not count), one failing: some passing.
      [1, '1', 'passed', '2024-05-01 10:00:00'],
      [1, '2', 'running', '2024-05-01 11:00:00'],
      [2, '3', 'failed', '2024-05-01 10:00:00'],
      // Version 2: passed, then failed; the other only waiting: all failing.
      [3, '4', 'passed', '2024-05-01 09:00:00'],
      [3, '5', 'error', '2024-05-01 10:00:00'],
      [4, '6', 'waiting', '2024-05-01 10:00:00'],
      // Version 3: passing. Version 4 has no build.
      [5, '7', 'passed', '2024-05-01 10:00:00'],
    ];
    for (const [instance, buildId, status, startedAt] of builds) {
      await dataSource.query(
        `INSERT INTO builds (instance_id, build_id, status, started_at, duration_seconds, url)
         VALUES (?, ?, ?, ?, 60, 'https://ci.example.org/run')`,
        [instance, buildId, status, startedAt],
      );
    }
    await dataSource.runMigrations({ transaction: 'each' });
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("fills each version's status from its builds, as the status reads compute it", async () => {
    const rows = await dataSource.query<{ id: number | string; test_status: string }[]>(
      'SELECT id, test_status FROM workflow_versions ORDER BY id',
    );
    expect(rows.map((row) => [Number(row.id), row.test_status])).toEqual([
      [1, 'some_passing'],
      [2, 'all_failing'],
      [3, 'all_passing'],
      [4, 'not_available'],
    ]);
  });

  it("fills each workflow's with its latest version's", async () => {
    const rows = await dataSource.query<{ uuid: string; test_status: string }[]>(
      'SELECT uuid, test_status FROM workflows ORDER BY id',
    );
    expect(rows.map((row) => [row.uuid, row.test_status])).toEqual([
      ['w-1', 'all_failing'],
      ['w-2', 'all_passing'],
      ['w-3', 'not_available'],
    ]);
  });

  it('drops the columns and their indexes when undone, keeping every row', async () => {
    await undoDownTo(dataSource, STAMP);
    const runner = dataSource.createQueryRunner();
    try {
      const workflows = await runner.getTable('workflows');
      expect(workflows?.columns.map((column) => column.name)).not.toContain('test_status');
      expect(
        workflows?.indices.map((index) => index.name).filter((name) => name?.includes('status')),
      ).toEqual([]);
      expect(
        (await runner.getTable('workflow_versions'))?.columns.map((column) => column.name),
      ).not.toContain('test_status');
    } finally {
      await runner.release();
    }
    const [{ n }] = await dataSource.query<{ n: number | string }[]>('SELECT COUNT(*) AS n FROM builds');
    expect(Number(n)).toBe(7);
  });
});
