import { randomUUID } from 'node:crypto';
import { FakeServer, type FakeAnswer, type FakeRequest } from './fake-server.js';

/**
 * A GA4GH Workflow Execution Service 1.1 endpoint (`/ga4gh/wes/v1`): service-info, RunWorkflow
 * as multipart form data, GetRunStatus, GetRunLog and CancelRun, with runs whose state and logs
 * the test sets. Every JSON answer is kept in `replies` with its operation's path in the WES
 * document, for the spec to validate against it (test/support/wes.ts). Logs are served at
 * `/logs/{run_id}/{stdout|stderr}`, with suffix ranges unless `ranges` is off.
 */
export const WES_BASE_PATH = '/ga4gh/wes/v1';

/** A field of a multipart form as the fake read it. */
export interface FormPart {
  name: string;
  filename?: string;
  value: string;
}

export interface FakeWesRun {
  runId: string;
  /** The form as sent, by field (attachments under `workflow_attachment`). */
  parts: FormPart[];
  state: string;
  stdout: string;
  stderr: string;
  exitCode?: number;
  systemLogs: string[];
  /** Task logs, served in the deprecated `task_logs` member. */
  tasks: { id: string; name: string; stdout?: string; stderr?: string }[];
  /** When false, `run_log` names no stdout/stderr URL. */
  runLogUrls: boolean;
}

export interface WesReply {
  /** The operation's path in the WES document, e.g. `/runs/{run_id}/status`. */
  path: string;
  method: 'get' | 'post';
  status: number;
  body: unknown;
}

export class WesFake extends FakeServer {
  readonly runs = new Map<string, FakeWesRun>();
  /** Every JSON answer of a WES operation, in order. */
  readonly replies: WesReply[] = [];
  /** Workflow types and versions `/service-info` lists. */
  workflowTypes: Record<string, string[]> = { CWL: ['v1.0', 'v1.2'], NFL: ['1.0', 'DSL2'] };
  workflowEngines: Record<string, string[]> = { cwltool: ['3.1.20240508115724'], nextflow: ['24.04.4'] };
  /** Answers suffix `Range` requests for logs with 206 (else the whole log, as some servers do). */
  ranges = true;
  /** Log requests: the `Range` and `Authorization` each came with. */
  readonly logRequests: { path: string; range?: string; authorization?: string }[] = [];
  /** Paths (substrings) answered with a 200 whose body is not JSON. */
  readonly garbled: string[] = [];
  /** A state to answer for every status request instead of the run's own: one WES does not have. */
  forcedState?: string;
  /** Runs RunWorkflow accepts; the ones after are refused with a 500 (a full queue). */
  acceptRuns = Infinity;
  /** Where the log URLs of run logs point (default this fake): another server of logs. */
  logOrigin?: string;

  constructor() {
    super('WES');
    // A run's status changes without its URL changing; caching it would hide that.
    this.etags = false;
  }

  get api(): string {
    return `${this.url}${WES_BASE_PATH}`;
  }

  /** The run the endpoint knows as `runId`; throws when it knows none. */
  run(runId: string): FakeWesRun {
    const run = this.runs.get(runId);
    if (!run) {
      throw new Error(`the WES fake has no run ${runId}`);
    }
    return run;
  }

  setState(runId: string, state: string): void {
    this.run(runId).state = state;
  }

  /** Forgets a run, as an endpoint that lost its database does. */
  forget(runId: string): void {
    this.runs.delete(runId);
  }

  /** The form fields of a run with this name, as text. */
  static field(run: FakeWesRun, name: string): string | undefined {
    return run.parts.find((part) => part.name === name)?.value;
  }

