import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LinkServer } from '../fakes/link-server.js';
import { ADMIN, baseTestEnv, createTestDatabase, testDatabase } from '../support/create-test-app.js';
import { FIXTURE_CRATES } from '../support/registry.js';
import { startServiceProcess } from '../support/service-process.js';

describe(`what the service logs (${testDatabase()})`, () => {
  let dataDir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let links: LinkServer;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'logs-'));
    database = await createTestDatabase(dataDir);
    links = await LinkServer.start();
  });

  afterAll(async () => {
    await links.close();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const login = async (url: string): Promise<string> => {
    const response = await fetch(`${url}/api/v1/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    return ((await response.json()) as { token: string }).token;
  };

  it('logs each registration with its outcome, uuid, version, size and time (JSON in production)', async () => {
    const service = await startServiceProcess({
      ...baseTestEnv(dataDir, database.url),
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
    });
    const token = await login(service.url);
    const register = (body: Record<string, string>) =>
      fetch(`${service.url}/users/current/workflows`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
    const good = links.route('/crate.zip', {
      kind: 'file',
      path: resolve(FIXTURE_CRATES.galaxySortChangeCase),
    });
    const created = await register({ roc_link: good, version: '1.0' });
    expect(created.status).toBe(201);
    const { uuid } = (await created.json()) as { uuid: string };
    const missing = links.route('/missing.zip', { kind: 'status', status: 404 });
    expect((await register({ roc_link: `${missing}?token=in-the-link`, version: '2' })).status).toBe(400);
    expect(await service.stop()).toBe(0);

    const registry = service
      .output()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; msg: string; context?: string })
      .filter((entry) => entry.context === 'WorkflowsService');
    expect(registry).toEqual([
      {
        ...registry[0],
        level: 30,
        msg: expect.stringMatching(
          new RegExp(`^registered workflow ${uuid} version 1\\.0 \\(\\d+ bytes\\) in \\d+ ms$`),
        ),
      },
      {
        ...registry[1],
        level: 30,
        msg: expect.stringMatching(/^registration of version 2 refused at download after \d+ ms: .*404/),
      },
    ]);
    expect(service.output()).not.toContain('in-the-link');
  });

  it('writes one short readable line per request in development', async () => {
    const service = await startServiceProcess({
      ...baseTestEnv(dataDir, database.url),
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
    });
    const answered = await fetch(`${service.url}/users/current`, {
      headers: { 'x-request-id': 'dev-line-1' },
    });
    expect(answered.status).toBe(401);
    expect(await service.stop()).toBe(0);
    const lines = service.output().split('\n');
    const request = lines.filter((line) => line.includes('GET /users/current'));
    expect(request).toHaveLength(1);
    expect(request[0]).toMatch(/ INFO: GET \/users\/current 401 \d+ ms \{"reqId":"dev-line-1"\}$/);
    expect(request[0].length).toBeLessThan(120);
  });
});
