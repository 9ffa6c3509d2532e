import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { buildZip } from '../support/zip-builder.js';
import { FakeServer, type FakeAnswer, type FakeRequest } from './fake-server.js';

/**
 * A fake GitLab instance, API v4, answering with GitLab's own shapes: every object starts from
 * a real reply of the NARKOZ/gitlab client's fixtures (test/fixtures/gitlab/narkoz/) and gets
 * the members GitLab's JSON Schemas (test/fixtures/gitlab/schemas/) require of a reply today, so
 * that its answers validate against them (test/contracts/gitlab.contract.spec.ts checks it).
 *
 * Routes, under `{url}/api/v4/projects/{id or url-encoded path}`:
 * - `` (the project), `/repository/branches[/{name}]`, `/repository/tags[/{name}]` (pages of
 *   `per_page`, `X-Next-Page` empty on the last; `endlessPages` never ends),
 *   `/repository/commits/{sha, branch or tag}`, `/repository/archive.zip?sha=` (the zip)
 * - `/pipelines?ref=&updated_after=&per_page=` (newest first), `/pipelines/{id}/jobs` (GitLab's
 *   order: newest job first), `/jobs/{id}/trace` (text/plain), `POST /pipeline?ref=` (a token
 *   needed: 201 and a new pipeline)
 * A private project (`token`) answers 404 without its token in `PRIVATE-TOKEN` or
 * `Authorization: Bearer`, as GitLab hides projects one cannot see.
 */

type Json = Record<string, unknown>;

/** The fixtures next to this file, or under the working directory when run from a build. */
function fixture(name: string): Json {
  const nearby = fileURLToPath(new URL('../fixtures/gitlab/narkoz/', import.meta.url));
  const folder = existsSync(nearby) ? nearby : join(process.cwd(), 'test/fixtures/gitlab/narkoz');
  return JSON.parse(readFileSync(join(folder, name), 'utf8')) as Json;
}

/**
 * gitlabhq's own runner trace (test/fixtures/gitlab/trace/sample_trace): a real job log with its
 * ANSI colours and `section_start:`/`section_end:` markers, byte for byte, for a job's `trace`.
 */
export function sampleTrace(): string {
  const nearby = fileURLToPath(new URL('../fixtures/gitlab/trace/sample_trace', import.meta.url));
  const file = existsSync(nearby) ? nearby : join(process.cwd(), 'test/fixtures/gitlab/trace/sample_trace');
  return readFileSync(file, 'utf8');
}

const TEMPLATES = {
  project: fixture('project.json'),
  commit: fixture('project_commit.json'),
  pipeline: fixture('pipeline.json'),
  job: fixture('job.json'),
};

export interface FakeGitlabJob {
  id: number;
  name: string;
  stage: string;
  /** GitLab's job status: `success`, `failed`, `running`, `canceled`, … */
  status: string;
  failureReason?: string;
  /** The `description` of the runner that took it; none: `runner` is null. */
  runner?: string;
  /** Its `tag_list`. */
  tags?: string[];
  /** The trace; a function makes a large one as it is read. Absent: 404. */
  trace?: string | (() => Readable);
}

export interface FakeGitlabPipeline {
  id: number;
  /** GitLab's pipeline status; default `success`. */
  status?: string;
  ref?: string;
  /** Default: a fixed date derived from the id. */
  createdAt?: Date;
  jobs?: FakeGitlabJob[];
}

interface Project {
  id: number;
  path: string;
  defaultBranch: string;
  token?: string;
  heads: Map<string, string>;
  tags: Map<string, string>;
  archives: Map<string, Buffer>;
  pipelines: Json[];
  jobs: Map<number, { job: FakeGitlabJob; pipelineId: number }>;
}

const EPOCH = Date.UTC(2024, 0, 1);
const FINISHED = new Set(['success', 'failed', 'canceled', 'skipped']);

export class GitlabFake extends FakeServer {
  /** Branches and tags listings never end: every page says another follows, and repeats the first's refs. */
  endlessPages = false;
  /** Pipelines created (`POST /pipeline`): the project and the ref asked. */
  readonly triggers: { project: string; ref: string | null }[] = [];
  private readonly projects = new Map<string, Project>();
  private nextProjectId = 100;
  private nextPipelineId = 5000;

