import { Injectable } from '@nestjs/common';
import { isRecord } from '../../common/is-record.js';
import type { AppConfig } from '../../config/app-config.js';
import { ConfigError } from '../../config/config-error.js';
import type { ExecutorSettings } from '../../config/executors-file.js';
import { CrateReader } from '../../crates/index.js';
import {
  ENGINES,
  isEngineName,
  type EngineAvailability,
  type EngineName,
  type Executor,
  type ExecutorFactory,
  type RunSpec,
  type RunState,
} from './executor.js';
import { OutputTail } from './output-tail.js';
import { WesClient, WesError, type WesEndpoint } from './wes-client.js';
import { planWesRuns, type WesRunRequest } from './wes-runs.js';

/**
 * The `workflow_type`s of `GET /service-info` each engine runs as (compared without case): CWL as
 * Toil, cwltool, Cromwell and Sapporo name it; Galaxy workflows (whose tests planemo runs); the
 * short names of Sapporo and WESkit (`SMK`, `NFL`, as TRS spells them) and the long ones.
 */
export const WES_WORKFLOW_TYPES: Readonly<Record<EngineName, readonly string[]>> = {
  cwltool: ['CWL'],
  planemo: ['GALAXY'],
  snakemake: ['SMK', 'SNAKEMAKE'],
  nextflow: ['NFL', 'NEXTFLOW'],
};

/** WES 1.1's run states (State), as a managed run's. */
type WesState =
  | 'UNKNOWN'
  | 'QUEUED'
  | 'INITIALIZING'
  | 'RUNNING'
  | 'PAUSED'
  | 'COMPLETE'
  | 'EXECUTOR_ERROR'
  | 'SYSTEM_ERROR'
  | 'CANCELED'
  | 'CANCELING'
  | 'PREEMPTED';

/** How each WES state reads for the build: unfinished, or the outcome and why. */
const STATES: Readonly<
  Record<WesState, 'queued' | 'running' | { outcome: 'passed' | 'failed' | 'error'; why: string }>
> = {
  QUEUED: 'queued',
  INITIALIZING: 'queued',
  RUNNING: 'running',
  PAUSED: 'running',
  // The endpoint cannot tell for now: asked again at the next refresh.
  UNKNOWN: 'running',
  COMPLETE: { outcome: 'passed', why: 'COMPLETE' },
  EXECUTOR_ERROR: { outcome: 'failed', why: 'EXECUTOR_ERROR (the workflow failed)' },
  SYSTEM_ERROR: { outcome: 'error', why: "SYSTEM_ERROR (the WES endpoint's own failure)" },
  CANCELED: { outcome: 'error', why: 'CANCELED (the run was cancelled)' },
  CANCELING: { outcome: 'error', why: 'CANCELING (the run was cancelled)' },
  PREEMPTED: { outcome: 'error', why: "PREEMPTED (the endpoint's system stopped it)" },
};

function isWesState(value: string): value is WesState {
  return Object.prototype.hasOwnProperty.call(STATES, value);
}

/** Runs whose test expects a failure (cwltest's `should_fail`) carry this before their id in the handle. */
const SHOULD_FAIL = 'x:';
/** A handle for a run the executor refused before sending anything (its reason follows). */
const REFUSED = 'refused:';
const MAX_HANDLE = 255;
/** Task logs read for a run whose own log points to no output: the last ones, where a failure shows. */
const MAX_TASK_LOGS = 5;

interface HandleRun {
  runId: string;
  shouldFail: boolean;
}

/**
 * A GA4GH Workflow Execution Service 1.1 endpoint as an executor (API.md 17): each test of the
 * suite is one WES run of the version's TRS descriptor URL (`POST /runs`, multipart as WES 1.1
 * defines it), polled with `GET /runs/{run_id}/status`, its log read from `GET /runs/{run_id}`
 * and cancelled with `POST /runs/{run_id}/cancel`. The handle is the WES run ids: another runner
 * that takes the run over polls the same runs. Nothing is kept here, so release does nothing.
 */
