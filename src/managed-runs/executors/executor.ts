import type { ExecutorSettings } from '../../config/executors-file.js';
import type { AppConfig } from '../../config/app-config.js';

/**
 * The engines a managed suite may name (API.md 17): its test definition's engine IRI, lower-cased
 * without `Engine` (`…/test#CwltoolEngine` → `cwltool`), as the registry stores it (2.5).
 */
export const ENGINES = ['cwltool', 'planemo', 'snakemake', 'nextflow'] as const;
export type EngineName = (typeof ENGINES)[number];

export function isEngineName(value: string): value is EngineName {
  return (ENGINES as readonly string[]).includes(value);
}

/** An engine an executor can run, with the version it reports (null when it tells none). */
export interface EngineAvailability {
  engine: EngineName;
  version: string | null;
}

/** The user a run's processes run as. */
export interface RunUser {
  uid: number;
  gid: number;
}

/** The limits of one run (RUN_* settings, API.md 17). */
export interface RunLimits {
  timeoutSeconds: number;
  memoryMib: number;
  maxOutputBytes: number;
  maxProcesses: number;
}

/** Everything an executor needs to run one managed run; taken from the run's row. */
export interface RunSpec {
  /** The run's id in `managed_runs`; its build id is `m-<runId>`. */
  runId: number;
  /**
   * The claim the run runs under (its token): a local run's working folder is named by it, so
   * that a runner sweeping its work folder removes the folders of attempts no claim holds.
   */
  claim: string;
  /** The crate archive on this machine (the crate store's file of the version). */
  archivePath: string;
  /** The suite's test definition, a path in the crate (from its root). */
  definitionPath: string;
  engine: string;
  /**
   * The version's main workflow as a URL another machine can fetch (its TRS descriptor, API.md
   * 10.2), when the registry knows one: for executors that do not unpack the crate themselves.
   */
  workflowUrl: string | null;
  limits: RunLimits;
}

/** A finished run's outcome, in the build statuses' words. */
export type RunOutcome = 'passed' | 'failed' | 'error';

export type RunState =
  | { state: 'queued' | 'running' }
  /** `reason`: one line a person can read (the failing tests, the limit hit, the missing engine). */
  | { state: RunOutcome; reason: string; exitCode: number | null }
  /** The executor knows no such run (its process restarted): the run starts again. */
  | { state: 'lost' };

/**
 * Where managed runs run (API.md 17): one class per executor type (`local`, `wes`), one instance
 * per executor of EXECUTORS_FILE, used by the runner processes only (the API never runs workflow
 * code). A run is submitted once, then polled until it ends; the runner stores the handle with the
 * run, so that another runner that takes the run over (its claim ran out) polls the same run where
 * the executor keeps it beyond a process (`wes`), or submits again where it does not (`local`
 * answers `lost`).
 */
export interface Executor {
  /** The executor's name in EXECUTORS_FILE (`local`, or the operator's). */
  readonly name: string;

  /** The engines this executor can run here now, probed (a runner reports them for GET /executors). */
  engines(): Promise<EngineAvailability[]>;

  /**
   * Starts a run; resolves its handle (at most 255 characters) once the executor has it. Rejects
   * only for trouble of the executor itself (unreachable, refused): a run it cannot run (an engine
   * it lacks, a bad crate) is accepted and then polled as `error`.
   */
  submit(spec: RunSpec): Promise<string>;

  /** The run's state now; never rejects for a run that failed, only when the executor cannot be asked. */
  poll(handle: string): Promise<RunState>;

  /** The last `maxBytes` of the run's output (engine and tests), as far as it has one. */
  logTail(handle: string, maxBytes: number): Promise<Buffer>;

  /** Stops the run (its whole process tree or the remote run); a run that ended already is left as it is. */
  cancel(handle: string): Promise<void>;

  /** Forgets a finished run: removes its working folder (the log tail was read first). */
  release(handle: string): Promise<void>;
}

/** Makes the executors of one type from their EXECUTORS_FILE settings. */
export interface ExecutorFactory {
  /** The `type:` of an executor in EXECUTORS_FILE. */
  readonly type: string;
  /**
   * Each mistake in an executor's settings, one line each naming the executor (none: they are
   * good). Asked at start-up, in the API's copies and in runners alike, so that a bad setting
   * stops start-up instead of the first run on that executor.
   */
  problemsOf(settings: ExecutorSettings): string[];
  /** Throws ConfigError('EXECUTORS_FILE', …) for settings the type does not take (problemsOf). */
  create(settings: ExecutorSettings, config: AppConfig): Executor;
}

export const EXECUTOR_FACTORIES = Symbol('EXECUTOR_FACTORIES');

/** The limits of a run from the settings. */
export function runLimitsOf(config: AppConfig): RunLimits {
  const { timeoutSeconds, memoryMib, maxOutputBytes, maxProcesses } = config.managedRuns;
  return { timeoutSeconds, memoryMib, maxOutputBytes, maxProcesses };
}