  constructor() {
    super('GitLab');
  }

  /** Creates (or replaces) an empty project `group/…/name`; a `token` makes it private. */
  addProject(path: string, options: { defaultBranch?: string; token?: string } = {}): number {
    const id = this.nextProjectId++;
    const project: Project = {
      id,
      path,
      defaultBranch: options.defaultBranch ?? 'main',
      token: options.token,
      heads: new Map(),
      tags: new Map(),
      archives: new Map(),
      pipelines: [],
      jobs: new Map(),
    };
    this.projects.set(path.toLowerCase(), project);
    this.projects.set(String(id), project);
    return id;
  }

  /** Makes a commit holding `files`, pointing the branch and/or tag at it; returns its SHA. */
  push(path: string, push: { branch?: string; tag?: string; files: Record<string, string> }): string {
    const project = this.project(path);
    const sha = createHash('sha1').update(randomBytes(16)).digest('hex');
    const folder = `${path.split('/').pop()}-${sha}-${sha}/`;
    project.archives.set(
      sha,
      buildZip([
        { name: folder },
        ...Object.entries(push.files).map(([name, data]) => ({ name: `${folder}${name}`, data })),
      ]),
    );
    if (push.branch !== undefined) {
      project.heads.set(push.branch, sha);
    }
    if (push.tag !== undefined) {
      project.tags.set(push.tag, sha);
    }
    return sha;
  }

  /** Creates or replaces the project's pipelines (and their jobs). */
  setPipelines(path: string, pipelines: FakeGitlabPipeline[]): void {
    const project = this.project(path);
    project.jobs.clear();
    project.pipelines = pipelines.map((pipeline) => this.pipelineJson(project, pipeline));
    for (const pipeline of pipelines) {
      for (const job of pipeline.jobs ?? []) {
        project.jobs.set(job.id, { job, pipelineId: pipeline.id });
      }
    }
  }

  /** The project's API id as a crate names it: its path, URL-encoded. */
  static resource(path: string): string {
    return encodeURIComponent(path);
  }

  protected route(request: FakeRequest): FakeAnswer {
    const s = request.segments;
    if (s[0] !== 'api' || s[1] !== 'v4' || s[2] !== 'projects' || s.length < 4) {
      return notFound('404 Not Found');
    }
    const project = this.projects.get(s[3].toLowerCase());
    if (!project || (project.token !== undefined && tokenOf(request) !== project.token)) {
      return notFound('404 Project Not Found');
    }
    const rest = s.slice(4);
    const query = request.query;
    if (request.method === 'POST' && rest[0] === 'pipeline' && rest.length === 1) {
      return this.createPipeline(project, request);
    }
    if (request.method !== 'GET') {
      return notFound('404 Not Found');
    }
    if (rest.length === 0) {
      return { status: 200, body: this.projectJson(project) };
    }
    if (rest[0] === 'repository') {
      return this.repository(project, rest.slice(1), query);
    }
    if (rest[0] === 'pipelines' && rest.length === 1) {
      const ref = query.get('ref');
      const after = query.get('updated_after');
      const perPage = Number(query.get('per_page') ?? 20);
      const listed = project.pipelines
        .filter((pipeline) => ref === null || pipeline.ref === ref)
        .filter((pipeline) => after === null || String(pipeline.updated_at) > new Date(after).toISOString())
        .sort((a, b) => Number(b.id) - Number(a.id))
        .slice(0, perPage)
        .map(basicPipeline);
      return { status: 200, body: listed };
    }
    if (rest[0] === 'pipelines' && rest[2] === 'jobs' && rest.length === 3) {
      const pipeline = project.pipelines.find((candidate) => String(candidate.id) === rest[1]);
      if (!pipeline) {
        return notFound('404 Not found');
      }
      const jobs = [...project.jobs.values()]
        .filter((entry) => entry.pipelineId === pipeline.id)
        .sort((a, b) => b.job.id - a.job.id)
        .map((entry) => this.jobJson(project, pipeline, entry.job));
      return { status: 200, body: jobs };
    }
    if (rest[0] === 'jobs' && rest[2] === 'trace' && rest.length === 3) {
      const trace = project.jobs.get(Number(rest[1]))?.job.trace;
      if (trace === undefined) {
        return notFound('404 Not found');
      }
      const headers = { 'content-type': 'text/plain; charset=utf-8' };
      return typeof trace === 'string'
        ? { status: 200, text: trace, headers }
        : { status: 200, stream: trace, headers };
    }
    return notFound('404 Not Found');
  }

