import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { requireBuild } from './service-process.js';

const RUNNER = 'dist/src/runner.js';

export interface RunnerProcess {
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal name) once the process has ended. */
  exited: Promise<number | string>;
  /** Sends a signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/**
 * Runs `node dist/src/runner.js` (API.md 17's `npm run runner`) with this environment (at least
 * LOG_LEVEL info: it waits for the start-up line).
 */
export async function startRunnerProcess(env: Record<string, string>): Promise<RunnerProcess> {
  requireBuild();
  const child = spawn(process.execPath, [RUNNER], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const runner: RunnerProcess = {
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
  const deadline = Date.now() + 30_000;
  while (!output.includes('runner started')) {
    if (child.exitCode !== null) {
      throw new Error(`the runner exited with ${child.exitCode} before it started:\n${output}`);
    }
    if (Date.now() > deadline) {
      await runner.stop('SIGKILL');
      throw new Error(`the runner did not start within 30 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return runner;
}

/** The `run m-<id> ended …` lines of a runner's log, by run id (a run recorded twice shows twice). */
export function endedRuns(output: string): number[] {
  return [...output.matchAll(/run m-(\d+) ended (?:passed|failed|error):/g)].map((match) => Number(match[1]));
}

/**
 * The processes of `uid` whose working folder or environment names `folder` (a run's processes:
 * HOME and TMPDIR are in its working folder), as `pid:start time` so that a reused pid is not
 * taken for a survivor. Linux /proc; the test runs as root, which reads every process's.
 */
export function processesIn(uid: number, folder: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) !== uid || /^State:\s+Z/m.test(status)) {
        continue;
      }
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      if (cwd.startsWith(folder) || environ.includes(folder)) {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        found.push(`${entry}:${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]}`);
      }
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Which of `processes` (from processesIn) still run. */
export function stillRunning(processes: readonly string[]): string[] {
  return processes.filter((process) => {
    const [pid, start] = process.split(':');
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields[0] is the state: a zombie has ended, its parent just has not reaped it.
      return fields[19] === start && fields[0] !== 'Z';
    } catch {
      return false;
    }
  });
}
