import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateZip, filesUnder, snapshot } from '../support/registry.js';
import { SmallDisk } from '../support/tmpfs.js';

/**
 * DATA_DIR on a file system that fills up (a real tmpfs), the database elsewhere: a
 * registration whose download hits ENOSPC answers 507 in area B's shape, logs the path at
 * error, leaves no row and no file, and the next one succeeds once space is back.
 */
describe(`a full disk under DATA_DIR (${testDatabase()})`, () => {
  let disk: SmallDisk;
  let t: TestApp;
  let links: LinkServer;
  let database: DataSource;
  let token: string;
  const errors = jest.spyOn(Logger.prototype, 'error');

  beforeAll(async () => {
    disk = SmallDisk.mount(4);
    t = await createTestApp({ DATA_DIR: disk.dir });
    links = await LinkServer.start();
    database = t.app.get(DataSource);
    token = await t.login();
  });

  afterAll(async () => {
    errors.mockRestore();
    await links.close();
    await t.close();
    disk.unmount();
  });

  const register = () =>
    t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${token}`)
      .send({
        roc_link: links.route(`/${randomUUID()}.zip`, {
          kind: 'bytes',
          body: crateZip({ marker: randomUUID() }),
        }),
        version: '1',
      });

  it('answers a registration that hits ENOSPC with 507, writes nothing, and registers once space is back', async () => {
    const before = await snapshot(t, database);
    disk.fill();
    errors.mockClear();

    const refused = await register();
    expect(refused.status).toBe(507);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toEqual({
      type: 'about:blank',
      title: 'Insufficient Storage',
      status: 507,
      detail: "The server's storage is full; the request was not carried out",
    });
    const logged = errors.mock.calls.map((call) => String(call[1]));
    expect(logged).toEqual([expect.stringMatching(new RegExp(`^storage full at ${disk.dir}/tmp/download-`))]);
    expect((await snapshot(t, database)).rows).toEqual(before.rows);
    expect(filesUnder(disk.dir)).toEqual(['filler']);

    disk.free();
    expect((await register()).status).toBe(201);
  });
});