export class WesExecutor implements Executor {
  private readonly client: WesClient;

  constructor(
    readonly name: string,
    endpoint: WesEndpoint,
    private readonly config: AppConfig,
    private readonly reader: CrateReader,
  ) {
    this.client = new WesClient(endpoint);
  }

  /**
   * The engines whose workflow types `GET /service-info` lists (WES_WORKFLOW_TYPES), each with the
   * type and its versions as the version (`CWL v1.0, v1.2`). Rejects with a WesError when the
   * endpoint cannot be asked or its answer is not a ServiceInfo.
   */
  async engines(): Promise<EngineAvailability[]> {
    const abilities = abilitiesOf(await this.client.serviceInfo(), this.client.host);
    const found: EngineAvailability[] = [];
    for (const engine of ENGINES) {
      const type = typeFor(engine, abilities);
      if (type !== undefined) {
        found.push({ engine, version: `${type.name} ${type.versions.join(', ')}`.trim() });
      }
    }
    return found;
  }

  /**
   * Sends one WES run per test. A suite the endpoint cannot run (no TRS URL, an engine whose type
   * it does not list, a definition that is not a test list) is not sent: its handle polls as
   * `error` with the reason. Rejects with a WesError when the endpoint cannot be asked or refuses
   * (the runner tries again later); runs sent before a refusal are cancelled first.
   */
  async submit(spec: RunSpec): Promise<string> {
    const plan = await planWesRuns(spec, this.reader, this.config.registry.maxUncompressedBytes);
    if (plan.kind === 'refused') {
      return refusedHandle(plan.reason);
    }
    if (!isEngineName(spec.engine)) {
      return refusedHandle(`the suite's engine '${spec.engine}' is not one of ${ENGINES.join(', ')}`);
    }
    const abilities = abilitiesOf(await this.client.serviceInfo(), this.client.host);
    const type = typeFor(spec.engine, abilities);
    if (type === undefined) {
      const listed = abilities.types.map((known) => known.name).join(', ') || 'none';
      return refusedHandle(
        `the WES endpoint of executor '${this.name}' runs no ${WES_WORKFLOW_TYPES[spec.engine].join('/')} workflows (it runs: ${listed})`,
      );
    }
    const version = newest(type.versions);
    if (version === undefined) {
      return refusedHandle(`the WES endpoint of executor '${this.name}' lists no version of ${type.name}`);
    }
    const sent: HandleRun[] = [];
    try {
      for (const run of plan.runs) {
        const form = runForm(run, spec, type.name, version, type.engine);
        sent.push({ runId: await this.client.runWorkflow(form), shouldFail: run.shouldFail });
      }
    } catch (error) {
      await this.cancelQuietly(sent);
      throw error;
    }
    const handle = sent
      .map((run) => `${run.shouldFail ? SHOULD_FAIL : ''}${encodeURIComponent(run.runId)}`)
      .join(' ');
    if (handle.length > MAX_HANDLE) {
      await this.cancelQuietly(sent);
      return refusedHandle(
        `the WES endpoint's run ids of the ${sent.length} tests are longer than a run's handle keeps (${MAX_HANDLE} characters)`,
      );
    }
    return handle;
  }

