import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildZip } from '../support/zip-builder.js';
import { FakeServer, type FakeAnswer, type FakeRequest } from './fake-server.js';

/**
 * A fake GitHub Actions REST API. Run objects are the real example of
 * `test/fixtures/github/workflow-run-paginated.json` with the fields a test sets replaced.
 *
 * Routes (under the fake's base URL, like `https://api.github.com`):
 * - `GET /repos/{o}/{r}/actions/workflows/{file or id}/runs?per_page=&page=` → `{total_count, workflow_runs}`,
 *   each run at its latest attempt, newest run first
 * - `GET /repos/{o}/{r}/actions/workflows/{file or id}` → the workflow (`workflow.json`, its `state` set by `setWorkflowState`)
 *   (query `branch` keeps the runs of that branch or tag, `created` — `A..B`, `>=A`, `<=B` — those
 *   created in that window, as GitHub filters them)
 * - `GET /repos/{o}/{r}/actions/runs/{id}` and `…/runs/{id}/attempts/{n}` → one run attempt
 * - repositories (`addRepository`, `push`): `GET /repos/{o}/{r}` (`repository.json`),
 *   `GET /repos/{o}/{r}/commits/{ref}` (`commit.json`; ref a SHA, a branch, a tag, `heads/x` or
 *   `tags/x`; an unknown ref → 422 "No commit found for SHA", as GitHub answers), and
 *   `GET /repos/{o}/{r}/git/ref/heads/{b}` and `…/git/ref/tags/{t}` (a reference, 404 when absent),
 *   `GET /repos/{o}/{r}/branches` and `…/tags` (`per_page` up to 100, `page`; each item's `name` and
 *   `commit.sha`, tags newest first; a `Link` header with `rel="next"` while pages follow; ETags as
 *   every answer of the fakes, so an unchanged page answers 304),
 *   `GET /repos/{o}/{r}/zipball/{ref}` → 302 to the archive host (`archiveHost`), as GitHub
 *   redirects to codeload.github.com; there `/{o}/{r}/legacy.zip/{sha}` is the zip with the
 *   top-level folder `{o}-{r}-{sha7}/`. A private repository answers 404 on every route
 *   without its token (`Authorization: Bearer <token>`), and its archive URL carries a
 *   short-lived token of its own, as GitHub's does.
 * - triggers (API.md 11), each needing a token (`Authorization: Bearer …`, else 401):
 *   `POST /repos/{o}/{r}/actions/workflows/{file or id}/dispatches {"ref"}` → 204, and a new run on
 *   that ref (a workflow without the `workflow_dispatch` trigger, `setDispatchable(…, false)`: 422
 *   "Workflow does not have 'workflow_dispatch' trigger"; a ref the repository lacks, when the
 *   repository was added: 422 "No ref found for: …"; a disabled workflow: 422 "Cannot trigger a
 *   'workflow_dispatch' on a disabled workflow", GitHub's words); `POST /repos/{o}/{r}/actions/runs/{id}/rerun`
 *   → 201 and the run's next attempt (a run created more than 30 days before the fake's `now`: 403
 *   "Unable to re-run this workflow run because it was created over a month ago", GitHub's words;
 *   a run of a disabled workflow: 403 too, in words of our own, as GitHub documents none). What
 *   each received is in `dispatches` and `reruns` (refused ones too); the new run or attempt is
 *   `triggeredRun` (default: queued, started now)
 * - run logs: `GET /repos/{o}/{r}/actions/runs/{id}/logs` and `…/attempts/{n}/logs` → 302 to the
 *   archive host (a signed URL there, as GitHub's blob storage), which serves the zip set by
 *   `setRunLogs`: one `{n}_{job}.txt` per job at the top (the whole job's log) and the job's steps
 *   in a folder of its name, as GitHub packs them; 404 for a run without logs
 * - jobs: `GET /repos/{o}/{r}/actions/runs/{id}/attempts/{n}/jobs` → `{total_count, jobs}` (the run's
 *   `jobs`, with their steps, labels and `head_sha`); `GET /repos/{o}/{r}/actions/jobs/{id}/logs` → 302
 *   to the archive host, which serves the job's `log` as plain text (404 for a job without one)
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
  /** The branch or tag it ran on (`head_branch`); default `main`. */
  branch?: string;
  /** When it was created (`created_at`); default: its start. */
  createdAt?: string | Date;
  /** The commit it ran on (`head_sha`); default the fixture's. */
  headSha?: string;
  /**
   * Its jobs (`…/attempts/{n}/jobs`); default one job `build` with the run's status and conclusion.
   * Job ids are `run id × 100 + position`.
   */
  jobs?: FakeGithubJob[];
}

