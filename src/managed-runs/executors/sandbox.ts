import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { RunLimits, RunUser } from './executor.js';
import { isWithin } from './working-folder.js';

/** One command of a run, in its working folder. */
export interface SandboxedCommand {
  command: string;
  args: readonly string[];
  cwd: string;
  /** The whole environment of the command: nothing of the runner's is passed on. */
  env: Record<string, string>;
  user?: RunUser;
  limits: RunLimits;
  /** When the run's wall time ends (the run's, not this command's: a run may be several commands). */
  deadline: number;
  /** Each chunk of output, as it comes. Answers false once the output limit is passed. */
  onOutput(chunk: Buffer, stream: 'stdout' | 'stderr'): boolean;
  /** Aborted: the run was cancelled. */
  signal: AbortSignal;
}

export type SandboxEnd =
  | { kind: 'exited'; exitCode: number }
  /** Killed by a signal nobody here sent (the kernel at a limit, or itself). */
  | { kind: 'signalled'; signal: string }
  | { kind: 'limit'; limit: 'time' | 'output'; message: string }
  | { kind: 'cancelled' };

/** Seconds between the runner's own wall-time kill and `timeout`'s, which only acts when the runner is gone. */
const BACKSTOP_SECONDS = 30;

/**
 * The environment of every run command: a fixed allow-list, so that nothing of the runner's own
 * (DATABASE_URL, JWT_SECRET, tokens) reaches workflow code.
 */
export function runEnvironment(workDir: string, tmpDir: string): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: workDir,
    LANG: 'C.UTF-8',
    TMPDIR: tmpDir,
  };
}

/**
 * Runs one command of a run with its limits and resolves how it ended; never rejects for the
 * command's failure (a command that cannot start is `exited` 127).
 *
 * The command runs in a session and process group of its own (`detached`), as `user`, under
 * `prlimit` (address space RUN_MEMORY_MIB, RLIMIT_NPROC for the process count, the size of any
 * file it writes at RUN_MAX_OUTPUT_BYTES, no core files). At the wall-time or output limit, or on
 * cancel, the whole group and every descendant is killed (engines such as cwltool start each tool
 * in a session of its own, out of the group: killProcessTree follows parents instead). Should the runner itself die,
 * `setpriv --pdeathsig TERM` has the kernel tell `timeout`, which passes the signal on to the group
 * and kills it 5 s later; `timeout`'s own limit, a little after the runner's, ends a group whose
 * runner was killed before it could. A process that leaves the tree (a daemon whose parent exited)
 * escapes it but not `killLeftoversOf` after each command, nor the user's RLIMIT_NPROC: README says how
 * to isolate runners further.
 */
export function runSandboxed(command: SandboxedCommand): Promise<SandboxEnd> {
  const remainingMs = command.deadline - Date.now();
  if (remainingMs <= 0) {
    return Promise.resolve(timeLimit(command.limits));
  }
  const { limits } = command;
  const backstop = Math.ceil(remainingMs / 1000) + BACKSTOP_SECONDS;
  const args = [
    '--pdeathsig',
    'TERM',
    '--',
    'timeout',
    '--kill-after=5',
    `${backstop}`,
    'prlimit',
    `--as=${limits.memoryMib * 1024 * 1024}`,
    `--nproc=${limits.maxProcesses}`,
    `--fsize=${limits.maxOutputBytes}`,
    '--core=0',
    '--',
    command.command,
    ...command.args,
  ];
  return new Promise((resolve) => {
    const child = spawn('setpriv', args, {
      cwd: command.cwd,
      env: command.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      uid: command.user?.uid,
      gid: command.user?.gid,
    });
    let ended: SandboxEnd | undefined;
    const killGroup = (why: SandboxEnd): Promise<void> => {
      ended ??= why;
      if (child.pid !== undefined) {
        return killProcessTree(child.pid);
      }
      return Promise.resolve();
    };
    const timer = setTimeout(() => void killGroup(timeLimit(limits)), remainingMs);
    const onAbort = (): void => void killGroup({ kind: 'cancelled' });
    command.signal.addEventListener('abort', onAbort, { once: true });
    if (command.signal.aborted) {
      onAbort();
    }
    const onData =
      (stream: 'stdout' | 'stderr') =>
      (chunk: Buffer): void => {
        if (!command.onOutput(chunk, stream)) {
          void killGroup({
            kind: 'limit',
            limit: 'output',
            message: `output limit: the run wrote more than ${limits.maxOutputBytes} bytes (RUN_MAX_OUTPUT_BYTES)`,
          });
        }
      };
    child.stdout.on('data', onData('stdout'));
    child.stderr.on('data', onData('stderr'));
    child.on('error', () => {
      ended ??= { kind: 'exited', exitCode: 127 };
    });
    // 'close', not 'exit': the output pipes are drained by then (or closed with the group).
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      command.signal.removeEventListener('abort', onAbort);
      // Whatever of the tree is still there (a daemon it left behind) goes with it.
      void killGroup(
        code !== null
          ? { kind: 'exited', exitCode: code }
          : { kind: 'signalled', signal: signal ?? 'unknown' },
      ).then(() => resolve(ended!));
    });
  });
}

