import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { Injectable } from '@nestjs/common';
import { DomainError } from '../../common/errors/domain-error.js';
import type { AppConfig } from '../../config/app-config.js';
import { ConfigError } from '../../config/config-error.js';
import type { ExecutorSettings } from '../../config/executors-file.js';
import { CrateReader } from '../../crates/index.js';
import { CwltoolEngine } from './engines/cwltool.engine.js';
import { CommandEngine, RunStopped, type EngineResult, type LocalEngine } from './engines/local-engine.js';
import {
  ENGINES,
  isEngineName,
  type EngineAvailability,
  type Executor,
  type ExecutorFactory,
  type RunSpec,
  type RunState,
  type RunUser,
} from './executor.js';
import { OutputTail } from './output-tail.js';
import { killLeftoversOf, runEnvironment, runSandboxed } from './sandbox.js';
import {
  insideFolder,
  prepareWorkingFolder,
  workingFolderName,
  type WorkingFolder,
} from './working-folder.js';

/** The engines a local runner knows how to run, when installed on its machine. */
const LOCAL_ENGINES: readonly LocalEngine[] = [
  new CwltoolEngine(),
  new CommandEngine('planemo', 'planemo', (definition) => ['test', definition]),
  new CommandEngine('snakemake', 'snakemake', (definition) => ['--snakefile', definition, '--cores', '1']),
  new CommandEngine('nextflow', 'nextflow', (definition) => ['run', definition]),
];

/** What the runner keeps of a run's output in memory; the log route serves MAX_LOG_BYTES of it. */
const MAX_TAIL_BYTES = 16 * 1024 * 1024;

interface LocalRun {
  state: RunState;
  tail: OutputTail;
  abort: AbortController;
  folder?: WorkingFolder;
  done: Promise<void>;
}

/**
 * Runs managed runs on the runner's own machine (API.md 17): each in a new working folder with the
 * crate unpacked, every command in the sandbox of sandbox.ts as RUNNER_USER. Runs live in this
 * process only: a handle from another process (a runner that died) is `lost`, and the run starts
 * again.
 */
export class LocalExecutor implements Executor {
  /** Handles carry it, so that a handle of an earlier process of this runner is told apart. */
  private readonly processId = randomUUID();
  private readonly runs = new Map<string, LocalRun>();
  private readonly user: RunUser | undefined;

  constructor(
    readonly name: string,
    private readonly config: AppConfig,
    private readonly reader: CrateReader,
    private readonly engineTable: readonly LocalEngine[] = LOCAL_ENGINES,
  ) {
    this.user = runUserOf(config.managedRuns.runnerUser);
  }

  async engines(): Promise<EngineAvailability[]> {
    const found = await Promise.all(
      this.engineTable.map(async (engine) => ({ engine: engine.name, version: await engine.version() })),
    );
    return found.filter((engine) => engine.version !== null);
  }

  submit(spec: RunSpec): Promise<string> {
    const handle = `${this.processId}/${spec.runId}`;
    const run: LocalRun = {
      state: { state: 'running' },
      tail: new OutputTail(MAX_TAIL_BYTES),
      abort: new AbortController(),
      done: Promise.resolve(),
    };
    this.runs.set(handle, run);
    run.done = this.execute(spec, run).then(
      (result) => {
        run.state = { state: result.outcome, reason: result.reason, exitCode: result.exitCode };
      },
      (error: unknown) => {
        run.state = {
          state: 'error',
          reason: `the runner failed: ${(error as Error).message}`,
          exitCode: null,
        };
      },
    );
    return Promise.resolve(handle);
  }

  poll(handle: string): Promise<RunState> {
    return Promise.resolve(this.runs.get(handle)?.state ?? { state: 'lost' });
  }

  logTail(handle: string, maxBytes: number): Promise<Buffer> {
    return Promise.resolve(this.runs.get(handle)?.tail.bytes(maxBytes) ?? Buffer.alloc(0));
  }

  async cancel(handle: string): Promise<void> {
    const run = this.runs.get(handle);
    run?.abort.abort();
    await run?.done;
  }

  async release(handle: string): Promise<void> {
    const run = this.runs.get(handle);
    if (!run) {
      return;
    }
    run.abort.abort();
    await run.done;
    this.runs.delete(handle);
    if (run.folder) {
      await rm(run.folder.root, { recursive: true, force: true });
    }
  }

