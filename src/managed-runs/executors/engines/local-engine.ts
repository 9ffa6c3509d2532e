import { execFile } from 'node:child_process';
import type { EngineName, RunOutcome } from '../executor.js';
import type { WorkingFolder } from '../working-folder.js';

/** A command's end that stops the run: a limit was reached, or the run was cancelled. */
export class RunStopped extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RunStopped';
  }
}

/** What an engine gets to run one suite in its working folder. */
export interface EngineContext {
  folder: WorkingFolder;
  /** The test definition file: absolute, inside the unpacked crate (checked). */
  definition: string;
  /**
   * Runs one command in the run's sandbox (its user, limits and scrubbed environment) and resolves
   * its exit code; `stdout`, when given, gets the command's standard output instead of the log.
   * Rejects with RunStopped at a limit or on cancel.
   */
  exec(
    command: string,
    args: readonly string[],
    options?: { cwd?: string; stdout?: (chunk: Buffer) => void },
  ): Promise<number>;
  /** A line of the runner's own in the run's log. */
  log(line: string): void;
}

export interface EngineResult {
  outcome: RunOutcome;
  reason: string;
  exitCode: number | null;
}

/** A workflow engine as a local runner runs it: found on the runner's PATH, or not. */
export interface LocalEngine {
  readonly name: EngineName;
  /** The engine's version when it is installed here, else null. */
  version(): Promise<string | null>;
  run(context: EngineContext): Promise<EngineResult>;
}

/**
 * How long a runner process keeps what `command --version` answered. Each probe starts the
 * engine (`cwltool --version` is about 0.6 s of CPU), once or more per run before; kept, it is
 * paid once a minute per engine, and an engine installed (or removed) while the runner runs is
 * seen within a minute, by runs and by the runner's report alike (GET /executors).
 */
export const PROBE_TTL_MS = 60_000;

const probes = new Map<string, { at: number; version: Promise<string | null> }>();

/**
 * The first line of `command --version` (or of the given arguments), or null when the command is
 * not installed or fails; the answer is kept PROBE_TTL_MS (calls in the meantime, also concurrent
 * ones, share it). Run as the runner (the engine's binary is the operator's, not the crate's).
 */
export function commandVersion(
  command: string,
  args: readonly string[] = ['--version'],
  nowMs: number = Date.now(),
): Promise<string | null> {
  const key = [command, ...args].join('\0');
  const kept = probes.get(key);
  if (kept && nowMs - kept.at < PROBE_TTL_MS) {
    return kept.version;
  }
  const version = probeVersion(command, args);
  probes.set(key, { at: nowMs, version });
  return version;
}

function probeVersion(command: string, args: readonly string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { timeout: 20_000, env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' } },
      (error, stdout, stderr) => {
        if (error) {
          resolve(null);
          return;
        }
        const line = `${stdout}\n${stderr}`.split('\n').find((text) => text.trim() !== '');
        resolve(line?.trim().slice(0, 128) ?? '');
      },
    );
  });
}

/**
 * An engine whose test definition is run by one command, passing when it exits 0 (Snakemake's
 * Snakefile, Planemo's tests, Nextflow's pipeline).
 */
export class CommandEngine implements LocalEngine {
  constructor(
    readonly name: EngineName,
    private readonly command: string,
    private readonly args: (definition: string) => string[],
  ) {}

  version(): Promise<string | null> {
    return commandVersion(this.command);
  }

  async run(context: EngineContext): Promise<EngineResult> {
    const exitCode = await context.exec(this.command, this.args(context.definition));
    return exitCode === 0
      ? { outcome: 'passed', reason: `${this.name} reported every test passed`, exitCode }
      : { outcome: 'failed', reason: `${this.name} exited with ${exitCode}`, exitCode };
  }
}
