import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import type { Response } from 'supertest';
import { ADMIN, baseTestEnv, createTestDatabase, startApp } from './create-test-app.js';

/** Area C's phrase pairs (API.md 3.5): status → [short, long]. */
export const PHRASES: Record<number, [string, string]> = {
  400: ['Bad Request', 'Bad request syntax or unsupported method'],
  401: ['Unauthorized', 'No permission -- see authorization schemes'],
  403: ['Forbidden', 'Request forbidden -- authorization will not help'],
  404: ['Not Found', 'Nothing matches the given URI'],
  409: ['Conflict', 'Request conflict'],
  500: ['Internal Server Error', 'Server got itself in trouble'],
  502: ['Bad Gateway', 'Invalid responses from another server/proxy'],
  503: ['Service Unavailable', 'The server cannot process the request due to a high load'],
  507: ['Insufficient Storage', 'The server is unable to store what is needed to complete the request'],
};

/** Asserts the area-C error envelope with the exact phrases of the status. */
export function expectEnvelope(response: Response, status: number, message?: string | RegExp): void {
  expect({ status: response.status, body: response.body as unknown }).toEqual({
    status,
    body: {
      status: 'error',
      message:
        message === undefined
          ? expect.any(String)
          : typeof message === 'string'
            ? message
            : expect.stringMatching(message),
      status_code: status,
      status_short_message: PHRASES[status][0],
      status_long_message: PHRASES[status][1],
    },
  });
}

/** Writes a CLOUDS_FILE into a new temporary folder; returns its path and a clean-up. */
export function writeCloudsFile(yaml: string): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'clouds-'));
  const path = join(dir, 'clouds.yaml');
  writeFileSync(path, yaml);
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** One running copy of the service. */
export interface ServiceCopy {
  app: NestExpressApplication;
  http: TestAgent;
  close(): Promise<void>;
}

/**
 * A database that several copies of the service use, one after another (a restart) or at once;
 * unlike createTestApp, closing a copy keeps the database until `drop()`.
 */
export async function sharedDatabase(overrides: Record<string, string> = {}): Promise<{
  env: Record<string, string>;
  start(): Promise<ServiceCopy>;
  /** The admin's token, from the first copy started. */
  token(copy: ServiceCopy): Promise<string>;
  drop(): Promise<void>;
}> {
  const dataDir = mkdtempSync(join(tmpdir(), 'app-shared-'));
  const database = await createTestDatabase(dataDir);
  const env = { ...baseTestEnv(dataDir, database.url), ...overrides };
  return {
    env,
    async start() {
      const app = await startApp(env);
      const { port } = app.getHttpServer().address() as AddressInfo;
      return { app, http: request(`http://127.0.0.1:${port}`), close: () => app.close() };
    },
    async token(copy) {
      const response = await copy.http.post('/api/v1/auth').send(ADMIN);
      return (response.body as { token: string }).token;
    },
    async drop() {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