  protected route(request: FakeRequest): FakeAnswer {
    const path = `/${request.segments.join('/')}`;
    if (this.garbled.some((fragment) => path.includes(fragment))) {
      return {
        status: 200,
        text: '<html>Service Unavailable</html>',
        headers: { 'content-type': 'text/html' },
      };
    }
    if (request.segments[0] === 'logs') {
      return this.log(request);
    }
    const base = WES_BASE_PATH.split('/').filter((part) => part !== '');
    if (base.some((part, index) => request.segments[index] !== part)) {
      return { status: 404, body: { msg: 'not a WES path', status_code: 404 } };
    }
    const [runs, runId, action, ...rest] = request.segments.slice(base.length);
    const method = request.method === 'POST' ? 'post' : 'get';
    if (runs === 'service-info' && runId === undefined && method === 'get') {
      return this.reply('/service-info', method, 200, this.serviceInfo());
    }
    if (runs !== 'runs' || rest.length > 0) {
      return { status: 404, body: { msg: 'not a WES path', status_code: 404 } };
    }
    if (runId === undefined && method === 'post') {
      return this.runWorkflow(request);
    }
    const template = action === undefined ? '/runs/{run_id}' : `/runs/{run_id}/${action}`;
    const run = runId === undefined ? undefined : this.runs.get(runId);
    if (!run) {
      return this.reply(template, method, 404, { msg: `no run ${runId}`, status_code: 404 });
    }
    if (action === undefined && method === 'get') {
      return this.reply(template, method, 200, this.runLog(run));
    }
    if (action === 'status' && method === 'get') {
      if (this.forcedState !== undefined) {
        // Deliberately outside the document: not kept in `replies`.
        return { status: 200, body: { run_id: run.runId, state: this.forcedState } };
      }
      return this.reply(template, method, 200, { run_id: run.runId, state: run.state });
    }
    if (action === 'cancel' && method === 'post') {
      if (!['COMPLETE', 'EXECUTOR_ERROR', 'SYSTEM_ERROR', 'CANCELED'].includes(run.state)) {
        run.state = 'CANCELING';
      }
      return this.reply(template, method, 200, { run_id: run.runId });
    }
    return { status: 405, body: { msg: 'method not allowed', status_code: 405 } };
  }

  private reply(path: string, method: 'get' | 'post', status: number, body: unknown): FakeAnswer {
    this.replies.push({ path, method, status, body });
    return { status, body };
  }

  private serviceInfo(): Record<string, unknown> {
    return {
      id: 'org.example.wes-fake',
      name: 'WES fake',
      type: { group: 'org.ga4gh', artifact: 'wes', version: '1.1.0' },
      organization: { name: 'Example', url: 'https://example.org' },
      version: '1.0.0',
      workflow_type_versions: Object.fromEntries(
        Object.entries(this.workflowTypes).map(([type, versions]) => [
          type,
          { workflow_type_version: versions },
        ]),
      ),
      supported_wes_versions: ['1.1.0'],
      supported_filesystem_protocols: ['http', 'https', 'file'],
      workflow_engine_versions: Object.fromEntries(
        Object.entries(this.workflowEngines).map(([engine, versions]) => [
          engine,
          { workflow_engine_version: versions },
        ]),
      ),
      default_workflow_engine_parameters: [],
      system_state_counts: { QUEUED: [...this.runs.values()].filter((run) => run.state === 'QUEUED').length },
      auth_instructions_url: 'https://example.org/wes-auth',
      tags: {},
    };
  }

  /** RunWorkflow: a multipart form with the members RunRequest requires, else 400. */
  private runWorkflow(request: FakeRequest): FakeAnswer {
    const parts = parseMultipart(request.headers['content-type'], request.body);
    if (parts === undefined) {
      return this.reply('/runs', 'post', 400, {
        msg: 'the request is not multipart/form-data',
        status_code: 400,
      });
    }
    const field = (name: string): string | undefined => parts.find((part) => part.name === name)?.value;
    for (const required of ['workflow_url', 'workflow_type', 'workflow_type_version']) {
      if (!field(required)) {
        return this.reply('/runs', 'post', 400, { msg: `${required} is required`, status_code: 400 });
      }
    }
    const type = field('workflow_type')!;
    if (!this.workflowTypes[type]?.includes(field('workflow_type_version')!)) {
      return this.reply('/runs', 'post', 400, {
        msg: `${type} ${field('workflow_type_version')} is not supported`,
        status_code: 400,
      });
    }
    for (const json of ['workflow_params', 'tags']) {
      const value = field(json);
      if (value !== undefined) {
        try {
          JSON.parse(value);
        } catch {
          return this.reply('/runs', 'post', 400, { msg: `${json} is not JSON`, status_code: 400 });
        }
      }
    }
    if (this.acceptRuns <= 0) {
      return this.reply('/runs', 'post', 500, { msg: 'queue full', status_code: 500 });
    }
    this.acceptRuns--;
    const runId = randomUUID();
    this.runs.set(runId, {
      runId,
      parts,
      state: 'QUEUED',
      stdout: '',
      stderr: '',
      systemLogs: [],
      tasks: [],
      runLogUrls: true,
    });
    return this.reply('/runs', 'post', 200, { run_id: runId });
  }