function timeLimit(limits: RunLimits): SandboxEnd {
  return {
    kind: 'limit',
    limit: 'time',
    message: `wall-time limit: the run took longer than ${limits.timeoutSeconds} s (RUN_TIMEOUT_SECONDS)`,
  };
}

/** Each live process's parent, uid and process group, from /proc (Linux). */
function processTable(): { pid: number; ppid: number; pgid: number; uid: number }[] {
  // Zombies (state Z) are dead already: only their parent's wait removes them.
  const table: { pid: number; ppid: number; pgid: number; uid: number }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) {
      continue;
    }
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name (field 2) may hold spaces and parentheses: fields follow its last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z' || fields[0] === 'X') {
        continue;
      }
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1);
      table.push({ pid: Number(name), ppid: Number(fields[1]), pgid: Number(fields[2]), uid });
    } catch {
      // Gone while we read.
    }
  }
  return table;
}

/**
 * Kills a process, its process group and all its descendants, also those in sessions of their
 * own: stopped first (SIGSTOP), so that none forks while the tree is read, then killed; repeated
 * until none is left (at most 5 rounds).
 */
export async function killProcessTree(root: number): Promise<void> {
  for (let round = 0; round < 10; round++) {
    const table = processTable();
    const doomed = new Set<number>();
    const group = new Set(table.filter((entry) => entry.pgid === root).map((entry) => entry.pid));
    const queue = [root, ...group];
    while (queue.length > 0) {
      const pid = queue.pop()!;
      if (doomed.has(pid)) {
        continue;
      }
      doomed.add(pid);
      queue.push(...table.filter((entry) => entry.ppid === pid).map((entry) => entry.pid));
    }
    const live = table.filter((entry) => doomed.has(entry.pid));
    if (live.length === 0) {
      return;
    }
    signalAll(
      live.map((entry) => entry.pid),
      'SIGSTOP',
    );
    signalAll(
      live.map((entry) => entry.pid),
      'SIGKILL',
    );
    // A killed process takes a moment to be gone from /proc.
    await sleep(50);
  }
}

/**
 * Kills what a run left behind outside its tree (a daemon whose parent exited): every process of
 * `uid` that still carries the run's environment (a HOME inside the run's folder, runEnvironment) or
 * works inside the run's folder. Other runs of the same user, in this runner or in a copy of it
 * beside, are left alone. Never for uid 0.
 */
export async function killLeftoversOf(uid: number, folder: string): Promise<void> {
  if (uid === 0) {
    return;
  }
  for (let round = 0; round < 10; round++) {
    const pids = processTable()
      .filter((entry) => entry.uid === uid && belongsToRun(entry.pid, folder))
      .map((entry) => entry.pid);
    if (pids.length === 0) {
      return;
    }
    signalAll(pids, 'SIGSTOP');
    signalAll(pids, 'SIGKILL');
    await sleep(50);
  }
}

function belongsToRun(pid: number, folder: string): boolean {
  try {
    // cwltool gives each tool a HOME of its own, inside the run's folder.
    const home = readFileSync(`/proc/${pid}/environ`, 'latin1')
      .split('\0')
      .find((entry) => entry.startsWith('HOME='));
    if (home !== undefined && isWithin(folder, home.slice('HOME='.length))) {
      return true;
    }
    return isWithin(folder, readlinkSync(`/proc/${pid}/cwd`));
  } catch {
    // Gone while we read, or not ours to read.
    return false;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Gone already.
    }
  }
}
