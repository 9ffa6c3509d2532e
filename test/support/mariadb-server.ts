import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface MariaDbServer {
  /** mysql://root:…@127.0.0.1:port — the harness's admin account; each app gets its own database. */
  rootUrl: string;
  port: number;
  dir: string;
  pid: number;
  stop(): Promise<void>;
}

function must(command: string, args: string[]): string {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  if (found.status !== 0) {
    throw new Error(
      `${command} is not installed: the MariaDB e2e suite needs it (apt-get install -y mariadb-server)`,
    );
  }
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr || result.stdout}`);
  }
  return result.stdout;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts a throwaway MariaDB in a temporary datadir, on a free loopback port. */
export async function startMariaDb(): Promise<MariaDbServer> {
  const dir = mkdtempSync(join(tmpdir(), 'mariadb-test-'));
  must('mariadb-install-db', [
    '--no-defaults',
    `--datadir=${dir}/data`,
    '--user=root',
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
    '--skip-name-resolve',
  ]);
  const port = await freePort();
  const socket = `${dir}/mysqld.sock`;
  const child: ChildProcess = spawn(
    'mariadbd',
    [
      '--no-defaults',
      `--datadir=${dir}/data`,
      `--socket=${socket}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--pid-file=${dir}/mysqld.pid`,
      `--log-error=${dir}/error.log`,
      '--user=root',
      '--skip-name-resolve',
      '--skip-log-bin',
      '--innodb-log-file-size=8M',
      '--innodb-flush-log-at-trx-commit=2',
      '--max-connections=500',
    ],
    { stdio: 'ignore', detached: true },
  );
  child.unref();
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ping = spawnSync('mariadb-admin', ['--no-defaults', `--socket=${socket}`, '-uroot', 'ping'], {
      encoding: 'utf8',
    });
    if (ping.status === 0) {
      break;
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      let log = '';
      try {
        log = readFileSync(`${dir}/error.log`, 'utf8').slice(-2000);
      } catch {
        // no log yet
      }
      throw new Error(`MariaDB did not start: ${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  must('mariadb', [
    '--no-defaults',
    `--socket=${socket}`,
    '-uroot',
    '-e',
    "CREATE USER 'test'@'127.0.0.1' IDENTIFIED BY 'test'; GRANT ALL ON *.* TO 'test'@'127.0.0.1' WITH GRANT OPTION;",
  ]);
  const pid = child.pid ?? 0;
  return {
    rootUrl: `mysql://test:test@127.0.0.1:${port}`,
    port,
    dir,
    pid,
    stop: () => stopMariaDb(pid, dir),
  };
}

/** Stops a server started by startMariaDb and removes its datadir. */
export async function stopMariaDb(pid: number, dir: string): Promise<void> {
  if (pid > 0) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
    const until = Date.now() + 20_000;
    while (Date.now() < until) {
      try {
        process.kill(pid, 0);
      } catch {
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  rmSync(dir, { recursive: true, force: true });
}
