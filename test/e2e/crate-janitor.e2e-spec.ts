import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CrateJanitor } from '../../src/crates/crate-janitor.js';
import { CrateStore } from '../../src/crates/crate-store.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateZip, storedArchives } from '../support/registry.js';

const HOUR_MS = 3600_000;

describe(`the sweep of stale crate files (${testDatabase()})`, () => {
  let t: TestApp;
  let links: LinkServer;

  beforeAll(async () => {
    t = await createTestApp();
    links = await LinkServer.start();
  });

  afterAll(async () => {
    await links.close();
    await t.close();
  });

  it('removes stale downloads and archives no version uses, and keeps used and recent ones', async () => {
    const token = await t.login();
    const link = links.route('/kept.zip', { kind: 'bytes', body: crateZip({ marker: randomUUID() }) });
    await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${token}`)
      .send({ roc_link: link, version: '1' })
      .expect(201);
    const used = join(t.dataDir, storedArchives(t)[0]);

    const store = t.app.get(CrateStore);
    const orphan = 'ab'.repeat(32);
    const freshOrphan = 'cd'.repeat(32);
    for (const sha of [orphan, freshOrphan]) {
      mkdirSync(join(t.dataDir, 'crates', sha.slice(0, 2)), { recursive: true });
      writeFileSync(store.pathOf(sha), 'left behind by a copy killed between storing and committing');
    }
    mkdirSync(join(t.dataDir, 'tmp'), { recursive: true });
    const staleDownload = join(t.dataDir, 'tmp', 'killed-download.part');
    const liveDownload = join(t.dataDir, 'tmp', 'live-download.part');
    writeFileSync(staleDownload, 'partial');
    writeFileSync(liveDownload, 'partial');
    const past = new Date(Date.now() - 2 * HOUR_MS);
    for (const path of [store.pathOf(orphan), staleDownload, used]) {
      utimesSync(path, past, past);
    }

    await expect(t.app.get(CrateJanitor).sweep()).resolves.toEqual({ temporaryFiles: 1, orphanArchives: 1 });
    expect(existsSync(store.pathOf(orphan))).toBe(false);
    expect(existsSync(staleDownload)).toBe(false);
    expect(existsSync(used)).toBe(true);
    expect(existsSync(store.pathOf(freshOrphan))).toBe(true);
    expect(existsSync(liveDownload)).toBe(true);
  });
});