  private async execute(spec: RunSpec, run: LocalRun): Promise<EngineResult> {
    const log = (line: string): void => run.tail.push(`[runner] ${line}\n`);
    const error = (reason: string): EngineResult => {
      log(reason);
      return { outcome: 'error', reason, exitCode: null };
    };
    if (!isEngineName(spec.engine)) {
      return error(`the suite's engine '${spec.engine}' is not one of ${ENGINES.join(', ')}`);
    }
    const engine = this.engineTable.find((candidate) => candidate.name === spec.engine);
    const version = engine ? await engine.version() : null;
    if (!engine || version === null) {
      return error(`the engine '${spec.engine}' is not installed on the runner of executor '${this.name}'`);
    }
    if (!spec.definitionPath) {
      return error('the suite has no test definition file');
    }
    const deadline = Date.now() + spec.limits.timeoutSeconds * 1000;
    try {
      run.folder = await prepareWorkingFolder(
        this.config.managedRuns.workDir,
        workingFolderName(spec.runId, spec.claim),
        spec.archivePath,
        this.reader,
        this.config.registry.maxUncompressedBytes,
        this.user,
      );
    } catch (failure) {
      if (failure instanceof DomainError) {
        return error(`the crate cannot be unpacked: ${failure.message}`);
      }
      throw failure;
    }
    const folder = run.folder;
    const definition = await insideFolder(folder.crate, folder.crate, spec.definitionPath);
    if (definition === undefined) {
      return error(
        `the test definition '${spec.definitionPath}' is not a file of the crate (it leaves the crate or does not exist)`,
      );
    }
    log(`running ${engine.name} (${version}) on ${spec.definitionPath}`);
    try {
      return await engine.run({
        folder,
        definition,
        log,
        exec: async (command, args, options = {}) => {
          const end = await runSandboxed({
            command,
            args,
            cwd: options.cwd ?? folder.crate,
            env: runEnvironment(folder.root, folder.tmp),
            user: this.user,
            limits: spec.limits,
            deadline,
            signal: run.abort.signal,
            onOutput: (chunk, stream) => {
              if (stream === 'stdout' && options.stdout) {
                options.stdout(chunk);
              } else {
                run.tail.push(chunk);
              }
              return run.tail.total <= spec.limits.maxOutputBytes;
            },
          });
          // Whatever of the command outlived its tree goes now; other runs of the user stay.
          if (this.user) {
            await killLeftoversOf(this.user.uid, folder.root);
          }
          switch (end.kind) {
            case 'exited':
              return end.exitCode;
            case 'signalled':
              log(`${command} was killed by ${end.signal}`);
              return 128;
            case 'limit':
              throw new RunStopped(end.message);
            case 'cancelled':
              throw new RunStopped('the run was cancelled');
          }
        },
      });
    } catch (failure) {
      if (failure instanceof RunStopped) {
        return error(failure.message);
      }
      throw failure;
    }
  }
}

/** The uid and gid of RUNNER_USER; a runner running as root needs one (API.md 17: an unprivileged user). */
function runUserOf(name: string | undefined): RunUser | undefined {
  if (name === undefined) {
    if (process.getuid?.() === 0) {
      throw new ConfigError(
        'RUNNER_USER',
        'is required when the runner runs as root (workflows never run as root)',
      );
    }
    return undefined;
  }
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
    if (uid === 0) {
      throw new ConfigError('RUNNER_USER', `'${name}' is root: workflows must run as an unprivileged user`);
    }
    return { uid, gid };
  } catch (error) {
    if (error instanceof ConfigError) {
      throw error;
    }
    throw new ConfigError('RUNNER_USER', `'${name}' is not a user of this machine`);
  }
}

/** The `local` executor type of EXECUTORS_FILE; it takes no settings. */
@Injectable()
export class LocalExecutorFactory implements ExecutorFactory {
  readonly type = 'local';

  constructor(private readonly reader: CrateReader) {}

  problemsOf(settings: ExecutorSettings): string[] {
    const extra = Object.keys(settings.options);
    return extra.length > 0
      ? [`executor '${settings.name}': type local takes no settings (${extra.join(', ')})`]
      : [];
  }

  create(settings: ExecutorSettings, config: AppConfig): Executor {
    const problems = this.problemsOf(settings);
    if (problems.length > 0) {
      throw new ConfigError('EXECUTORS_FILE', problems);
    }
    return new LocalExecutor(settings.name, config, this.reader);
  }
}