  /**
   * The runs' states together: `lost` when the endpoint knows one of them no more (404; the others
   * are cancelled, the run starts again), unfinished while one is, else `error` when one ended so,
   * `failed` when one failed its test, else `passed`. Rejects with a WesError when the endpoint
   * cannot be asked or answers a state WES does not have.
   */
  async poll(handle: string): Promise<RunState> {
    const refusal = refusalOf(handle);
    if (refusal !== undefined) {
      return { state: 'error', reason: refusal, exitCode: null };
    }
    const runs = runsOf(handle);
    if (runs.length === 0) {
      return { state: 'lost' };
    }
    const states = await Promise.all(runs.map((run) => this.client.runStatus(run.runId)));
    if (states.includes(undefined)) {
      await this.cancelQuietly(runs.filter((_run, index) => states[index] !== undefined));
      return { state: 'lost' };
    }
    const read = states.map((state = '', index) => {
      if (!isWesState(state)) {
        throw new WesError(
          `${this.client.host} answered the state '${state.slice(0, 40)}' for run ${runs[index].runId}, which WES 1.1 does not have`,
        );
      }
      return STATES[state];
    });
    if (read.some((state) => state === 'running')) {
      return { state: 'running' };
    }
    if (read.some((state) => state === 'queued')) {
      // Tests that ended already make the suite running, not queued.
      return { state: read.every((state) => state === 'queued') ? 'queued' : 'running' };
    }
    const ended = read.map((state, index) => {
      const { outcome, why } = state as { outcome: 'passed' | 'failed' | 'error'; why: string };
      const run = runs[index];
      const label =
        runs.length === 1 ? `the WES run ${run.runId}` : `test ${index + 1} (WES run ${run.runId})`;
      if (run.shouldFail && outcome !== 'error') {
        return outcome === 'passed'
          ? { outcome: 'failed' as const, line: `${label} is COMPLETE where the test expects a failure` }
          : { outcome: 'passed' as const, line: `${label} failed as the test expects` };
      }
      return { outcome, line: `${label}: ${why}` };
    });
    for (const outcome of ['error', 'failed'] as const) {
      const lines = ended.filter((run) => run.outcome === outcome).map((run) => run.line);
      if (lines.length > 0) {
        return { state: outcome, reason: lines.join('; ').slice(0, 500), exitCode: null };
      }
    }
    return {
      state: 'passed',
      reason: runs.length === 1 ? `${ended[0].line}` : `all ${runs.length} tests' WES runs are COMPLETE`,
      exitCode: 0,
    };
  }

  /**
   * The last `maxBytes` of every run's log: its state, `system_logs`, and the tails of the
   * `stdout` and `stderr` URLs of its `run_log` (of its last task logs when the run log names
   * none). A log URL that cannot be read is a line saying why. Rejects with a WesError when
   * `GET /runs/{run_id}` cannot be asked.
   */
  async logTail(handle: string, maxBytes: number): Promise<Buffer> {
    const tail = new OutputTail(Math.max(0, maxBytes));
    const refusal = refusalOf(handle);
    if (refusal !== undefined) {
      tail.push(`[wes] ${refusal}\n`);
      return tail.bytes();
    }
    for (const run of runsOf(handle)) {
      const answer = await this.client.runLog(run.runId);
      if (answer.kind === 'not_found') {
        tail.push(`[wes] run ${run.runId}: the endpoint knows it no more (404)\n`);
        continue;
      }
      const log = answer.body;
      tail.push(`[wes] run ${run.runId}: ${typeof log.state === 'string' ? log.state : 'no state'}\n`);
      const logs = [isRecord(log.run_log) ? log.run_log : {}];
      if (!hasOutput(logs[0]) && Array.isArray(log.task_logs)) {
        logs.push(...log.task_logs.filter(isRecord).filter(hasOutput).slice(-MAX_TASK_LOGS));
      }
      for (const entry of logs) {
        await this.pushLog(tail, entry, maxBytes);
      }
    }
    return tail.bytes();
  }

  /** Cancels every run of the handle; runs the endpoint knows no more are left as they are. */
  async cancel(handle: string): Promise<void> {
    if (refusalOf(handle) !== undefined) {
      return;
    }
    for (const run of runsOf(handle)) {
      await this.client.cancelRun(run.runId);
    }
  }

  /** The endpoint keeps its runs; nothing of them is here. */
  release(): Promise<void> {
    return Promise.resolve();
  }

