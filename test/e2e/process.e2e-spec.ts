import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseTestEnv, createTestDatabase, testDatabase } from '../support/create-test-app.js';
import { runCli, startServiceProcess, type ServiceProcess } from '../support/service-process.js';

describe(`the built service as a process (${testDatabase()})`, () => {
  let dataDir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'process-'));
    database = await createTestDatabase(dataDir);
    env = { ...baseTestEnv(dataDir, database.url), NODE_ENV: 'production', LOG_LEVEL: 'info' };
  });

  afterAll(async () => {
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('logs JSON lines that never hold a password or token, and exits 0 on SIGTERM', async () => {
    const service: ServiceProcess = await startServiceProcess(env);
    const login = await fetch(`${service.url}/api/v1/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: env.ADMIN_USERNAME, password: env.ADMIN_PASSWORD }),
    });
    expect(login.status).toBe(200);
    const { token } = (await login.json()) as { token: string };
    const calls = [
      fetch(`${service.url}/users/current`, { headers: { authorization: `Bearer ${token}` } }),
      fetch(`${service.url}/users/current`, { headers: { 'x-auth-token': token } }),
      fetch(`${service.url}/users/current`, { headers: { cookie: `session=${token}` } }),
      fetch(`${service.url}/api/v1/nodes?auth_token=${token}`),
      fetch(`${service.url}/api/v1/auth`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: env.ADMIN_USERNAME, password: 'a-wrong-password' }),
      }),
    ];
    await Promise.all(calls);

    expect(await service.stop('SIGTERM')).toBe(0);
    const output = service.output();
    expect(output).not.toContain(token);
    expect(output).not.toContain(token.split('.')[2]);
    expect(output).not.toContain(env.ADMIN_PASSWORD);
    expect(output).not.toContain('a-wrong-password');
    const lines = output.trim().split('\n');
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) {
      expect(() => JSON.parse(line) as unknown).not.toThrow();
    }
    expect(output).toContain('"url":"/users/current"');
    expect(output).toMatch(/"reqId":"[0-9a-f-]{36}"|"id":"[0-9a-f-]{36}"/);
  });

  it.each([
    [{ PORT: 'abc' }, /^Invalid setting PORT: must be an integer between 0 and 65535\n$/],
    [{ JWT_SECRET: '' }, /^Invalid setting JWT_SECRET: is required when NODE_ENV=production\n$/],
    [{ DATABASE_URL: 'postgres://x' }, /^Invalid setting DATABASE_URL: .+\n$/],
    [{ REFRESH_INTERVAL_SECONDS: '-1' }, /^Invalid setting REFRESH_INTERVAL_SECONDS: .+\n$/],
    [{ CLOUDS_FILE: '/nonexistent/clouds.yaml' }, /^Invalid setting CLOUDS_FILE: cannot read .+\n$/],
    [{ TRUST_PROXY: 'foo' }, /^Invalid setting TRUST_PROXY: 'foo' is not .+\n$/],
  ])('stops start-up with one line naming a bad setting (%o)', async (bad, message) => {
    const service = await startServiceProcess({ ...env, ...bad }, false);
    expect(await service.exited).toBe(1);
    expect(service.output()).toMatch(message);
  });

  it('creates a user from the command line with the password from standard input', async () => {
    const created = await runCli(
      ['users:create', '--username', 'cli-agent', '--role', 'agent'],
      env,
      'cli-password-1\n',
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^created user cli-agent \(id \d+, roles agent\)\n$/);

    const refused = await runCli(['users:create', '--username', 'cli-agent'], env, 'cli-password-1\n');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe("error: The username 'cli-agent' is taken\n");

    const short = await runCli(['users:create', '--username', 'x'], env, 'short\n');
    expect(short.code).toBe(1);

    const service = await startServiceProcess(env);
    try {
      const login = await fetch(`${service.url}/api/v1/auth`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'cli-agent', password: 'cli-password-1' }),
      });
      expect(login.status).toBe(200);
      expect(((await login.json()) as { user: { roles: string[] } }).user.roles).toEqual(['agent']);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });

  describe('on an empty database', () => {
    let emptyDir: string;
    let empty: Awaited<ReturnType<typeof createTestDatabase>>;

    beforeEach(async () => {
      emptyDir = mkdtempSync(join(tmpdir(), 'process-empty-'));
      empty = await createTestDatabase(emptyDir);
    });

    afterEach(async () => {
      await empty.drop();
      rmSync(emptyDir, { recursive: true, force: true });
    });

    it('creates admin with a random password written to stderr only, and that password logs in', async () => {
      const rest: Record<string, string> = {
        ...baseTestEnv(emptyDir, empty.url),
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
      };
      delete rest.ADMIN_USERNAME;
      delete rest.ADMIN_PASSWORD;
      const service = await startServiceProcess(rest, false);
      let stderr = '';
      service.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      try {
        const line = /^Bootstrap admin 'admin' created with password (\S+) \(shown once; change it\)$/m;
        const deadline = Date.now() + 30_000;
        while (!line.test(stderr) && Date.now() < deadline && service.child.exitCode === null) {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const password = line.exec(stderr)?.[1];
        expect(password).toEqual(expect.any(String));
        const login = await fetch(`${service.url}/api/v1/auth`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'admin', password }),
        });
        expect(login.status).toBe(200);
        expect(await service.stop()).toBe(0);
        // Only that one line carries it: the structured log never does.
        const logged = service.output().replace(line, '');
        expect(logged).not.toContain(password);
      } finally {
        await service.stop('SIGKILL');
      }
    });

    it('creates only the requested user from the command line, and never logs the passwords of /api/v1/users', async () => {
      const emptyEnv = { ...baseTestEnv(emptyDir, empty.url), NODE_ENV: 'production', LOG_LEVEL: 'info' };
      const created = await runCli(
        ['users:create', '--username', 'cli-admin', '--role', 'admin'],
        emptyEnv,
        'cli-admin-password\n',
      );
      expect(created.code).toBe(0);
      expect(created.stdout + created.stderr).not.toContain('Bootstrap admin');

      const service = await startServiceProcess(emptyEnv);
      try {
        const login = await fetch(`${service.url}/api/v1/auth`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'cli-admin', password: 'cli-admin-password' }),
        });
        expect(login.status).toBe(200);
        const auth = {
          authorization: `Bearer ${((await login.json()) as { token: string }).token}`,
          'content-type': 'application/json',
        };
        const listed = await fetch(`${service.url}/api/v1/users`, { headers: auth });
        expect(listed.status).toBe(200);
        const users = (await listed.json()) as { items: { username: string }[] };
        expect(users.items.map((user) => user.username)).toEqual(['cli-admin']);

        const posted = await fetch(`${service.url}/api/v1/users`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ username: 'logged-user', password: 'posted-secret-1' }),
        });
        expect(posted.status).toBe(201);
        const { id } = (await posted.json()) as { id: number };
        const patched = await fetch(`${service.url}/api/v1/users/${id}`, {
          method: 'PATCH',
          headers: auth,
          body: JSON.stringify({ password: 'patched-secret-2' }),
        });
        expect(patched.status).toBe(200);
      } finally {
        expect(await service.stop()).toBe(0);
      }
      const output = service.output();
      expect(output).not.toContain('Bootstrap admin');
      expect(output).not.toContain('posted-secret-1');
      expect(output).not.toContain('patched-secret-2');
      expect(output).not.toContain('cli-admin-password');
    });
  });
});
