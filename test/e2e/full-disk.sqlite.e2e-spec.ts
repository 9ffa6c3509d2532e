import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { expectEnvelope, writeCloudsFile } from '../support/orchestration.js';
import { crateZip, snapshot, storedArchives } from '../support/registry.js';
import { SmallDisk } from '../support/tmpfs.js';

/**
 * The SQLite file on a file system that fills up (a real tmpfs), DATA_DIR elsewhere: writes
 * fail at COMMIT with SQLITE_FULL. Every write is answered 507 in its area's shape, reads go on
 * being served, nothing is half-written, and once space is back the service writes again
 * without a restart (the connection lock used to stay held until one).
 */
describe('a full disk under the SQLite file', () => {
  let disk: SmallDisk;
  let t: TestApp;
  let links: LinkServer;
  let clouds: { path: string; remove(): void };
  let database: DataSource;
  let token: string;
  const errors = jest.spyOn(Logger.prototype, 'error');

  beforeAll(async () => {
    disk = SmallDisk.mount(16);
    clouds = writeCloudsFile('clouds:\n  default: {type: dummy}\n');
    t = await createTestApp({ DATABASE_URL: `sqlite:${disk.dir}/app.sqlite`, CLOUDS_FILE: clouds.path });
    links = await LinkServer.start();
    database = t.app.get(DataSource);
    token = await t.login();
  });

  afterAll(async () => {
    errors.mockRestore();
    await links.close();
    await t.close();
    clouds.remove();
    disk.unmount();
  });

  const auth = (): { Authorization: string } => ({ Authorization: `Bearer ${token}` });
  const register = (version: string) =>
    t.http
      .post('/users/current/workflows')
      .set(auth())
      .send({
        roc_link: links.route(`/${randomUUID()}.zip`, {
          kind: 'bytes',
          body: crateZip({ marker: randomUUID() }),
        }),
        version,
      });

  /** Empties the write-ahead log into the database file, so that the next COMMIT needs new space. */
  const fillDisk = async (): Promise<void> => {
    await database.query('PRAGMA wal_checkpoint(TRUNCATE)');
    disk.fill();
  };

  it('answers writes 507 in every area while reads go on, writes nothing, and writes again once space is back', async () => {
    const kept = await register('1');
    expect(kept.status).toBe(201);
    const uuid = (kept.body as { uuid: string }).uuid;
    const before = await snapshot(t, database);
    errors.mockClear();

    await fillDisk();

    // Area B: a registration (the archive is stored, then the COMMIT fails) and a version delete.
    const refused = await register('2');
    expect(refused.status).toBe(507);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toEqual({
      type: 'about:blank',
      title: 'Insufficient Storage',
      status: 507,
      detail: expect.stringMatching(/storage is full/),
    });
    const deleted = await t.http.delete(`/workflows/${uuid}/versions/1`).set(auth());
    expect(deleted.status).toBe(507);
    expect(deleted.body).toMatchObject({ status: 507, detail: expect.stringMatching(/storage is full/) });
    // Area A: creating a user.
    const created = await t.http
      .post('/api/v1/users')
      .set(auth())
      .send({ username: 'no-room', password: 'a-long-password' });
    expect(created.status).toBe(507);
    expect(created.body).toEqual({
      error: { code: 507, title: 'Insufficient Storage', message: expect.stringMatching(/storage is full/) },
    });
    // Area C: starting a VM on the dummy cloud, whose nodes are rows.
    const started = await t.http
      .post('/api/v1/vm/start')
      .set(auth())
      .send({ name: 'no-room', image: '1', size: '1' });
    expectEnvelope(started, 507, /storage is full/);

    // Reads are served at once: the failed COMMITs left no lock behind.
    await t.http.post('/api/v1/auth').send({ username: 'admin', password: 'admin-password' }).expect(200);
    await t.http.get('/users/current/workflows').set(auth()).expect(200);
    await t.http.get('/health/ready').expect(200);

    // Nothing half-written: no row, and the archive of the failed registration was removed.
    expect(await snapshot(t, database)).toEqual(before);
    expect(storedArchives(t)).toHaveLength(1);
    const logged = errors.mock.calls.map((call) => String(call[1]));
    expect(logged.filter((line) => /^storage full/.test(line))).toHaveLength(4);

    disk.free();

    const again = await register('2');
    expect(again.status).toBe(201);
    await t.http.delete(`/workflows/${uuid}/versions/1`).set(auth()).expect(204);
    await t.http
      .post('/api/v1/users')
      .set(auth())
      .send({ username: 'room-again', password: 'a-long-password' })
      .expect(201);
    await t.http
      .post('/api/v1/vm/start')
      .set(auth())
      .send({ name: 'room-again', image: '1', size: '1' })
      .expect(200);
  });
});
