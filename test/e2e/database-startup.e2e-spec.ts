import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseTestEnv, testDatabase } from '../support/create-test-app.js';
import { freePort } from '../support/mariadb-server.mjs';
import { startServiceProcess } from '../support/service-process.js';

describe(`start-up with a DATABASE_URL that does not answer (${testDatabase()})`, () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'db-startup-'));
  });

  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('logs each attempt with host and port, then stops with one line naming DATABASE_URL, never the password', async () => {
    // A loopback port nobody listens on: every connection is refused.
    const port = await freePort();
    const service = await startServiceProcess(
      {
        ...baseTestEnv(dataDir, `mysql://app:a-database-password@127.0.0.1:${port}/app`),
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        DATABASE_STARTUP_TIMEOUT_SECONDS: '2',
      },
      false,
    );
    expect(await service.exited).toBe(1);
    const output = service.output();
    expect(output).not.toContain('a-database-password');
    const lines = output.trim().split('\n');
    const last = lines.pop();
    expect(last).toMatch(
      new RegExp(
        `^DATABASE_URL: the database at 127\\.0\\.0\\.1:${port} did not answer within 2 s \\((\\d+) attempts, last: ECONNREFUSED\\); ` +
          'check DATABASE_URL, or raise DATABASE_STARTUP_TIMEOUT_SECONDS$',
      ),
    );
    const attempts = lines
      .map((line) => JSON.parse(line) as { context?: string; level: number; msg: string })
      .filter((entry) => entry.context === 'Database');
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    attempts.forEach((entry, i) => {
      expect(entry.level).toBe(40);
      expect(entry.msg).toMatch(
        new RegExp(`^database 127\\.0\\.0\\.1:${port}: attempt ${i + 1} failed \\(ECONNREFUSED\\); `),
      );
    });
    expect(last).toContain(`(${attempts.length} attempts`);
  });
});
