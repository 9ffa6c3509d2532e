import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort } from './mariadb-server.mjs';

const MAIN = 'dist/src/main.js';

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal name) once the process has ended. */
  exited: Promise<number | string>;
  /** Sends a signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** Fails loudly when the build is missing, rather than testing a stale or absent service. */
export function requireBuild(): void {
  if (!existsSync(MAIN)) {
    throw new Error(`${MAIN} is missing: run \`npm run build\` before the process tests (npm test does)`);
  }
}

/**
 * Runs `node dist/src/main.js` (the real entry point), or `command` (`['npm', 'start', …]`), with
 * this environment; waits for /health/ready.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  waitReady = true,
  command: readonly string[] = [process.execPath, MAIN],
): Promise<ServiceProcess> {
  requireBuild();
  const port = env.PORT ?? String(await freePort());
  const [program, ...args] = command;
  const child = spawn(program, args, {
    env: { PATH: process.env.PATH ?? '', ...env, PORT: port },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const url = `http://127.0.0.1:${port}`;
  const service: ServiceProcess = {
    url,
    child,
    output: () => output,
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
      }
      return exited;
    },
  };
  if (waitReady) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) {
        throw new Error(`the service exited with ${child.exitCode} before it was ready:\n${output}`);
      }
      try {
        const response = await fetch(`${url}/health/ready`);
        if (response.status === 200) {
          break;
        }
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        await service.stop('SIGKILL');
        throw new Error(`the service was not ready within 30 s:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return service;
}

/** Runs the CLI (`node dist/src/cli.js …`) and returns its exit code and output. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  input = '',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  requireBuild();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['dist/src/cli.js', ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}
