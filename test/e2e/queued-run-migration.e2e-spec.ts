import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { isUniqueViolation } from '../../src/common/errors/unique-violation.js';
import { loadConfig } from '../../src/config/app-config.js';
import { dataSourceOptions, openDataSource } from '../../src/database/data-source.js';
import { baseTestEnv, createTestDatabase, testDatabase } from '../support/create-test-app.js';

/** The migration that marks the one queued run of each managed instance. */
const STAMP = 1795950000000;
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

/** A run of managed_runs as the schema before held it: `[id, instance, status, cancel asked]`. */
type OldRun = [number, number, string, number];

describe(`the one-queued-run migration (${testDatabase()})`, () => {
  let dataDir: string;
  let database: { url: string; drop(): Promise<void> };
  let dataSource: DataSource;

  const marks = async (): Promise<[number, number | null][]> =>
    (
      await dataSource.query<{ id: number | string; mark: number | string | null }[]>(
        'SELECT id, queued_instance_id AS mark FROM managed_runs ORDER BY id',
      )
    ).map((row) => [Number(row.id), row.mark === null ? null : Number(row.mark)]);

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'queued-run-migration-'));
    database = await createTestDatabase(dataDir);
    dataSource = await openDataSource(dataSourceOptions(loadConfig(baseTestEnv(dataDir, database.url))));
    await undoDownTo(dataSource, STAMP);
    await dataSource.query(
      "INSERT INTO users (id, username, password_hash, roles, active) VALUES (1, 'alice', 'x', 'user', 1)",
    );
    await dataSource.query("INSERT INTO workflows (id, uuid, owner_id) VALUES (1, 'w-1', 1)");
    await dataSource.query(
      `INSERT INTO workflow_versions (id, uuid, workflow_id, version, name, roc_link, archive_sha256, archive_size, submitter_id)
       VALUES (1, 'v-1', 1, '1.0', 'wf', 'http://127.0.0.1/c.zip', '${SHA}', 1, 1)`,
    );
    await dataSource.query(
      "INSERT INTO test_suites (id, uuid, version_id, roc_suite) VALUES (1, 's-1', 1, '#s')",
    );
    await dataSource.query(
      "INSERT INTO test_services (id, uuid, type, url) VALUES (1, 'sv-1', 'managed', 'https://lifemonitor.example.org')",
    );
    for (const id of [1, 2, 3]) {
      await dataSource.query(
        `INSERT INTO test_instances (id, uuid, suite_id, service_id, roc_instance, resource, managed)
         VALUES (?, ?, 1, 1, ?, 'local', 1)`,
        [id, `i-${id}`, `#i${id}`],
      );
    }
    const runs: OldRun[] = [
      // Instance 1: queued twice (a first check and a trigger that raced), after an ended run.
      [1, 1, 'passed', 0],
      [2, 1, 'queued', 0],
      [3, 1, 'queued', 0],
      // Instance 2: a queued run asked to stop (its runner ends it), then one waiting, and one running.
      [4, 2, 'queued', 1],
      [5, 2, 'running', 0],
      [6, 2, 'queued', 0],
      // Instance 3: nothing waits.
      [7, 3, 'running', 0],
    ];
    for (const [id, instance, status, cancelAsked] of runs) {
      await dataSource.query(
        `INSERT INTO managed_runs (id, instance_id, executor, archive_sha256, status, queued_at, changed_at, cancel_requested)
         VALUES (?, ?, 'local', '${SHA}', ?, '2026-11-01 12:00:00', '2026-11-01 12:00:00', ?)`,
        [id, instance, status, cancelAsked],
      );
    }
    await dataSource.runMigrations({ transaction: 'each' });
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("marks each instance's oldest waiting run, and only that one, even where two were queued", async () => {
    expect(await marks()).toEqual([
      [1, null],
      [2, 1],
      [3, null],
      [4, null],
      [5, null],
      [6, 2],
      [7, null],
    ]);
  });

  it('refuses a second waiting run of an instance, and takes the first of one with none', async () => {
    const queue = (id: number, instance: number) =>
      dataSource.query(
        `INSERT INTO managed_runs (id, instance_id, executor, archive_sha256, status, queued_at, changed_at, queued_instance_id)
         VALUES (?, ?, 'local', '${SHA}', 'queued', '2026-11-02 12:00:00', '2026-11-02 12:00:00', ?)`,
        [id, instance, instance],
      );
    const refused = await queue(8, 1).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isUniqueViolation(refused)).toBe(true);
    await queue(9, 3);
    expect((await marks()).filter(([, mark]) => mark !== null)).toEqual([
      [2, 1],
      [6, 2],
      [9, 3],
    ]);
  });

  it('goes down without losing a run, and up again', async () => {
    await undoDownTo(dataSource, STAMP);
    const [count] = await dataSource.query<{ n: number | string }[]>(
      'SELECT COUNT(*) AS n FROM managed_runs',
    );
    expect(Number(count.n)).toBe(8);
    await dataSource.runMigrations({ transaction: 'each' });
    expect((await marks()).filter(([, mark]) => mark !== null)).toEqual([
      [2, 1],
      [6, 2],
      [9, 3],
    ]);
  });
});
