import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { createConnection } from 'mysql2/promise';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { AppModule } from '../../src/app.module.js';
import { configureApp } from '../../src/bootstrap.js';
import { AppConfig, loadConfig } from '../../src/config/app-config.js';
import { ExpressHttpAdapter } from '../../src/http-adapter.js';

export const ADMIN = { username: 'admin', password: 'admin-password' } as const;

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  /** supertest bound to the listening server. */
  http: TestAgent;
  /** http://127.0.0.1:<port> */
  baseUrl: string;
  dataDir: string;
  /** The environment the app was built from (useful to start a second copy on the same database). */
  env: Record<string, string>;
  /** Logs in and returns the token. */
  login(username?: string, password?: string): Promise<string>;
  /** Creates a user through the admin API and returns its token. */
  userToken(roles?: string[], username?: string): Promise<string>;
  close(): Promise<void>;
}

/** Which database this jest project runs on: set by test/support/use-sqlite.ts or use-mariadb.ts. */
export function testDatabase(): 'sqlite' | 'mariadb' {
  return process.env.TEST_DATABASE === 'mariadb' ? 'mariadb' : 'sqlite';
}

/** A fresh empty database for one app: a SQLite file in dataDir, or a new database on the throwaway MariaDB. */
export async function createTestDatabase(dataDir: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (testDatabase() === 'sqlite') {
    return { url: `sqlite:${join(dataDir, 'app.sqlite')}`, drop: () => Promise.resolve() };
  }
  const rootUrl = process.env.TEST_MARIADB_URL;
  if (!rootUrl) {
    throw new Error('TEST_MARIADB_URL is not set: the MariaDB project starts its server in globalSetup');
  }
  const name = `t_${randomBytes(6).toString('hex')}`;
  const connection = await createConnection(rootUrl);
  await connection.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await connection.end();
  return {
    url: `${rootUrl}/${name}`,
    drop: async () => {
      const admin = await createConnection(rootUrl);
      await admin.query(`DROP DATABASE IF EXISTS ${name}`);
      await admin.end();
    },
  };
}

/** Environment every test app starts from; `overrides` win. */
export function baseTestEnv(dataDir: string, databaseUrl: string): Record<string, string> {
  return {
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    JWT_SECRET: 'test-secret-test-secret-test-secret-42',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    REFRESH_INTERVAL_SECONDS: '0',
    ALLOW_PRIVATE_NETWORK_LINKS: 'true',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
  };
}

/**
 * Builds the app as main.ts does (same middleware, pipes, filters), listening on a loopback port.
 * `extensions`: modules added beside AppModule, as a deployment adds a provider (docs/extending.md).
 */
export async function startApp(
  env: Record<string, string>,
  extensions: readonly Type[] = [],
): Promise<NestExpressApplication> {
  const config = loadConfig(env);
  const moduleRef = await Test.createTestingModule({
    imports: [AppModule.register(config), ...extensions],
  }).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>(new ExpressHttpAdapter(), {
    bodyParser: false,
    rawBody: true,
    logger: false,
  });
  configureApp(app, config);
  await app.listen(0, '127.0.0.1');
  return app;
}

export async function createTestApp(
  overrides: Record<string, string> = {},
  extensions: readonly Type[] = [],
): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'app-test-'));
  const database = await createTestDatabase(dataDir);
  const env = { ...baseTestEnv(dataDir, database.url), ...overrides };
  const app = await startApp(env, extensions);
  const { port } = app.getHttpServer().address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const http = request(baseUrl);
  let users = 0;

  const login = async (
    username: string = ADMIN.username,
    password: string = ADMIN.password,
  ): Promise<string> => {
    const response = await http.post('/api/v1/auth').send({ username, password });
    if (response.status !== 200) {
      throw new Error(`login of ${username} failed: ${response.status} ${JSON.stringify(response.body)}`);
    }
    return (response.body as { token: string }).token;
  };

  return {
    app,
    config: app.get(AppConfig),
    http,
    baseUrl,
    dataDir,
    env,
    login,
    async userToken(roles = ['user'], username = `user${++users}_${randomBytes(3).toString('hex')}`) {
      const admin = await login();
      const password = 'a-test-password';
      const created = await http
        .post('/api/v1/users')
        .set('Authorization', `Bearer ${admin}`)
        .send({ username, password, roles });
      if (created.status !== 201) {
        throw new Error(`creating ${username} failed: ${created.status} ${JSON.stringify(created.body)}`);
      }
      return login(username, password);
    },
    async close() {
      await app.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
