// Plain JavaScript: jest loads globalSetup through CommonJS without the TypeScript transform.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function run(command, args) {
  if (spawnSync('sh', ['-c', `command -v ${command}`]).status !== 0) {
    throw new Error(
      `${command} is not installed: the MariaDB tests need it (apt-get install -y mariadb-server)`,
    );
  }
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr || result.stdout}`);
  }
  return result.stdout;
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts a throwaway MariaDB in a temporary datadir on a free loopback port; about 2 s. */
export async function startMariaDb() {
  const dir = mkdtempSync(join(tmpdir(), 'mariadb-test-'));
  run('mariadb-install-db', [
    '--no-defaults',
    `--datadir=${dir}/data`,
    '--user=root',
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
    '--skip-name-resolve',
  ]);
  const port = await freePort();
  const socket = `${dir}/mysqld.sock`;
  const pid = await launchMariaDb(dir, port);
  run('mariadb', [
    '--no-defaults',
    `--socket=${socket}`,
    '-uroot',
    '-e',
    "CREATE USER 'test'@'127.0.0.1' IDENTIFIED BY 'test'; GRANT ALL ON *.* TO 'test'@'127.0.0.1' WITH GRANT OPTION;",
  ]);
  return { rootUrl: `mysql://test:test@127.0.0.1:${port}`, port, dir, pid };
}

/**
 * Runs mariadbd on a datadir made by startMariaDb and waits until it answers; returns its pid.
 * Also restarts a server the test killed, on the same data and port.
 */
export async function launchMariaDb(dir, port) {
  const socket = `${dir}/mysqld.sock`;
  const child = spawn(
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
      '--max-connections=1000',
    ],
    { stdio: 'ignore', detached: true },
  );
  child.unref();
  const deadline = Date.now() + 30_000;
  while (spawnSync('mariadb-admin', ['--no-defaults', `--socket=${socket}`, '-uroot', 'ping']).status !== 0) {
    if (Date.now() > deadline || child.exitCode !== null) {
      let log = '';
      try {
        log = readFileSync(`${dir}/error.log`, 'utf8').slice(-2000);
      } catch {
        // no log written yet
      }
      throw new Error(`MariaDB did not start: ${log}`);
    }
    await sleep(200);
  }
  return child.pid;
}

async function exited(pid, timeoutMs) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await sleep(100);
  }
  return false;
}

/** Kills a server at once (SIGKILL: no shutdown, as in a crash) and waits until it is gone; keeps its datadir. */
export async function killMariaDb(pid) {
  process.kill(pid, 'SIGKILL');
  if (!(await exited(pid, 10_000))) {
    throw new Error(`MariaDB ${pid} did not exit after SIGKILL`);
  }
}

/** Stops a server started by startMariaDb and removes its datadir. */
export async function stopMariaDb(pid, dir) {
  if (pid > 0) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
    if (!(await exited(pid, 20_000))) {
      // Never remove the datadir under a live server.
      process.kill(pid, 'SIGKILL');
      await exited(pid, 5_000);
    }
  }
  rmSync(dir, { recursive: true, force: true });
}
