import { jest } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createConnection } from 'mysql2/promise';
import request, { type Response } from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { ADMIN, baseTestEnv, startApp } from '../support/create-test-app.js';
import {
  killMariaDb,
  launchMariaDb,
  startMariaDb,
  stopMariaDb,
  type MariaDbServer,
} from '../support/mariadb-server.mjs';
import { expectEnvelope, writeCloudsFile } from '../support/orchestration.js';

/**
 * A MariaDB of this test's own, paused (SIGSTOP) and killed (SIGKILL) under a running
 * service with DATABASE_TIMEOUT_SECONDS=1: every request that needs the database answers 503
 * with Retry-After in its area's shape (a valid token included: never 401), /health/ready
 * answers 503 without the database's address, the outage is logged once, and when the
 * database is back every request succeeds again without a restart, more of them at once
 * than the pool holds (no connection left poisoned by a query that was cut).
 */
describe('a hung or lost MariaDB under a running service', () => {
  let server: MariaDbServer;
  let pid: number;
  let dataDir: string;
  let clouds: { path: string; remove(): void };
  let app: NestExpressApplication;
  let http: TestAgent;
  let token: string;
  const errors = jest.spyOn(Logger.prototype, 'error');
  /** More than the pool's 20 connections. */
  const BURST = 30;

  beforeAll(async () => {
    server = await startMariaDb();
    pid = server.pid;
    const admin = await createConnection(server.rootUrl);
    await admin.query('CREATE DATABASE app CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci');
    await admin.end();
    dataDir = mkdtempSync(join(tmpdir(), 'database-faults-'));
    clouds = writeCloudsFile('clouds:\n  default: {type: dummy}\n');
    app = await startApp({
      ...baseTestEnv(dataDir, `${server.rootUrl}/app`),
      DATABASE_TIMEOUT_SECONDS: '1',
      CLOUDS_FILE: clouds.path,
    });
    http = request(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
    const login = await http.post('/api/v1/auth').send(ADMIN).expect(200);
    token = (login.body as { token: string }).token;
  }, 120_000);

  afterAll(async () => {
    errors.mockRestore();
    await app?.close();
    clouds?.remove();
    rmSync(dataDir, { recursive: true, force: true });
    // A paused server would not stop: let it run first.
    process.kill(pid, 'SIGCONT');
    await stopMariaDb(pid, server.dir);
  }, 60_000);

  const auth = (): { Authorization: string } => ({ Authorization: `Bearer ${token}` });
  /** One request per area that needs the database, with the admin's valid token. */
  const everyArea = async (): Promise<{ a: Response; b: Response; c: Response; login: Response }> => {
    const [a, b, c, login] = await Promise.all([
      http.get('/api/v1/users').set(auth()),
      http.get('/users/current/workflows').set(auth()),
      http.get('/api/v1/nodes').set(auth()),
      http.post('/api/v1/auth').send(ADMIN),
    ]);
    return { a, b, c, login };
  };

  /** A token never used yet: its first use re-checks it in the database (its revocation is not cached). */
  const freshToken = async (): Promise<string> =>
    ((await http.post('/api/v1/auth').send(ADMIN).expect(200)).body as { token: string }).token;

  const expectUnavailable = async (fresh: string): Promise<void> => {
    // The re-check of a valid token fails with the database: 503, never 401.
    const current = await http.get('/users/current').set('Authorization', `Bearer ${fresh}`);
    expect(current.status).toBe(503);
    expect(current.body).toMatchObject({
      status: 503,
      detail: 'The database is unavailable; try again later',
    });
    const { a, b, c, login } = await everyArea();
    for (const response of [a, b, c, login]) {
      expect(response.status).toBe(503);
      expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    const message = 'The database is unavailable; try again later';
    expect(a.body).toEqual({ error: { code: 503, title: 'Service Unavailable', message } });
    expect(login.body).toEqual({ error: { code: 503, title: 'Service Unavailable', message } });
    expect(b.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(b.body).toEqual({
      type: 'about:blank',
      title: 'Service Unavailable',
      status: 503,
      detail: message,
    });
    expectEnvelope(c, 503, message);

    const ready = await http.get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.details.database).toEqual({ status: 'down', message: 'the database does not answer' });
    expect(JSON.stringify(ready.body)).not.toContain(String(server.port));
    expect(JSON.stringify(ready.body)).not.toContain('127.0.0.1');
  };

  const expectServed = async (): Promise<void> => {
    const { a, b, c, login } = await everyArea();
    expect([a.status, b.status, c.status, login.status]).toEqual([200, 200, 200, 200]);
    await http.get('/health/ready').expect(200);
    // More at once than the pool holds: a connection whose query was cut must not be handed out again.
    const burst = await Promise.all(
      Array.from({ length: BURST }, () => http.get('/users/current/workflows').set(auth())),
    );
    expect(burst.map((response) => response.status)).toEqual(Array(BURST).fill(200));
  };

  const outageLines = (): string[] =>
    errors.mock.calls.map((call) => String(call[1])).filter((line) => /database is unavailable/.test(line));

  it('answers 503 with Retry-After in every area while the server is paused, and serves again once it resumes', async () => {
    await expectServed();
    const fresh = await freshToken();
    errors.mockClear();
    process.kill(pid, 'SIGSTOP');
    try {
      await expectUnavailable(fresh);
      // More requests than the pool has connections: those queued for one are cut too.
      const queued = await Promise.all(
        Array.from({ length: BURST }, () => http.get('/users/current/workflows').set(auth())),
      );
      expect(queued.map((response) => response.status)).toEqual(Array(BURST).fill(503));
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await expectServed();
    expect(outageLines()).toHaveLength(1);
  }, 120_000);

  it('answers 503 while the server is killed, and serves again once it is back on its data, without a restart', async () => {
    const fresh = await freshToken();
    errors.mockClear();
    await killMariaDb(pid);
    await expectUnavailable(fresh);
    pid = await launchMariaDb(server.dir, server.port);
    await expectServed();
    expect(outageLines()).toHaveLength(1);
  }, 120_000);
});