/** A job of a run attempt, as GitHub's jobs listing shows it. */
export interface FakeGithubJob {
  name: string;
  /** Default `completed`. */
  status?: string;
  /** Default `success` for a completed job, `null` otherwise. */
  conclusion?: string | null;
  /** Default: the run's start. */
  startedAt?: string | Date;
  /** Default: 60 s after the start for a completed job. */
  completedAt?: string | Date;
  steps?: { name: string; status?: string; conclusion?: string | null }[];
  /** Default `['ubuntu-latest']`. */
  labels?: string[];
  /** Its log (`…/actions/jobs/{id}/logs`); default none (404). */
  log?: string;
}

/** A repository of the fake (`addRepository`). */
export interface FakeRepositoryOptions {
  /** Default `main`. */
  defaultBranch?: string;
  /** A private repository: every route answers 404 unless the request carries this token. */
  token?: string;
}

/** One push: a commit with these files, which the branch and/or tag then point at. */
export interface FakePush {
  branch?: string;
  tag?: string;
  /** Paths in the repository → contents. */
  files?: Record<string, string | Buffer>;
  /** Instead of files: an archive of this many bytes (zeros), streamed, for the size limit. */
  archiveBytes?: number;
}

interface FakeRepository {
  owner: string;
  repo: string;
  defaultBranch: string;
  token?: string;
  heads: Map<string, string>;
  tags: Map<string, string>;
  /** sha → archive (a zip) or its size for a streamed one. */
  archives: Map<string, Buffer | number>;
  /** Short-lived archive tokens, as codeload's URLs carry for private repositories. */
  archiveTokens: Set<string>;
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
  /** The workflow's `state`: `active`, `disabled_manually`, `disabled_inactivity`, `disabled_fork`… */
  state: string;
  /** Whether its file has the `workflow_dispatch` trigger. */
  dispatchable: boolean;
}

/** A job's log in a run's log archive (`setRunLogs`). */
export interface FakeJobLog {
  name: string;
  text: string | Buffer;
  /** Its steps' logs, in the job's folder of the archive. */
  steps?: { name: string; text: string }[];
}

const FIXTURES = 'test/fixtures/github';
let templates: { run: Json; workflow: Json; repository: Json; commit: Json } | undefined;

/** The fixtures next to this file, or under the working directory when run from a build. */
function loadTemplates(): { run: Json; workflow: Json; repository: Json; commit: Json } {
  if (!templates) {
    const nearby = fileURLToPath(new URL('../fixtures/github/', import.meta.url));
    const folder = existsSync(nearby) ? nearby : join(process.cwd(), FIXTURES);
    const read = (name: string) => JSON.parse(readFileSync(join(folder, name), 'utf8')) as Json;
    const listing = read('workflow-run-paginated.json') as { workflow_runs: Json[] };
    templates = {
      run: listing.workflow_runs[0],
      workflow: read('workflow.json'),
      repository: read('repository.json'),
      commit: read('commit.json'),
    };
  }
  return templates;
}

const EPOCH = Date.UTC(2024, 0, 1);