  private repository(project: Project, rest: string[], query: URLSearchParams): FakeAnswer {
    const [what, name] = rest;
    if ((what === 'branches' || what === 'tags') && rest.length <= 2) {
      const refs = what === 'branches' ? project.heads : project.tags;
      const toJson = (ref: string, sha: string) =>
        what === 'branches' ? this.branchJson(project, ref, sha) : this.tagJson(project, ref, sha);
      if (name !== undefined) {
        const sha = refs.get(name);
        return sha === undefined
          ? notFound(what === 'branches' ? '404 Branch Not Found' : '404 Tag Not Found')
          : { status: 200, body: toJson(name, sha) };
      }
      const perPage = Number(query.get('per_page') ?? 20);
      const page = Number(query.get('page') ?? 1);
      const all = [...refs.entries()].sort(([a], [b]) => a.localeCompare(b));
      const pages = Math.max(1, Math.ceil(all.length / perPage));
      // Endless: every page repeats the first, plus a ref of its own (so that no two pages are alike).
      const shown: [string, string][] = this.endlessPages
        ? [...all.slice(0, perPage - 1), [`endless-${page}`, all[0]?.[1] ?? '0'.repeat(40)]]
        : all.slice((page - 1) * perPage, page * perPage);
      const next = this.endlessPages || page < pages ? String(page + 1) : '';
      return {
        status: 200,
        body: shown.map(([ref, sha]) => toJson(ref, sha)),
        headers: { 'x-next-page': next, 'x-page': String(page), 'x-per-page': String(perPage) },
      };
    }
    if (what === 'commits' && rest.length === 2) {
      const sha =
        project.heads.get(name) ?? project.tags.get(name) ?? (project.archives.has(name) ? name : undefined);
      return sha === undefined
        ? notFound('404 Commit Not Found')
        : { status: 200, body: this.commitJson(project, sha) };
    }
    if (what === 'archive.zip' && rest.length === 1) {
      const archive = project.archives.get(query.get('sha') ?? '');
      return archive
        ? { status: 200, bytes: archive, headers: { 'content-type': 'application/zip' } }
        : notFound('404 File Not Found');
    }
    return notFound('404 Not Found');
  }

  private createPipeline(project: Project, request: FakeRequest): FakeAnswer {
    const ref = request.query.get('ref');
    this.triggers.push({ project: project.path, ref });
    if (tokenOf(request) === undefined) {
      return { status: 401, body: { message: '401 Unauthorized' } };
    }
    if (ref === null || !(project.heads.has(ref) || project.tags.has(ref))) {
      return { status: 400, body: { message: { base: ['Reference not found'] } } };
    }
    const pipeline = this.pipelineJson(project, {
      id: this.nextPipelineId++,
      status: 'created',
      ref,
      createdAt: new Date(),
    });
    project.pipelines.push(pipeline);
    return { status: 201, body: pipeline };
  }

  private project(path: string): Project {
    const project = this.projects.get(path.toLowerCase());
    if (!project) {
      throw new Error(`no project ${path}`);
    }
    return project;
  }

  private web(project: Project): string {
    return `${this.url}/${project.path}`;
  }

  private projectJson(project: Project): Json {
    const name = project.path.split('/').pop() ?? project.path;
    return {
      ...TEMPLATES.project,
      id: project.id,
      name,
      path: name,
      path_with_namespace: project.path,
      default_branch: project.heads.size > 0 ? project.defaultBranch : null,
      visibility: project.token === undefined ? 'public' : 'private',
      web_url: this.web(project),
    };
  }