  private runLog(run: FakeWesRun): Record<string, unknown> {
    const field = (name: string): string => WesFake.field(run, name) ?? '';
    const logUrl = (id: string, stream: string): string =>
      `${this.logOrigin ?? this.url}/logs/${encodeURIComponent(id)}/${stream}`;
    return {
      run_id: run.runId,
      request: {
        workflow_url: field('workflow_url'),
        workflow_type: field('workflow_type'),
        workflow_type_version: field('workflow_type_version'),
        workflow_params: JSON.parse(field('workflow_params') || '{}') as unknown,
        tags: JSON.parse(field('tags') || '{}') as unknown,
      },
      state: run.state,
      run_log: {
        name: 'workflow',
        ...(run.runLogUrls
          ? { stdout: logUrl(run.runId, 'stdout'), stderr: logUrl(run.runId, 'stderr') }
          : {}),
        ...(run.exitCode === undefined ? {} : { exit_code: run.exitCode }),
        system_logs: run.systemLogs,
      },
      task_logs: run.tasks.map((task) => ({
        id: task.id,
        name: task.name,
        ...(task.stdout === undefined ? {} : { stdout: logUrl(`${run.runId}.${task.id}`, 'stdout') }),
      })),
      outputs: {},
    };
  }

  private log(request: FakeRequest): FakeAnswer {
    const [, id, stream] = request.segments;
    const range = request.headers.range;
    this.logRequests.push({
      path: `/${request.segments.join('/')}`,
      range,
      authorization: request.headers.authorization,
    });
    const [runId, taskId] = (id ?? '').split('.');
    const run = this.runs.get(runId);
    const task = taskId === undefined ? undefined : run?.tasks.find((candidate) => candidate.id === taskId);
    const text = taskId === undefined ? (stream === 'stderr' ? run?.stderr : run?.stdout) : task?.stdout;
    if (text === undefined) {
      return { status: 404, text: 'no such log', headers: { 'content-type': 'text/plain' } };
    }
    const bytes = Buffer.from(text);
    const suffix = /^bytes=-(\d+)$/.exec(range ?? '');
    if (this.ranges && suffix) {
      if (bytes.length === 0) {
        return { status: 416, text: '', headers: { 'content-range': 'bytes */0' } };
      }
      const length = Math.min(bytes.length, Number(suffix[1]));
      return {
        status: 206,
        bytes: bytes.subarray(bytes.length - length),
        headers: {
          'content-type': 'text/plain',
          'content-range': `bytes ${bytes.length - length}-${bytes.length - 1}/${bytes.length}`,
        },
      };
    }
    return { status: 200, bytes, headers: { 'content-type': 'text/plain' } };
  }
}

/** The parts of a multipart/form-data body (RFC 7578), or undefined when it is not one. */
export function parseMultipart(contentType: string | undefined, body: string): FormPart[] | undefined {
  const boundary = /^multipart\/form-data;.*\bboundary="?([^";]+)"?/i.exec(contentType ?? '')?.[1];
  if (boundary === undefined) {
    return undefined;
  }
  const sections = body.split(`--${boundary}`);
  if (sections.length < 3 || !sections.at(-1)!.startsWith('--')) {
    return undefined;
  }
  const parts: FormPart[] = [];
  for (const section of sections.slice(1, -1)) {
    if (!section.startsWith('\r\n') || !section.endsWith('\r\n')) {
      return undefined;
    }
    const content = section.slice(2, -2);
    const split = content.indexOf('\r\n\r\n');
    if (split < 0) {
      return undefined;
    }
    const headers = content.slice(0, split);
    const disposition = /^content-disposition: *form-data; *name="([^"]*)"(?:; *filename="([^"]*)")?/im.exec(
      headers,
    );
    if (!disposition) {
      return undefined;
    }
    parts.push({ name: disposition[1], filename: disposition[2], value: content.slice(split + 4) });
  }
  return parts;
}