export class GithubFake extends FakeServer {
  /** Runs for workflows nobody set, e.g. for a benchmark of thousands of instances; undefined → 404. */
  defaultRuns?: (owner: string, repo: string, workflow: string) => FakeGithubRun[] | undefined;
  /** Workflow dispatches received: the workflow as named in the path, and the body's ref. */
  readonly dispatches: { owner: string; repo: string; workflow: string; ref: unknown }[] = [];
  /** Re-runs received. */
  readonly reruns: { owner: string; repo: string; runId: number }[] = [];
  /**
   * What a triggered run (or re-run attempt) looks like; default queued, started now. A test that
   * moves the service's clock starts it at that time instead.
   */
  triggeredRun: () => Omit<FakeGithubRun, 'id' | 'attempt' | 'branch'> = () => ({
    status: 'queued',
    conclusion: null,
    startedAt: new Date(),
  });
  /** The fake's clock, for GitHub's 30 days of re-runs; a test that moves the service's clock moves it too. */
  now: () => Date = () => new Date();
  private nextRunId = 5_000_000;
  /** `owner/repo/run id/attempt` → the log archive of that attempt. */
  private readonly logArchives = new Map<string, Buffer>();
  /** Each run attempt's jobs, by its run object. */
  private readonly jobsOf = new WeakMap<Json, Json[]>();
  /** Pages of jobs listings answered, for tests that count them. */
  jobPagesRead = 0;
  /** job id → its log. */
  private readonly jobLogs = new Map<number, string>();
  /** Signed archive URLs handed out (GitHub's are short-lived links to its blob storage). */
  private readonly logTokens = new Set<string>();

  private readonly workflows = new Map<string, WorkflowEntry>();
  /** `owner/repo/run id` → workflow: run ids are unique per repository here (globally on GitHub). */
  private readonly runIndex = new Map<string, WorkflowEntry>();
  private nextWorkflowId = 1_000_000;
  private readonly repositories = new Map<string, FakeRepository>();
  /** Requests the archive host got, with the Authorization header they carried (GitHub's token must not go there). */
  readonly archiveRequests: { path: string; authorization?: string }[] = [];
  private archiveServer?: http.Server;
  private archiveBase = '';

  constructor() {
    super('GitHub');
  }

  /** Where zipball redirects point instead of the fake's own archive host (a test of the guard on that hop). */
  archiveRedirectBase?: string;

  /** The archive host's base URL (GitHub's is `https://codeload.github.com`). */
  get archiveHost(): string {
    return this.archiveBase;
  }

