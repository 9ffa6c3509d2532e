import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeServer, type FakeAnswer, type FakeRequest } from './fake-server.js';

/**
 * A fake GitHub Actions REST API. Run objects are the real example of
 * `test/fixtures/github/workflow-run-paginated.json` with the fields a test sets replaced.
 *
 * Routes (under the fake's base URL, like `https://api.github.com`):
 * - `GET /repos/{o}/{r}/actions/workflows/{file or id}/runs?per_page=&page=` → `{total_count, workflow_runs}`,
 *   each run at its latest attempt, newest run first
 * - `GET /repos/{o}/{r}/actions/workflows/{file or id}` → the workflow (`workflow.json`)
 * - `GET /repos/{o}/{r}/actions/runs/{id}` and `…/runs/{id}/attempts/{n}` → one run attempt
 * - anything else → 404 `{"message": "Not Found"}`
 */

/** One attempt of a run; several entries with one `id` are the attempts of that run. */
export interface FakeGithubRun {
  id: number;
  /** Default 1. */
  attempt?: number;
  /** Default `completed`. */
  status?: string;
  /** Default `success` for a completed run, `null` otherwise. */
  conclusion?: string | null;
  /** Default: a fixed date derived from id and attempt. */
  startedAt?: string | Date;
  /** Default: 60 s after the start for a completed run, the start otherwise. */
  updatedAt?: string | Date;
}

type Json = Record<string, unknown>;

interface WorkflowEntry {
  owner: string;
  repo: string;
  id: number;
  path: string;
  /** run id → attempt number → run object */
  runs: Map<number, Map<number, Json>>;
  /** Serialised listing pages, dropped whenever a run changes. */
  pages: Map<string, string>;
}

const FIXTURES = 'test/fixtures/github';
let templates: { run: Json; workflow: Json } | undefined;

/** The fixtures next to this file, or under the working directory when run from a build. */
function loadTemplates(): { run: Json; workflow: Json } {
  if (!templates) {
    const nearby = fileURLToPath(new URL('../fixtures/github/', import.meta.url));
    const folder = existsSync(nearby) ? nearby : join(process.cwd(), FIXTURES);
    const listing = JSON.parse(readFileSync(join(folder, 'workflow-run-paginated.json'), 'utf8')) as {
      workflow_runs: Json[];
    };
    const workflow = JSON.parse(readFileSync(join(folder, 'workflow.json'), 'utf8')) as Json;
    templates = { run: listing.workflow_runs[0], workflow };
  }
  return templates;
}

const EPOCH = Date.UTC(2024, 0, 1);

export class GithubFake extends FakeServer {
  /** Runs for workflows nobody set, e.g. for a benchmark of thousands of instances; undefined → 404. */
  defaultRuns?: (owner: string, repo: string, workflow: string) => FakeGithubRun[] | undefined;

  private readonly workflows = new Map<string, WorkflowEntry>();
  /** `owner/repo/run id` → workflow: run ids are unique per repository here (globally on GitHub). */
  private readonly runIndex = new Map<string, WorkflowEntry>();
  private nextWorkflowId = 1_000_000;

  constructor() {
    super('GitHub');
  }

  /** Creates or replaces a workflow's runs. `workflow` is its file name or numeric id, as in resources. */
  setRuns(owner: string, repo: string, workflow: string | number, runs: FakeGithubRun[]): void {
    const entry = this.entry(owner, repo, String(workflow), true);
    for (const id of entry.runs.keys()) {
      this.runIndex.delete(key(owner, repo, String(id)));
    }
    entry.runs.clear();
    for (const run of runs) {
      this.put(entry, run);
    }
    entry.pages.clear();
  }

  /** Adds a run or one more attempt of it (same `id`, higher `attempt`). */
  addRun(owner: string, repo: string, workflow: string | number, run: FakeGithubRun): void {
    const entry = this.entry(owner, repo, String(workflow), true);
    this.put(entry, run);
    entry.pages.clear();
  }

  /** The workflow disappears: its paths answer 404. */
  removeWorkflow(owner: string, repo: string, workflow: string | number): void {
    const entry = this.workflows.get(key(owner, repo, String(workflow)));
    if (!entry) {
      return;
    }
    for (const id of entry.runs.keys()) {
      this.runIndex.delete(key(owner, repo, String(id)));
    }
    for (const [name, value] of this.workflows) {
      if (value === entry) {
        this.workflows.delete(name);
      }
    }
  }

  /** The `resource` of a test instance for this workflow. */
  static resource(owner: string, repo: string, workflow: string | number): string {
    return `repos/${owner}/${repo}/actions/workflows/${workflow}`;
  }

  /** The raw path the listing is requested on, for `count()` and `fail()`. */
  static runsPath(owner: string, repo: string, workflow: string | number): string {
    return `/${GithubFake.resource(owner, repo, workflow)}/runs`;
  }