  private async pushLog(tail: OutputTail, log: Record<string, unknown>, maxBytes: number): Promise<void> {
    const name = typeof log.name === 'string' ? log.name : undefined;
    if (name !== undefined) {
      tail.push(`[wes] ${name}${typeof log.exit_code === 'number' ? ` (exit ${log.exit_code})` : ''}\n`);
    }
    if (Array.isArray(log.system_logs)) {
      for (const line of log.system_logs) {
        if (typeof line === 'string') {
          tail.push(`[wes] ${line}\n`);
        }
      }
    }
    for (const stream of ['stdout', 'stderr'] as const) {
      const location = log[stream];
      if (typeof location !== 'string' || location === '') {
        continue;
      }
      try {
        tail.push(await this.client.logTail(location, maxBytes));
      } catch (error) {
        if (!(error instanceof WesError)) {
          throw error;
        }
        tail.push(`[wes] its ${stream} could not be read: ${error.message}\n`);
      }
    }
  }

  /** Cancels runs that are of no use any more; the endpoint's trouble then is not the caller's. */
  private async cancelQuietly(runs: HandleRun[]): Promise<void> {
    await Promise.allSettled(runs.map((run) => this.client.cancelRun(run.runId)));
  }
}

function hasOutput(log: Record<string, unknown>): boolean {
  return typeof log.stdout === 'string' || typeof log.stderr === 'string';
}

function refusedHandle(reason: string): string {
  return `${REFUSED} ${reason}`.slice(0, MAX_HANDLE);
}

function refusalOf(handle: string): string | undefined {
  return handle.startsWith(REFUSED) ? handle.slice(REFUSED.length).trim() : undefined;
}

function runsOf(handle: string): HandleRun[] {
  const runs: HandleRun[] = [];
  for (const token of handle.split(' ').filter((part) => part !== '')) {
    const shouldFail = token.startsWith(SHOULD_FAIL);
    try {
      runs.push({
        runId: decodeURIComponent(shouldFail ? token.slice(SHOULD_FAIL.length) : token),
        shouldFail,
      });
    } catch {
      return [];
    }
  }
  return runs;
}

interface WorkflowType {
  /** As the endpoint spells it. */
  name: string;
  versions: string[];
  /** The endpoint's workflow engine of the same name as ours (Sapporo needs one named), if any. */
  engine?: string;
}

/** What a ServiceInfo says the endpoint runs; a WesError when it is not one. */
interface ServiceAbilities {
  types: { name: string; versions: string[] }[];
  engines: string[];
}

function abilitiesOf(info: Record<string, unknown>, host: string): ServiceAbilities {
  const types = info.workflow_type_versions;
  if (!isRecord(types)) {
    throw new WesError(`the service-info of ${host} is not WES 1.1's (it has no workflow_type_versions)`);
  }
  return {
    types: Object.entries(types).map(([name, value]) => {
      const listed = isRecord(value) ? value.workflow_type_version : undefined;
      const versions = Array.isArray(listed)
        ? listed.filter((item): item is string => typeof item === 'string')
        : [];
      return { name, versions };
    }),
    engines: isRecord(info.workflow_engine_versions) ? Object.keys(info.workflow_engine_versions) : [],
  };
}

/** The type an engine runs as, with the endpoint's engine of that name when it lists one. */
function typeFor(engine: EngineName, abilities: ServiceAbilities): WorkflowType | undefined {
  const wanted = WES_WORKFLOW_TYPES[engine];
  const type = abilities.types.find((candidate) => wanted.includes(candidate.name.toUpperCase()));
  if (type === undefined) {
    return undefined;
  }
  return { ...type, engine: abilities.engines.find((name) => name.toLowerCase() === engine) };
}

/** The newest of a type's versions (`v1.2` over `v1.0`, `DSL2` over `1.0`: compared as numbers where they are). */
function newest(versions: string[]): string | undefined {
  return [...versions].sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).at(-1);
}