  override async start(): Promise<string> {
    const url = await super.start();
    const server = http.createServer((req, res) => this.serveArchive(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.archiveServer = server;
    this.archiveBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return url;
  }

  override async stop(): Promise<void> {
    const server = this.archiveServer;
    if (server) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    }
    await super.stop();
  }

  /** Creates (or replaces) an empty repository. */
  addRepository(owner: string, repo: string, options: FakeRepositoryOptions = {}): void {
    this.repositories.set(key(owner, repo, ''), {
      owner,
      repo,
      defaultBranch: options.defaultBranch ?? 'main',
      token: options.token,
      heads: new Map(),
      tags: new Map(),
      archives: new Map(),
      archiveTokens: new Set(),
    });
  }

  /** The repository disappears (deleted, or made private to our token): every route answers 404. */
  removeRepository(owner: string, repo: string): void {
    this.repositories.delete(key(owner, repo, ''));
  }

  /** Deletes a tag or a branch. */
  deleteRef(owner: string, repo: string, ref: { tag?: string; branch?: string }): void {
    const repository = this.repositories.get(key(owner, repo, ''));
    if (ref.tag !== undefined) {
      repository?.tags.delete(ref.tag);
    }
    if (ref.branch !== undefined) {
      repository?.heads.delete(ref.branch);
    }
  }

  /** Makes a commit holding `files` and points the branch and/or tag at it; returns its SHA. */
  push(owner: string, repo: string, push: FakePush): string {
    const repository = this.repositories.get(key(owner, repo, ''));
    if (!repository) {
      throw new Error(`no repository ${owner}/${repo}`);
    }
    const sha = createHash('sha1').update(randomBytes(16)).digest('hex');
    const folder = `${owner}-${repo}-${sha.slice(0, 7)}/`;
    repository.archives.set(
      sha,
      push.archiveBytes ??
        buildZip([
          { name: folder },
          ...Object.entries(push.files ?? {}).map(([path, data]) => ({ name: `${folder}${path}`, data })),
        ]),
    );
    if (push.branch !== undefined) {
      repository.heads.set(push.branch, sha);
    }
    if (push.tag !== undefined) {
      repository.tags.set(push.tag, sha);
    }
    return sha;
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

  /**
   * Sets the workflow's `state` (`disabled_manually` as the Disable button does…). Its runs listing
   * does not change, as on GitHub: only the workflow read shows it.
   */
  setWorkflowState(owner: string, repo: string, workflow: string | number, state: string): void {
    this.entry(owner, repo, String(workflow), true).state = state;
  }

  /** Whether the workflow's file has the `workflow_dispatch` trigger (it has by default). */
  setDispatchable(owner: string, repo: string, workflow: string | number, dispatchable: boolean): void {
    this.entry(owner, repo, String(workflow), true).dispatchable = dispatchable;
  }

  /** The log archive of a run's attempt (default the first): one file per job, in this order. */
  setRunLogs(owner: string, repo: string, runId: number, jobs: FakeJobLog[], attempt = 1): void {
    const files: { name: string; data?: string | Buffer }[] = [];
    // GitHub lists the steps' folders first and the jobs' whole logs after them, in no job order.
    jobs.forEach((job) => {
      files.push({ name: `${job.name}/` });
      job.steps?.forEach((step, at) =>
        files.push({ name: `${job.name}/${at + 1}_${step.name}.txt`, data: step.text }),
      );
    });
    [...jobs.entries()]
      .reverse()
      .forEach(([index, job]) => files.push({ name: `${index}_${job.name}.txt`, data: job.text }));
    this.logArchives.set(`${owner}/${repo}/${runId}/${attempt}`, buildZip(files));
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
    if (request.method === 'POST' && s[0] === 'repos' && s[3] === 'actions') {
      return this.triggerRoute(request);
    }
    if (
      request.method === 'GET' &&
      s[0] === 'repos' &&
      s[3] === 'actions' &&
      s[4] === 'runs' &&
      s.at(-1) === 'logs' &&
      (s.length === 7 || (s.length === 9 && s[6] === 'attempts'))
    ) {
      return this.logsRedirect(s[1], s[2], s[5], s.length === 9 ? s[7] : undefined);
    }
    if (request.method === 'GET' && s[0] === 'repos' && s.length >= 3 && s[3] !== 'actions') {
      return this.repositoryRoute(request);
    }
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
    if (s[4] === 'runs' && s.length === 9 && s[6] === 'attempts' && s[8] === 'jobs') {
      const attempt = this.runIndex
        .get(key(owner, repo, s[5]))
        ?.runs.get(Number(s[5]))
        ?.get(Number(s[7]));
      const jobs = attempt ? this.jobsOf.get(attempt) : undefined;
      if (!attempt || !jobs) {
        return notFound();
      }
      // Pages as GitHub's: per_page 30 by default, at most 100.
      const perPage = Math.min(100, Math.max(1, Number(request.query.get('per_page') ?? 30) || 30));
      const page = Math.max(1, Number(request.query.get('page') ?? 1) || 1);
      this.jobPagesRead += 1;
      return {
        status: 200,
        body: { total_count: jobs.length, jobs: jobs.slice((page - 1) * perPage, page * perPage) },
      };
    }
    if (s[4] === 'jobs' && s.length === 7 && s[6] === 'logs') {
      if (!this.jobLogs.has(Number(s[5]))) {
        return notFound();
      }
      const token = randomBytes(12).toString('hex');
      this.logTokens.add(token);
      return {
        status: 302,
        text: '',
        headers: { location: `${this.archiveBase}/joblogs/${s[5]}.txt?sig=${token}` },
      };
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

  /** Dispatches and re-runs (see the routes above). */
  private triggerRoute(request: FakeRequest): FakeAnswer {
    const [, owner, repo, , kind, id, action] = request.segments;
    if (!request.headers.authorization) {
      return {
        status: 401,
        body: { message: 'Requires authentication', documentation_url: 'https://docs.github.com/rest' },
      };
    }
    if (kind === 'workflows' && action === 'dispatches' && request.segments.length === 7) {
      const entry = this.entry(owner, repo, id, false);
      if (!entry) {
        return notFound();
      }
      const ref = parseJson(request.body)?.ref;
      this.dispatches.push({ owner, repo, workflow: id, ref });
      if (entry.state.startsWith('disabled')) {
        return unprocessable("Cannot trigger a 'workflow_dispatch' on a disabled workflow");
      }
      if (!entry.dispatchable) {
        return unprocessable("Workflow does not have 'workflow_dispatch' trigger");
      }
      const repository = this.repositories.get(key(owner, repo, ''));
      if (typeof ref !== 'string' || (repository && resolveRef(repository, ref) === undefined)) {
        return unprocessable(`No ref found for: ${String(ref)}`);
      }
      this.put(entry, { ...this.triggeredRun(), id: this.nextRunId++, branch: ref });
      entry.pages.clear();
      return { status: 204, text: '' };
    }
    if (kind === 'runs' && action === 'rerun' && request.segments.length === 7) {
      const entry = this.runIndex.get(key(owner, repo, id));
      const attempts = entry?.runs.get(Number(id));
      if (!entry || !attempts) {
        return notFound();
      }
      this.reruns.push({ owner, repo, runId: Number(id) });
      const last = latest(attempts);
      const created = Date.parse(String(attempts.get(Math.min(...attempts.keys()))?.created_at));
      if (this.now().getTime() - created > RERUN_DAYS * 24 * 3600_000) {
        return forbidden('Unable to re-run this workflow run because it was created over a month ago');
      }
      if (entry.state.startsWith('disabled')) {
        return forbidden('Unable to re-run this workflow run because its workflow is disabled');
      }
      this.put(entry, {
        ...this.triggeredRun(),
        id: Number(id),
        attempt: Math.max(...attempts.keys()) + 1,
        branch: typeof last?.head_branch === 'string' ? last.head_branch : 'main',
      });
      entry.pages.clear();
      return { status: 201, body: {} };
    }
    return notFound();
  }

  /** A run's log archive: a redirect to a signed URL of the archive host, as GitHub answers. */
  private logsRedirect(owner: string, repo: string, runId: string, attempt: string | undefined): FakeAnswer {
    const attempts = this.runIndex.get(key(owner, repo, runId))?.runs.get(Number(runId));
    const number = attempt ?? String(attempts ? Math.max(...attempts.keys()) : 1);
    const path = `/logs/${owner}/${repo}/${runId}/${number}.zip`;
    if (!this.logArchives.has(`${owner}/${repo}/${runId}/${number}`)) {
      return notFound();
    }
    const token = randomBytes(12).toString('hex');
    this.logTokens.add(token);
    return { status: 302, text: '', headers: { location: `${this.archiveBase}${path}?sig=${token}` } };
  }

  private repositoryRoute(request: FakeRequest): FakeAnswer {
    const [, owner, repo, kind, ...rest] = request.segments;
    const repository = this.repositories.get(key(owner, repo, ''));
    if (!repository || (repository.token && request.headers.authorization !== `Bearer ${repository.token}`)) {
      return notFound();
    }
    if (kind === undefined) {
      return { status: 200, body: this.repositoryJson(repository) };
    }
    if (
      kind === 'git' &&
      rest[0] === 'ref' &&
      (rest[1] === 'heads' || rest[1] === 'tags') &&
      rest.length > 2
    ) {
      const name = rest.slice(2).join('/');
      const target = (rest[1] === 'heads' ? repository.heads : repository.tags).get(name);
      return target
        ? {
            status: 200,
            body: {
              ref: `refs/${rest[1]}/${name}`,
              node_id: 'MDM6UmVmcmVmcy9oZWFkcy9mZWF0dXJlQQ==',
              url: `${this.url}/repos/${owner}/${repo}/git/refs/${rest[1]}/${name}`,
              object: {
                type: 'commit',
                sha: target,
                url: `${this.url}/repos/${owner}/${repo}/git/commits/${target}`,
              },
            },
          }
        : notFound();
    }
    if ((kind === 'branches' || kind === 'tags') && rest.length === 0) {
      return this.refsListing(repository, kind, request.query);
    }
    const sha = rest.length > 0 ? resolveRef(repository, rest.join('/')) : undefined;
    if (kind === 'commits' && rest.length > 0) {
      return sha
        ? { status: 200, body: this.commitJson(repository, sha) }
        : {
            status: 422,
            body: {
              message: `No commit found for SHA: ${rest.join('/')}`,
              documentation_url: 'https://docs.github.com/rest/commits/commits#get-a-commit',
              status: '422',
            },
          };
    }
    if (kind === 'zipball' && rest.length > 0) {
      if (!sha) {
        return notFound();
      }
      let location = `${this.archiveRedirectBase ?? this.archiveBase}/${owner}/${repo}/legacy.zip/${sha}`;
      if (repository.token) {
        const token = randomBytes(12).toString('hex');
        repository.archiveTokens.add(token);
        location += `?token=${token}`;
      }
      return { status: 302, text: '', headers: { location } };
    }
    return notFound();
  }

  private serveArchive(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', this.archiveBase);
    this.archiveRequests.push({ path: url.pathname, authorization: req.headers.authorization });
    const jobLog = /^\/joblogs\/(\d+)\.txt$/.exec(url.pathname);
    if (jobLog) {
      const text = this.jobLogs.get(Number(jobLog[1]));
      if (text === undefined || !this.logTokens.has(url.searchParams.get('sig') ?? '')) {
        res
          .writeHead(403, { 'content-type': 'application/xml' })
          .end('<Error><Code>AuthenticationFailed</Code></Error>');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
      return;
    }
    const log = /^\/logs\/([^/]+)\/([^/]+)\/(\d+)\/(\d+)\.zip$/.exec(url.pathname);
    if (log) {
      const archive = this.logArchives.get(`${log[1]}/${log[2]}/${log[3]}/${log[4]}`);
      if (!archive || !this.logTokens.has(url.searchParams.get('sig') ?? '')) {
        res
          .writeHead(403, { 'content-type': 'application/xml' })
          .end('<Error><Code>AuthenticationFailed</Code></Error>');
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/zip', 'content-length': String(archive.length) })
        .end(archive);
      return;
    }
    const [owner, repo, format, sha] = url.pathname.split('/').filter((part) => part !== '');
    const repository = this.repositories.get(key(owner ?? '', repo ?? '', ''));
    const archive = format === 'legacy.zip' ? repository?.archives.get(sha ?? '') : undefined;
    const token = url.searchParams.get('token');
    if (
      !repository ||
      archive === undefined ||
      (repository.token && (!token || !repository.archiveTokens.has(token)))
    ) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('404: Not Found');
      return;
    }
    const name = `${owner}-${repo}-${(sha ?? '').slice(0, 7)}.zip`;
    const headers = {
      'content-type': 'application/zip',
      'content-disposition': `attachment; filename=${name}`,
    };
    if (Buffer.isBuffer(archive)) {
      res.writeHead(200, { ...headers, 'content-length': String(archive.length) }).end(archive);
      return;
    }
    // A large archive, streamed in 1 MiB pieces as the client reads them.
    res.writeHead(200, { ...headers, 'content-length': String(archive) });
    const piece = Buffer.alloc(1024 * 1024);
    let left = archive;
    const pump = (): void => {
      while (left > 0) {
        const chunk = piece.subarray(0, Math.min(piece.length, left));
        left -= chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    res.once('close', () => res.removeAllListeners('drain'));
    pump();
  }

  /** GitHub's "List branches" and "List repository tags", paginated as GitHub paginates them. */
  private refsListing(
    repository: FakeRepository,
    kind: 'branches' | 'tags',
    query: URLSearchParams,
  ): FakeAnswer {
    const { owner, repo } = repository;
    const perPage = Math.min(100, Math.max(1, Number(query.get('per_page') ?? 30) || 30));
    const page = Math.max(1, Number(query.get('page') ?? 1) || 1);
    const refs = [...(kind === 'branches' ? repository.heads : repository.tags)];
    // Tags newest first, as GitHub lists a repository's recent releases first.
    const ordered = kind === 'tags' ? refs.reverse() : refs.sort(([a], [b]) => a.localeCompare(b));
    const items = ordered.slice((page - 1) * perPage, page * perPage).map(([name, sha]) => {
      const commit = { sha, url: `${this.url}/repos/${owner}/${repo}/commits/${sha}` };
      return kind === 'branches'
        ? { name, commit, protected: false }
        : {
            name,
            commit,
            zipball_url: `${this.url}/repos/${owner}/${repo}/zipball/refs/tags/${name}`,
            tarball_url: `${this.url}/repos/${owner}/${repo}/tarball/refs/tags/${name}`,
            node_id: 'MDM6UmVmcmVmcy90YWdzL3YwLjE=',
          };
    });
    const headers: Record<string, string> = {};
    const last = Math.max(1, Math.ceil(ordered.length / perPage));
    if (page < last) {
      const at = (n: number) => `<${this.url}/repos/${owner}/${repo}/${kind}?per_page=${perPage}&page=${n}>`;
      headers.link = `${at(page + 1)}; rel="next", ${at(last)}; rel="last"`;
    }
    return { status: 200, body: items, headers };
  }

  private repositoryJson(repository: FakeRepository): Json {
    const { owner, repo } = repository;
    return {
      ...loadTemplates().repository,
      name: repo,
      full_name: `${owner}/${repo}`,
      private: repository.token !== undefined,
      visibility: repository.token !== undefined ? 'private' : 'public',
      default_branch: repository.defaultBranch,
      html_url: `https://github.com/${owner}/${repo}`,
      url: `${this.url}/repos/${owner}/${repo}`,
    };
  }

  private commitJson(repository: FakeRepository, sha: string): Json {
    const { owner, repo } = repository;
    return {
      ...loadTemplates().commit,
      sha,
      url: `${this.url}/repos/${owner}/${repo}/commits/${sha}`,
      html_url: `https://github.com/${owner}/${repo}/commit/${sha}`,
    };
  }

  private listing(entry: WorkflowEntry, query: URLSearchParams): FakeAnswer {
    const perPage = Math.min(100, Math.max(1, Number(query.get('per_page') ?? 30) || 30));
    const page = Math.max(1, Number(query.get('page') ?? 1) || 1);
    const branch = query.get('branch');
    const created = query.get('created');
    const cacheKey = `${perPage}:${page}:${branch}:${created}`;
    let json = entry.pages.get(cacheKey);
    if (json === undefined) {
      const window = createdWindow(created);
      const ids = [...entry.runs.keys()]
        .filter((id) => {
          const run = latest(entry.runs.get(id));
          const createdAt = Date.parse(String(run?.created_at));
          return (
            (branch === null || run?.head_branch === branch) &&
            createdAt >= window.from &&
            createdAt <= window.until
          );
        })
        .sort((a, b) => b - a);
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
      state: 'active',
      dispatchable: true,
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
    const json = this.runJson(entry, run, attempt);
    attempts.set(attempt, json);
    this.jobsOf.set(json, this.jobsJson(entry, run, json));
    this.runIndex.set(runKey, entry);
  }

  private jobsJson(entry: WorkflowEntry, run: FakeGithubRun, json: Json): Json[] {
    const jobs: FakeGithubJob[] = run.jobs ?? [
      { name: 'build', status: String(json.status), conclusion: json.conclusion as string | null },
    ];
    return jobs.map((job, index) => {
      const id = run.id * 100 + index;
      if (job.log !== undefined) {
        this.jobLogs.set(id, job.log);
      }
      const status = job.status ?? 'completed';
      const conclusion =
        job.conclusion !== undefined ? job.conclusion : status === 'completed' ? 'success' : null;
      const started = job.startedAt ? new Date(job.startedAt) : new Date(String(json.run_started_at));
      const completed = job.completedAt
        ? new Date(job.completedAt)
        : status === 'completed'
          ? new Date(started.getTime() + 60_000)
          : null;
      return {
        id,
        run_id: run.id,
        run_attempt: json.run_attempt,
        head_sha: json.head_sha,
        url: `${this.url}/repos/${entry.owner}/${entry.repo}/actions/jobs/${id}`,
        html_url: `https://github.com/${entry.owner}/${entry.repo}/actions/runs/${run.id}/job/${id}`,
        status,
        conclusion,
        started_at: iso(started),
        completed_at: completed ? iso(completed) : null,
        name: job.name,
        steps: (job.steps ?? []).map((step, at) => ({
          name: step.name,
          status: step.status ?? 'completed',
          conclusion:
            step.conclusion !== undefined
              ? step.conclusion
              : (step.status ?? 'completed') === 'completed'
                ? 'success'
                : null,
          number: at + 1,
        })),
        labels: job.labels ?? ['ubuntu-latest'],
        runner_name: 'GitHub Actions 2',
        runner_group_name: 'GitHub Actions',
      };
    });
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
      head_branch: run.branch ?? 'main',
      ...(run.headSha === undefined ? {} : { head_sha: run.headSha }),
      created_at: iso(run.createdAt ? new Date(run.createdAt) : started),
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
      state: entry.state,
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

/** What a commits/zipball `{ref}` names in the repository: a SHA (or a prefix of 7+), `heads/x`, `tags/x`, a branch, a tag. */
function resolveRef(repository: FakeRepository, ref: string): string | undefined {
  if (ref.startsWith('heads/')) {
    return repository.heads.get(ref.slice('heads/'.length));
  }
  if (ref.startsWith('tags/')) {
    return repository.tags.get(ref.slice('tags/'.length));
  }
  if (/^[0-9a-f]{7,40}$/.test(ref)) {
    const sha = [...repository.archives.keys()].find((candidate) => candidate.startsWith(ref));
    if (sha) {
      return sha;
    }
  }
  return repository.heads.get(ref) ?? repository.tags.get(ref);
}

/** GitHub's `created` filter: `A..B`, `>=A`, `<=B`, `>A`, `<B` (ISO 8601 dates or times); none: everything. */
function createdWindow(created: string | null): { from: number; until: number } {
  if (created === null) {
    return { from: -Infinity, until: Infinity };
  }
  const range = /^(.+)\.\.(.+)$/.exec(created);
  if (range) {
    return { from: Date.parse(range[1]), until: Date.parse(range[2]) };
  }
  const bound = /^([<>]=?)(.+)$/.exec(created);
  if (!bound) {
    throw new Error(`the fake does not understand created=${created}`);
  }
  const at = Date.parse(bound[2]);
  switch (bound[1]) {
    case '>=':
      return { from: at, until: Infinity };
    case '>':
      return { from: at + 1, until: Infinity };
    case '<=':
      return { from: -Infinity, until: at };
    default:
      return { from: -Infinity, until: at - 1 };
  }
}

/** How long after its creation GitHub re-runs a run. */
const RERUN_DAYS = 30;

function forbidden(message: string): FakeAnswer {
  return {
    status: 403,
    body: {
      message,
      documentation_url: 'https://docs.github.com/rest/actions/workflow-runs#re-run-a-workflow',
      status: '403',
    },
  };
}

function unprocessable(message: string): FakeAnswer {
  return {
    status: 422,
    body: {
      message,
      documentation_url: 'https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event',
      status: '422',
    },
  };
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function notFound(): FakeAnswer {
  return {
    status: 404,
    body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' },
  };
}