  private commitJson(project: Project, sha: string): Json {
    const template = TEMPLATES.commit;
    return {
      ...template,
      id: sha,
      short_id: sha.slice(0, 8),
      message: String(template.title),
      committer_name: String(template.author_name),
      committer_email: String(template.author_email),
      web_url: `${this.web(project)}/-/commit/${sha}`,
    };
  }

  private branchJson(project: Project, name: string, sha: string): Json {
    return {
      name,
      commit: this.commitJson(project, sha),
      merged: false,
      protected: name === project.defaultBranch,
      default: name === project.defaultBranch,
      developers_can_push: false,
      developers_can_merge: false,
      can_push: true,
      web_url: `${this.web(project)}/-/tree/${encodeURIComponent(name)}`,
    };
  }

  private tagJson(project: Project, name: string, sha: string): Json {
    return { name, message: null, commit: this.commitJson(project, sha), release: null };
  }

  private pipelineJson(project: Project, pipeline: FakeGitlabPipeline): Json {
    const status = pipeline.status ?? 'success';
    const created = pipeline.createdAt ?? new Date(EPOCH + pipeline.id * 60_000);
    const started = status === 'created' || status === 'pending' ? null : new Date(created.getTime() + 5_000);
    const finished = FINISHED.has(status) && started ? new Date(started.getTime() + 90_000) : null;
    const sha = project.heads.get(pipeline.ref ?? project.defaultBranch) ?? '0'.repeat(40);
    return {
      ...TEMPLATES.pipeline,
      id: pipeline.id,
      iid: pipeline.id,
      project_id: project.id,
      status,
      source: 'push',
      ref: pipeline.ref ?? project.defaultBranch,
      sha,
      before_sha: sha,
      created_at: created.toISOString(),
      updated_at: (finished ?? started ?? created).toISOString(),
      started_at: started?.toISOString() ?? null,
      finished_at: finished?.toISOString() ?? null,
      duration: finished && started ? (finished.getTime() - started.getTime()) / 1000 : null,
      web_url: `${this.web(project)}/-/pipelines/${pipeline.id}`,
    };
  }

  private jobJson(project: Project, pipeline: Json, job: FakeGitlabJob): Json {
    const template = TEMPLATES.job;
    const user = template.user as Json;
    return {
      id: job.id,
      status: job.status,
      stage: job.stage,
      name: job.name,
      ref: pipeline.ref,
      tag: false,
      coverage: null,
      allow_failure: false,
      created_at: pipeline.created_at,
      started_at: pipeline.started_at,
      finished_at: pipeline.finished_at,
      erased_at: null,
      duration: pipeline.duration,
      queued_duration: 1.5,
      user: { id: user.id, state: user.state, avatar_url: user.avatar_url, web_url: user.web_url },
      commit: this.commitJson(project, String(pipeline.sha)),
      pipeline: basicPipeline(pipeline),
      web_url: `${this.web(project)}/-/jobs/${job.id}`,
      artifacts: [],
      artifacts_file: null,
      artifacts_expire_at: null,
      tag_list: job.tags ?? [],
      runner:
        job.runner === undefined
          ? null
          : {
              id: 40 + job.id,
              description: job.runner,
              ip_address: '127.0.0.1',
              active: true,
              is_shared: true,
              name: 'gitlab-runner',
              online: true,
              status: 'online',
            },
      project: { ci_job_token_scope_enabled: false },
      archived: false,
      ...(job.failureReason === undefined ? {} : { failure_reason: job.failureReason }),
    };
  }
}

/** A pipeline in the listing's (basic) representation, as `GET /pipelines` answers it. */
function basicPipeline(pipeline: Json): Json {
  const { id, iid, project_id, sha, ref, status, source, created_at, updated_at, web_url } = pipeline;
  return { id, iid, project_id, sha, ref, status, source, created_at, updated_at, web_url };
}

function tokenOf(request: FakeRequest): string | undefined {
  const header = request.headers['private-token'];
  if (typeof header === 'string') {
    return header;
  }
  const authorization = request.headers.authorization;
  return typeof authorization === 'string' && authorization.startsWith('Bearer ')
    ? authorization.slice('Bearer '.length)
    : undefined;
}

function notFound(message: string): FakeAnswer {
  return { status: 404, body: { message } };
}