/** The multipart form of one run (WES 1.1 RunWorkflow): JSON members as text, input files attached. */
function runForm(
  run: WesRunRequest,
  spec: RunSpec,
  type: string,
  version: string,
  engine: string | undefined,
): FormData {
  const form = new FormData();
  form.append('workflow_url', run.workflowUrl);
  form.append('workflow_type', type);
  form.append('workflow_type_version', version);
  form.append('workflow_params', JSON.stringify(run.params));
  form.append('tags', JSON.stringify({ managed_run: `m-${spec.runId}`, test: run.name }));
  if (engine !== undefined) {
    form.append('workflow_engine', engine);
  }
  for (const file of run.attachments) {
    form.append('workflow_attachment', new Blob([file.data]), file.filename);
  }
  return form;
}

/** The settings a `wes` executor takes. */
const SETTINGS = ['url', 'token', 'username', 'password'];

/**
 * The `wes` executor type of EXECUTORS_FILE: `url` (the WES API's base, `…/ga4gh/wes/v1`) and
 * credentials as TESTING_SERVICES_FILE gives them: `token` (sent as a Bearer token) or `username`
 * and `password` (HTTP Basic). Calls are bounded by UPSTREAM_TIMEOUT_SECONDS.
 */
@Injectable()
export class WesExecutorFactory implements ExecutorFactory {
  readonly type = 'wes';

  constructor(private readonly reader: CrateReader) {}

  problemsOf(settings: ExecutorSettings): string[] {
    return wesSettingsProblems(settings.options).map((problem) => `executor '${settings.name}': ${problem}`);
  }

  create(settings: ExecutorSettings, config: AppConfig): Executor {
    const problems = this.problemsOf(settings);
    if (problems.length > 0) {
      throw new ConfigError('EXECUTORS_FILE', problems);
    }
    // Strings by now (problemsOf).
    const [url, token, username, password] = SETTINGS.map((key) => {
      const value = settings.options[key];
      return typeof value === 'string' ? value : undefined;
    });
    const authorization =
      token !== undefined
        ? `Bearer ${token}`
        : username !== undefined && password !== undefined
          ? `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`
          : undefined;
    return new WesExecutor(
      settings.name,
      {
        url: (url ?? '').replace(/\/+$/, ''),
        authorization,
        timeoutMs: config.monitoring.upstreamTimeoutMs,
        allowPrivateLinks: config.registry.allowPrivateNetworkLinks,
      },
      config,
      this.reader,
    );
  }
}

/** Each mistake of a `wes` executor's settings, one line each; none for settings it can be made of. */
function wesSettingsProblems(options: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  const { url, token, username, password } = options;
  const extra = Object.keys(options).filter((key) => !SETTINGS.includes(key));
  if (extra.length > 0) {
    problems.push(`type wes takes ${SETTINGS.join(', ')}, not ${extra.join(', ')}`);
  }
  if (typeof url !== 'string' || !/^https?:\/\/[^/]/.test(url)) {
    problems.push("'url' must be the http(s) URL of a WES API (…/ga4gh/wes/v1)");
  } else {
    let base: URL | undefined;
    try {
      base = new URL(url);
    } catch {
      problems.push("'url' is not a valid URL");
    }
    if (base && (base.search !== '' || base.hash !== '' || base.username !== '' || base.password !== '')) {
      problems.push(
        "'url' must have no query, fragment or credentials (give token, or username and password)",
      );
    }
  }
  for (const [key, value] of Object.entries({ token, username, password })) {
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      problems.push(`'${key}' must be a non-empty string`);
    }
  }
  if (token !== undefined && (username !== undefined || password !== undefined)) {
    problems.push("give either 'token' or 'username' and 'password', not both");
  }
  if ((username === undefined) !== (password === undefined)) {
    problems.push("'username' and 'password' go together");
  }
  return problems;
}
