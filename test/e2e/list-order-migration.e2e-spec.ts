import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config/app-config.js';
import { dataSourceOptions, openDataSource, revertLastMigration } from '../../src/database/data-source.js';
import { baseTestEnv, createTestDatabase, testDatabase } from '../support/create-test-app.js';

/** The migration that keeps the list's order on the workflow row. */
const STAMP = 1764210000000;

async function undoDownTo(dataSource: DataSource, stamp: number): Promise<void> {
  for (;;) {
    const [last] = await dataSource.query<{ t: number | string | null }[]>(
      'SELECT MAX(timestamp) AS t FROM migrations',
    );
    if (last.t === null || Number(last.t) < stamp) {
      return;
    }
    // As `npm run migration:revert` does: later migrations rebuild SQLite tables on the way down too.
    await revertLastMigration(dataSource);
  }
}

describe(`the list-order migration (${testDatabase()})`, () => {
  it("fills each existing workflow's order with its latest version's id, and goes down without losing a row", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'list-order-migration-'));
    const database = await createTestDatabase(dataDir);
    let dataSource: DataSource | undefined;
    try {
      dataSource = await openDataSource(dataSourceOptions(loadConfig(baseTestEnv(dataDir, database.url))));
      await undoDownTo(dataSource, STAMP);
      await dataSource.query(
        "INSERT INTO users (id, username, password_hash, roles, active) VALUES (1, 'alice', 'x', 'user', 1)",
      );
      await dataSource.query(
        "INSERT INTO workflows (id, uuid, owner_id) VALUES (1, 'w-1', 1), (2, 'w-2', 1)",
      );
      // Workflow 1 got a version after workflow 2's: it is first in the list.
      await dataSource.query(
        `INSERT INTO workflow_versions (id, uuid, workflow_id, version, name, roc_link, archive_sha256, archive_size, submitter_id)
         VALUES (1, 'v-1', 1, '1.0', 'wf', 'http://127.0.0.1/c.zip', '${'a'.repeat(64)}', 1, 1),
                (2, 'v-2', 2, '1.0', 'wf', 'http://127.0.0.1/c.zip', '${'a'.repeat(64)}', 1, 1),
                (3, 'v-3', 1, '2.0', 'wf', 'http://127.0.0.1/c.zip', '${'a'.repeat(64)}', 1, 1)`,
      );
      await dataSource.runMigrations({ transaction: 'each' });
      const order = async () =>
        (
          await dataSource!.query<{ id: number | string; latest: number | string }[]>(
            'SELECT id, latest_version_id AS latest FROM workflows ORDER BY id',
          )
        ).map((row) => [Number(row.id), Number(row.latest)]);
      expect(await order()).toEqual([
        [1, 3],
        [2, 2],
      ]);

      await undoDownTo(dataSource, STAMP);
      const rows = await dataSource.query<{ n: number | string }[]>(
        'SELECT COUNT(*) AS n FROM workflow_versions',
      );
      expect(Number(rows[0].n)).toBe(3);
      await dataSource.runMigrations({ transaction: 'each' });
      expect(await order()).toEqual([
        [1, 3],
        [2, 2],
      ]);
    } finally {
      await dataSource?.destroy();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
