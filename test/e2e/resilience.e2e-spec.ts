import { randomUUID } from 'node:crypto';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config/app-config.js';
import { dataSourceOptions, openDataSource } from '../../src/database/data-source.js';
import { LinkServer } from '../fakes/link-server.js';
import { ADMIN, baseTestEnv, createTestDatabase, testDatabase } from '../support/create-test-app.js';
import { crateZip, filesUnder } from '../support/registry.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { until } from '../support/until.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

async function login(service: ServiceProcess): Promise<string> {
  const response = await fetch(`${service.url}/api/v1/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  return ((await response.json()) as { token: string }).token;
}

function register(service: ServiceProcess, token: string, body: object): Promise<number | 'cut'> {
  return fetch(`${service.url}/users/current/workflows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  }).then(
    (response) => response.status,
    () => 'cut' as const,
  );
}

describe(`the built service under SIGTERM and kill -9 (${testDatabase()})`, () => {
  let dataDir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let env: Record<string, string>;
  let links: LinkServer;
  let db: DataSource;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'resilience-'));
    database = await createTestDatabase(dataDir);
    env = { ...baseTestEnv(dataDir, database.url), DOWNLOAD_TIMEOUT_SECONDS: '30' };
    links = await LinkServer.start();
    db = await openDataSource(dataSourceOptions(loadConfig(env)));
  });

  afterAll(async () => {
    await db.destroy();
    await links.close();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const rowsOf = async (uuid: string): Promise<number> =>
    Number(
      (await db.query<{ n: number }[]>('SELECT COUNT(*) AS n FROM workflows WHERE uuid = ?', [uuid]))[0].n,
    );

  it('finishes a registration in flight on SIGTERM, exits 0, and the workflow is whole after a restart', async () => {
    const service = await startServiceProcess(env);
    const token = await login(service);
    const bytes = crateZip({ marker: randomUUID() });
    const link = links.route(`/slow-${randomUUID()}.zip`, {
      kind: 'slow',
      body: bytes,
      pieces: 10,
      intervalMs: 150,
    });
    const uuid = randomUUID();
    const pending = register(service, token, { roc_link: link, version: '1.0', uuid });
    await until('the download to start', () => links.requestsTo(new URL(link).pathname).length === 1, {
      timeoutMs: 15_000,
      everyMs: 25,
    });
    await sleep(300);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    const outcome = await pending;

    const restarted = await startServiceProcess(env);
    try {
      const read = await fetch(`${restarted.url}/workflows/${uuid}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      if (outcome === 201) {
        expect(read.status).toBe(200);
        const download = await fetch(`${restarted.url}/workflows/${uuid}/rocrate/1.0/download`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
      } else {
        // Never half: no row of it, and no archive of its bytes.
        expect(read.status).toBe(404);
        expect(await rowsOf(uuid)).toBe(0);
        expect(filesUnder(dataDir).some((file) => file.includes(sha256(bytes)))).toBe(false);
      }
      // The drain lets a request that has started complete: that is the outcome this service gives.
      expect(outcome).toBe(201);
    } finally {
      expect(await restarted.stop()).toBe(0);
    }
  });

  it('on SIGTERM, finishes a registration whose client went away before it closes the database', async () => {
    const service = await startServiceProcess({ ...env, LOG_LEVEL: 'info' });
    const token = await login(service);
    const link = links.route(`/left-${randomUUID()}.zip`, {
      kind: 'slow',
      body: crateZip({ marker: randomUUID() }),
      pieces: 20,
      intervalMs: 200,
    });
    const uuid = randomUUID();
    const client = new AbortController();
    const pending = fetch(`${service.url}/users/current/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ roc_link: link, version: '1.0', uuid }),
      signal: client.signal,
    }).then(
      () => 'answered',
      () => 'left',
    );
    await until('the download to start', () => links.requestsTo(new URL(link).pathname).length === 1, {
      timeoutMs: 15_000,
      everyMs: 25,
    });
    // The client leaves: its socket is destroyed, and the service's server no longer waits for it.
    client.abort();
    expect(await pending).toBe('left');
    await sleep(200);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(await rowsOf(uuid)).toBe(1);
    const output = service.output();
    expect(output).toContain('waiting for 1 request in flight to finish');
    expect(output).not.toContain('Pool is closed');
    expect(output).not.toContain('database is unavailable');
  });

  it('leaves no orphan rows or files when killed with -9 during registrations, once restarted', async () => {
    const service = await startServiceProcess(env);
    const token = await login(service);
    const finished = await Promise.all(
      [1, 2].map(async (n) => {
        const body = crateZip({ marker: randomUUID() });
        const uuid = randomUUID();
        const link = links.route(`/fast-${uuid}.zip`, { kind: 'bytes', body });
        expect(await register(service, token, { roc_link: link, version: `${n}`, uuid })).toBe(201);
        return { uuid, version: `${n}`, body };
      }),
    );
    const inFlight = [1, 2, 3].map(() => {
      const body = crateZip({ marker: randomUUID() });
      const uuid = randomUUID();
      const link = links.route(`/killed-${uuid}.zip`, { kind: 'slow', body, pieces: 20, intervalMs: 200 });
      return { uuid, link, done: register(service, token, { roc_link: link, version: '1', uuid }) };
    });
    await until(
      'three downloads in progress',
      () => readdirSync(join(dataDir, 'tmp'), { withFileTypes: true }).filter((f) => f.isFile()).length === 3,
      { timeoutMs: 15_000, everyMs: 25 },
    );
    await sleep(400);
    service.child.kill('SIGKILL');
    expect(await service.exited).toBe('SIGKILL');
    for (const registration of inFlight) {
      expect(await registration.done).toBe('cut');
    }

    // What the killed copy left would be swept once older than any registration in flight
    // could be; the files are aged instead of waiting that long.
    const past = new Date(Date.now() - 24 * 3600_000);
    for (const file of filesUnder(dataDir).filter((f) => f.startsWith('tmp/') || f.startsWith('crates/'))) {
      utimesSync(join(dataDir, file), past, past);
    }

    const restarted = await startServiceProcess(env);
    try {
      expect(filesUnder(dataDir).filter((file) => file.startsWith('tmp/'))).toEqual([]);
      const versions = await db.query<{ archive_sha256: string }[]>(
        'SELECT archive_sha256 FROM workflow_versions',
      );
      const used = new Set(versions.map((row) => row.archive_sha256));
      const stored = filesUnder(dataDir)
        .filter((file) => file.startsWith('crates/'))
        .map((file) => file.replace(/^crates\/[0-9a-f]{2}\/|\.zip$/g, ''));
      expect(stored.sort()).toEqual([...used].sort());
      const empty = await db.query<{ id: number }[]>(
        'SELECT w.id FROM workflows w LEFT JOIN workflow_versions v ON v.workflow_id = w.id WHERE v.id IS NULL',
      );
      expect(empty).toEqual([]);
      for (const registration of inFlight) {
        expect(await rowsOf(registration.uuid)).toBe(0);
      }
      for (const done of finished) {
        const download = await fetch(
          `${restarted.url}/workflows/${done.uuid}/rocrate/${done.version}/download`,
          {
            headers: { authorization: `Bearer ${token}` },
          },
        );
        expect(download.status).toBe(200);
        expect(Buffer.from(await download.arrayBuffer()).equals(done.body)).toBe(true);
      }
    } finally {
      expect(await restarted.stop()).toBe(0);
    }
  });
});
