import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXAMPLE_ADMIN_PASSWORD } from '../../src/auth/admin-bootstrap.js';
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

  // npm runs a script in a shell; without `exec` the shell took npm's signal and left the server
  // listening. `--ignore-scripts` skips prestart's build-if-changed, which would compile dist/ anew
  // under the other process tests (tsc leaves no stamp); `start` itself still runs.
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'stops listening and exits 0 when `npm start` gets %s',
    async (signal) => {
      const service = await startServiceProcess(env, true, ['npm', 'start', '--ignore-scripts']);
      expect(await service.stop(signal)).toBe(0);
      expect(service.output()).toContain(`${signal} received, shutting down`);
      await expect(fetch(`${service.url}/health/live`)).rejects.toThrow();
    },
    60_000,
  );

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

  it('stops with one line naming PORT, exit 1, when another process holds the port', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, resolve));
    const { port } = holder.address() as AddressInfo;
    try {
      const service = await startServiceProcess({ ...env, PORT: String(port) }, false);
      expect(await service.exited).toBe(1);
      expect(service.output()).toBe(
        `Invalid setting PORT: ${port} is in use by another process; stop it or choose another PORT\n`,
      );
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
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
  }, 90_000);

  it('prints the CLI usage on --help (exit 0) and names an unknown command (exit 2)', async () => {
    const help = await runCli(['--help'], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run cli -- <command>$/m);
    expect(help.stdout).toMatch(/^ {2}users:passwd --username NAME /m);
    const unknown = await runCli(['users:frobnicate'], {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^unknown command 'users:frobnicate'\nUsage: /);
    const none = await runCli([], {});
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^no command given\nUsage: /);
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

    it('refuses the example password in production with one line naming ADMIN_PASSWORD; elsewhere creates the bootstrap admin after a user made with the CLI, warns about it, and says so either way', async () => {
      expect(readFileSync('.env.example', 'utf8')).toMatch(
        new RegExp(`^ADMIN_PASSWORD=${EXAMPLE_ADMIN_PASSWORD}$`, 'm'),
      );
      const production = {
        ...baseTestEnv(emptyDir, empty.url),
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        ADMIN_USERNAME: 'admin',
        ADMIN_PASSWORD: EXAMPLE_ADMIN_PASSWORD,
      };
      const refused = await startServiceProcess(production, false);
      expect(await refused.exited).toBe(1);
      expect(refused.output()).toBe(
        `Invalid setting ADMIN_PASSWORD: is the placeholder '${EXAMPLE_ADMIN_PASSWORD}' of an example file; ` +
          'production needs a secret of your own\n',
      );
      // Outside production (a fresh clone's `npm start`) it is accepted, with a warning.
      const emptyEnv = { ...production, NODE_ENV: 'test' };
      const created = await runCli(
        ['users:create', '--username', 'early-bot', '--role', 'agent'],
        emptyEnv,
        'bot-password-1\n',
      );
      expect(created.code).toBe(0);

      const first = await startServiceProcess(emptyEnv);
      try {
        const login = await fetch(`${first.url}/api/v1/auth`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'admin', password: EXAMPLE_ADMIN_PASSWORD }),
        });
        expect(login.status).toBe(200);
        expect(((await login.json()) as { user: { roles: string[] } }).user.roles).toEqual(['admin']);
      } finally {
        expect(await first.stop()).toBe(0);
      }
      const messages = (output: string) =>
        output
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { msg: string; level: number; context?: string })
          .filter((entry) => entry.context === 'AdminBootstrap')
          .map((entry) => [entry.level, entry.msg]);
      expect(messages(first.output())).toEqual([
        [
          40,
          "ADMIN_PASSWORD is still the example's from .env.example: set your own in .env (or the environment)",
        ],
        [
          30,
          "created the bootstrap admin 'admin' from ADMIN_USERNAME/ADMIN_PASSWORD (no active admin existed)",
        ],
      ]);

      const second = await startServiceProcess({ ...production, ADMIN_PASSWORD: 'a-password-of-my-own' });
      expect(await second.stop()).toBe(0);
      expect(messages(second.output())).toEqual([[30, 'bootstrap admin not needed: 1 active admin']]);
    }, 90_000);

    it('manages users from the command line: list, passwd from standard input, disable', async () => {
      const cliEnv = { ...baseTestEnv(emptyDir, empty.url), NODE_ENV: 'production', LOG_LEVEL: 'info' };
      for (const username of ['cli-a', 'cli-b']) {
        expect(
          (await runCli(['users:create', '--username', username], cliEnv, 'first-password\n')).code,
        ).toBe(0);
      }
      const passwd = await runCli(['users:passwd', '--username', 'cli-a'], cliEnv, 'second-password\n');
      expect(passwd).toEqual({ code: 0, stdout: 'changed the password of cli-a\n', stderr: '' });
      const short = await runCli(['users:passwd', '--username', 'cli-a'], cliEnv, 'short\n');
      expect(short.code).toBe(1);
      expect(short.stderr).toContain('at least 8 characters');
      const nobody = await runCli(['users:passwd', '--username', 'nobody'], cliEnv, 'third-password\n');
      expect({ code: nobody.code, stderr: nobody.stderr }).toEqual({
        code: 1,
        stderr: "error: no user 'nobody'\n",
      });
      const disabled = await runCli(['users:disable', '--username', 'cli-b'], cliEnv);
      expect(disabled.code).toBe(0);

      const listed = await runCli(['users:list'], cliEnv);
      expect(listed.code).toBe(0);
      const rows = listed.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/));
      expect(rows[0]).toEqual(['id', 'username', 'roles', 'state']);
      expect(rows.slice(1).map((row) => row.slice(1))).toEqual(
        expect.arrayContaining([
          ['cli-a', 'user', 'active'],
          ['cli-b', 'user', 'disabled'],
        ]),
      );

      const service = await startServiceProcess(cliEnv);
      try {
        const login = (username: string, password: string) =>
          fetch(`${service.url}/api/v1/auth`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ username, password }),
          }).then((response) => response.status);
        expect(await login('cli-a', 'second-password')).toBe(200);
        expect(await login('cli-a', 'first-password')).toBe(403);
        expect(await login('cli-b', 'first-password')).toBe(403);
      } finally {
        expect(await service.stop()).toBe(0);
      }
      // Six CLI runs and a service start, each a Node process building its module graph.
    }, 120_000);

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