  protected route(request: FakeRequest): FakeAnswer {
    const s = request.segments;
    if (request.method !== 'GET' || s[0] !== 'repos' || s[3] !== 'actions') {
      return notFound();
    }
    const [, owner, repo] = s;
    if (s[4] === 'workflows' && (s.length === 6 || (s.length === 7 && s[6] === 'runs'))) {
      const entry = this.entry(owner, repo, s[5], false);
      if (!entry) {
        return notFound();
      }
      return s.length === 6
        ? { status: 200, body: this.workflowJson(entry) }
        : this.listing(entry, request.query);
    }
    if (s[4] === 'runs' && (s.length === 6 || (s.length === 8 && s[6] === 'attempts'))) {
      const entry = this.runIndex.get(key(owner, repo, s[5]));
      if (!entry) {
        return notFound();
      }
      const attempts = entry.runs.get(Number(s[5]));
      const attempt = s.length === 8 ? attempts?.get(Number(s[7])) : latest(attempts);
      return attempt ? { status: 200, body: attempt } : notFound();
    }
    return notFound();
  }

  private listing(entry: WorkflowEntry, query: URLSearchParams): FakeAnswer {
    const perPage = Math.min(100, Math.max(1, Number(query.get('per_page') ?? 30) || 30));
    const page = Math.max(1, Number(query.get('page') ?? 1) || 1);
    const cacheKey = `${perPage}:${page}`;
    let json = entry.pages.get(cacheKey);
    if (json === undefined) {
      const ids = [...entry.runs.keys()].sort((a, b) => b - a);
      const runs = ids.slice((page - 1) * perPage, page * perPage).map((id) => latest(entry.runs.get(id)));
      json = JSON.stringify({ total_count: ids.length, workflow_runs: runs });
      entry.pages.set(cacheKey, json);
    }
    return { status: 200, text: json };
  }

  private entry(owner: string, repo: string, workflow: string, create: true): WorkflowEntry;
  private entry(owner: string, repo: string, workflow: string, create: false): WorkflowEntry | undefined;
  private entry(owner: string, repo: string, workflow: string, create: boolean): WorkflowEntry | undefined {
    const found = this.workflows.get(key(owner, repo, workflow));
    if (found) {
      return found;
    }
    const generated = create ? undefined : this.defaultRuns?.(owner, repo, workflow);
    if (!create && generated === undefined) {
      return undefined;
    }
    const numeric = /^\d+$/.test(workflow);
    const entry: WorkflowEntry = {
      owner,
      repo,
      id: numeric ? Number(workflow) : this.nextWorkflowId++,
      path: `.github/workflows/${numeric ? 'ci.yml' : workflow}`,
      runs: new Map(),
      pages: new Map(),
    };
    // A workflow is reachable by its file name and by its id, as on GitHub.
    this.workflows.set(key(owner, repo, workflow), entry);
    this.workflows.set(key(owner, repo, String(entry.id)), entry);
    for (const run of generated ?? []) {
      this.put(entry, run);
    }
    return entry;
  }

  private put(entry: WorkflowEntry, run: FakeGithubRun): void {
    const runKey = key(entry.owner, entry.repo, String(run.id));
    const other = this.runIndex.get(runKey);
    if (other && other !== entry) {
      throw new Error(`run ${run.id} belongs to another workflow of ${entry.owner}/${entry.repo}`);
    }
    const attempt = run.attempt ?? 1;
    let attempts = entry.runs.get(run.id);
    if (!attempts) {
      attempts = new Map();
      entry.runs.set(run.id, attempts);
    }
    attempts.set(attempt, this.runJson(entry, run, attempt));
    this.runIndex.set(runKey, entry);
  }

  private runJson(entry: WorkflowEntry, run: FakeGithubRun, attempt: number): Json {
    const status = run.status ?? 'completed';
    const conclusion =
      run.conclusion !== undefined ? run.conclusion : status === 'completed' ? 'success' : null;
    const started = run.startedAt
      ? new Date(run.startedAt)
      : new Date(EPOCH + (run.id % 1_000_000) * 1000 + (attempt - 1) * 600_000);
    const updated = run.updatedAt
      ? new Date(run.updatedAt)
      : new Date(started.getTime() + (status === 'completed' ? 60_000 : 0));
    const api = `${this.url}/repos/${entry.owner}/${entry.repo}`;
    const web = `https://github.com/${entry.owner}/${entry.repo}/actions/runs/${run.id}`;
    return {
      // The nested objects (actor, repository…) are shared, never changed: cloning them per run is waste.
      ...loadTemplates().run,
      id: run.id,
      run_attempt: attempt,
      status,
      conclusion,
      workflow_id: entry.id,
      path: entry.path,
      created_at: iso(started),
      run_started_at: iso(started),
      updated_at: iso(updated),
      url: `${api}/actions/runs/${run.id}`,
      html_url: attempt === 1 ? web : `${web}/attempts/${attempt}`,
      workflow_url: `${api}/actions/workflows/${entry.id}`,
    };
  }

  private workflowJson(entry: WorkflowEntry): Json {
    return {
      ...loadTemplates().workflow,
      id: entry.id,
      path: entry.path,
      url: `${this.url}/repos/${entry.owner}/${entry.repo}/actions/workflows/${entry.id}`,
      html_url: `https://github.com/${entry.owner}/${entry.repo}/blob/main/${entry.path}`,
    };
  }
}

function key(owner: string, repo: string, workflow: string): string {
  return `${owner}/${repo}/${workflow}`;
}

function latest(attempts: Map<number, Json> | undefined): Json | undefined {
  if (!attempts || attempts.size === 0) {
    return undefined;
  }
  return attempts.get(Math.max(...attempts.keys()));
}

function iso(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function notFound(): FakeAnswer {
  return {
    status: 404,
    body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' },
  };
}
