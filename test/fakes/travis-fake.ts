import type { Readable } from 'node:stream';
import { FakeServer, type FakeAnswer, type FakeRequest } from './fake-server.js';

/**
 * A fake Travis CI API v3, answering in the documented shapes (`@type`, `@href`,
 * `@representation`, `@pagination`; builds in the standard representation, the repository
 * minimal inside each build).
 *
 * Routes (under the fake's base URL, like `https://api.travis-ci.com`):
 * - `GET /repo/{id or url-encoded slug}/builds?limit=&offset=&branch.name=` → `{"@type": "builds", builds: […]}`, newest first
 *   (`branch.name` keeps the builds of that branch, or tag: Travis files tag builds under a branch of the tag's name)
 * - `GET /repo/{id or url-encoded slug}/branch/{name}` → the branch, when a build ran on it (404 otherwise)
 * - `GET /repo/{id or url-encoded slug}` → the repository
 * - `POST /repo/{id or url-encoded slug}/requests {"request": {"branch"}}` (API v3, `Authorization:
 *   token …`, else 403 `login_required`) → 202 `{"@type": "pending", …}` and a new build on that
 *   branch (`triggeredBuild`, default `created`); what each received is in `triggers`
 * - `GET /build/{id}` → the build with its jobs; `GET /build/{id}/jobs` → its jobs in the standard
 *   representation with their config (`name`, `state`, `config.os`, `config.dist`);
 *   `GET /job/{id}/log.txt` → the job's log as plain text (`setJobLog`), 404 when it has none
 * - anything else → 404 `{"@type": "error", "error_type": "not_found", …}`
 */

export interface FakeTravisBuild {
  id: number;
  /** Default `passed`. */
  state?: string;
  /** Default: a fixed date derived from the id; `null` for `created`/`received` builds. */
  startedAt?: string | Date | null;
  /** Seconds; default 120 for finished builds, `null` otherwise. */
  duration?: number | null;
  /** The branch it ran on (`branch.name`); default `main`. */
  branch?: string;
  /** `updated_at`; default the finish, else the start, else a fixed date. */
  updatedAt?: Date;
  /** The commit's SHA; default the fixture's. */
  sha?: string;
  /**
   * Its jobs (`GET /build/{id}/jobs`), ids `build id + 1 + position`; default one job without a
   * name in the build's state.
   */
  jobs?: FakeTravisJob[];
}

/** A job of a build: its `name` and state, and its config's `os` and `dist`. */
export interface FakeTravisJob {
  name?: string;
  /** Default: the build's. */
  state?: string;
  os?: string;
  dist?: string;
}

type Json = Record<string, unknown>;

interface RepoEntry {
  id: number;
  slug: string;
  builds: Json[];
  pages: Map<string, string>;
}

const EPOCH = Date.UTC(2024, 0, 1);
const UNSTARTED = new Set(['created', 'received']);
const UNFINISHED = new Set(['created', 'received', 'started']);

export class TravisFake extends FakeServer {
  /** Builds for repositories nobody set (by slug or id as requested); undefined → 404. */
  defaultBuilds?: (repository: string) => FakeTravisBuild[] | undefined;
  /** Build requests received: the repository as named in the path, the body, the API version header. */
  readonly triggers: { repository: string; body: unknown; apiVersion: unknown }[] = [];
  /** What a requested build looks like; default `created` (not started yet), requested now. */
  triggeredBuild: () => Omit<FakeTravisBuild, 'id' | 'branch'> = () => ({
    state: 'created',
    startedAt: null,
  });
  private nextBuildId = 9_000_000;
  /** job id → its log, or a function making a large one as it is read. */
  private readonly jobLogs = new Map<number, string | (() => Readable)>();

  private readonly repos = new Map<string, RepoEntry>();
  /** build id → its jobs, in the standard representation with their config. */
  private readonly jobsByBuild = new Map<string, Json[]>();
  private nextRepoId = 1000;

  constructor() {
    super('Travis');
  }

  /** Creates or replaces a repository's builds; answers its numeric id. */
  setRepo(slug: string, builds: FakeTravisBuild[], id?: number): number {
    const existing = this.repos.get(slug);
    const entry: RepoEntry = existing ?? { id: id ?? this.nextRepoId++, slug, builds: [], pages: new Map() };
    entry.builds = builds.map((build) => buildJson(entry, build)).sort((a, b) => Number(b.id) - Number(a.id));
    builds.forEach((build) => this.jobsByBuild.set(String(build.id), jobsJson(entry, build)));
    entry.pages.clear();
    this.repos.set(slug, entry);
    this.repos.set(String(entry.id), entry);
    return entry.id;
  }

  /** The log of a job (each build has one job, id `build id + 1`, see `jobIdOf`). */
  setJobLog(jobId: number, log: string | (() => Readable)): void {
    this.jobLogs.set(jobId, log);
  }

  /** The id of the one job the fake gives each build. */
  static jobIdOf(buildId: number): number {
    return buildId + 1;
  }

  removeRepo(slug: string): void {
    const entry = this.repos.get(slug);
    if (entry) {
      this.repos.delete(slug);
      this.repos.delete(String(entry.id));
    }
  }

  /** The `resource` of a test instance for this repository (slug URL-encoded, as Travis wants). */
  static resource(slug: string): string {
    return `repo/${encodeURIComponent(slug)}`;
  }

  /** The raw path the builds are requested on, for `count()` and `fail()`. */
  static buildsPath(slug: string): string {
    return `/${TravisFake.resource(slug)}/builds`;
  }

  protected route(request: FakeRequest): FakeAnswer {
    const s = request.segments;
    if (request.method === 'POST' && s[0] === 'repo' && s[2] === 'requests' && s.length === 3) {
      return this.requestBuild(request);
    }
    if (request.method === 'GET' && s[0] === 'build' && s.length === 3 && s[2] === 'jobs') {
      const jobs = this.jobsByBuild.get(s[1]);
      return jobs
        ? {
            status: 200,
            body: { '@type': 'jobs', '@href': `/build/${s[1]}/jobs`, '@representation': 'standard', jobs },
          }
        : notFound('build');
    }
    if (request.method === 'GET' && s[0] === 'build' && s.length === 2) {
      const build = [...this.repos.values()]
        .flatMap((entry) => entry.builds)
        .find((b) => String(b.id) === s[1]);
      return build ? { status: 200, body: build } : notFound('build');
    }
    if (request.method === 'GET' && s[0] === 'job' && s[2] === 'log.txt' && s.length === 3) {
      const log = this.jobLogs.get(Number(s[1]));
      if (log === undefined) {
        return notFound('log');
      }
      const headers = { 'content-type': 'text/plain' };
      return typeof log === 'string'
        ? { status: 200, text: log, headers }
        : { status: 200, stream: log, headers };
    }
    if (request.method === 'GET' && s[0] === 'repo' && s[2] === 'branch' && s.length >= 4) {
      const entry = this.lookup(s[1]);
      const name = s.slice(3).join('/');
      const ran = entry?.builds.some((build) => (build.branch as { name: string }).name === name);
      return entry && ran
        ? {
            status: 200,
            body: {
              '@type': 'branch',
              '@href': `/repo/${entry.id}/branch/${name}`,
              '@representation': 'standard',
              name,
              repository: repositoryJson(entry, 'minimal'),
              default_branch: name === 'main',
              exists_on_github: true,
            },
          }
        : notFound('branch');
    }
    if (
      request.method !== 'GET' ||
      s[0] !== 'repo' ||
      s.length < 2 ||
      s.length > 3 ||
      (s[2] ?? 'builds') !== 'builds'
    ) {
      return notFound('resource');
    }
    const entry = this.lookup(s[1]);
    if (!entry) {
      return notFound('repository');
    }
    if (s.length === 2) {
      return { status: 200, body: repositoryJson(entry, 'standard') };
    }
    const limit = Math.min(100, Math.max(1, Number(request.query.get('limit') ?? 25) || 25));
    const offset = Math.max(0, Number(request.query.get('offset') ?? 0) || 0);
    const branch = request.query.get('branch.name');
    const cacheKey = `${limit}:${offset}:${branch}`;
    let json = entry.pages.get(cacheKey);
    if (json === undefined) {
      const href = (at: number): string => `/repo/${entry.id}/builds?limit=${limit}&offset=${at}`;
      const all =
        branch === null
          ? entry.builds
          : entry.builds.filter((build) => (build.branch as { name: string }).name === branch);
      const count = all.length;
      const lastOffset = Math.max(0, Math.floor((count - 1) / limit) * limit);
      json = JSON.stringify({
        '@type': 'builds',
        '@href': href(offset),
        '@representation': 'standard',
        '@pagination': {
          limit,
          offset,
          count,
          is_first: offset === 0,
          is_last: offset + limit >= count,
          next:
            offset + limit < count ? { '@href': href(offset + limit), offset: offset + limit, limit } : null,
          prev:
            offset > 0
              ? { '@href': href(Math.max(0, offset - limit)), offset: Math.max(0, offset - limit), limit }
              : null,
          first: { '@href': href(0), offset: 0, limit },
          last: { '@href': href(lastOffset), offset: lastOffset, limit },
        },
        builds: all.slice(offset, offset + limit),
      });
      entry.pages.set(cacheKey, json);
    }
    return { status: 200, text: json };
  }

  private requestBuild(request: FakeRequest): FakeAnswer {
    const repository = request.segments[1];
    let body: unknown;
    try {
      body = JSON.parse(request.body) as unknown;
    } catch {
      body = undefined;
    }
    this.triggers.push({ repository, body, apiVersion: request.headers['travis-api-version'] });
    if (!request.headers.authorization?.startsWith('token ')) {
      return {
        status: 403,
        body: { '@type': 'error', error_type: 'login_required', error_message: 'login required' },
      };
    }
    const entry = this.lookup(repository);
    if (!entry) {
      return notFound('repository');
    }
    const branch =
      typeof body === 'object' &&
      body !== null &&
      typeof (body as { request?: { branch?: unknown } }).request?.branch === 'string'
        ? (body as { request: { branch: string } }).request.branch
        : 'main';
    const id = this.nextBuildId++;
    entry.builds = [buildJson(entry, { ...this.triggeredBuild(), id, branch }), ...entry.builds];
    entry.pages.clear();
    return {
      status: 202,
      body: {
        '@type': 'pending',
        remaining_requests: 9,
        repository: repositoryJson(entry, 'minimal'),
        request: {
          repository: { id: entry.id, owner_name: entry.slug.split('/')[0] },
          user: { id: 1 },
          id: id + 500,
          message: null,
          branch,
          config: {},
        },
        resource_type: 'request',
      },
    };
  }

  private lookup(repository: string): RepoEntry | undefined {
    const found = this.repos.get(repository);
    if (found) {
      return found;
    }
    const generated = this.defaultBuilds?.(repository);
    if (generated === undefined) {
      return undefined;
    }
    const numeric = /^\d+$/.test(repository);
    const id = this.setRepo(
      numeric ? `owner/repo-${repository}` : repository,
      generated,
      numeric ? Number(repository) : undefined,
    );
    return this.repos.get(String(id));
  }
}

function repositoryJson(entry: RepoEntry, representation: 'minimal' | 'standard'): Json {
  const [owner, name] = entry.slug.split('/');
  const minimal = {
    '@type': 'repository',
    '@href': `/repo/${entry.id}`,
    '@representation': representation,
    id: entry.id,
    name: name ?? entry.slug,
    slug: entry.slug,
  };
  if (representation === 'minimal') {
    return minimal;
  }
  return {
    ...minimal,
    description: null,
    github_id: entry.id + 100_000,
    vcs_type: 'GithubRepository',
    owner_name: owner,
    private: false,
    active: true,
    default_branch: {
      '@type': 'branch',
      '@href': `/repo/${entry.id}/branch/main`,
      '@representation': 'minimal',
      name: 'main',
    },
  };
}

function buildJson(entry: RepoEntry, build: FakeTravisBuild): Json {
  const state = build.state ?? 'passed';
  const finished = !UNFINISHED.has(state);
  const started =
    build.startedAt === undefined
      ? UNSTARTED.has(state)
        ? null
        : new Date(EPOCH + (build.id % 1_000_000) * 1000)
      : build.startedAt === null
        ? null
        : new Date(build.startedAt);
  const duration = build.duration !== undefined ? build.duration : finished ? 120 : null;
  const finishedAt =
    finished && started && duration !== null ? new Date(started.getTime() + duration * 1000) : null;
  return {
    '@type': 'build',
    '@href': `/build/${build.id}`,
    '@representation': 'standard',
    '@permissions': { read: true, cancel: false, restart: false },
    id: build.id,
    number: String(build.id % 100_000),
    state,
    duration,
    event_type: 'push',
    previous_state: 'passed',
    pull_request_title: null,
    pull_request_number: null,
    started_at: started ? iso(started) : null,
    finished_at: finishedAt ? iso(finishedAt) : null,
    private: false,
    priority: false,
    repository: repositoryJson(entry, 'minimal'),
    branch: {
      '@type': 'branch',
      '@href': `/repo/${entry.id}/branch/${build.branch ?? 'main'}`,
      '@representation': 'minimal',
      name: build.branch ?? 'main',
    },
    tag: null,
    commit: {
      '@type': 'commit',
      '@representation': 'minimal',
      id: build.id + 5_000_000,
      sha: build.sha ?? 'acb5820ced9479c074f688cc328bf03f341a511d',
      ref: 'refs/heads/main',
      message: 'Update README.md',
      compare_url: `https://github.com/${entry.slug}/compare/main`,
      committed_at: started ? iso(started) : '2024-01-01T00:00:00Z',
    },
    jobs: (build.jobs ?? [{}]).map((_job, at) => ({
      '@type': 'job',
      '@href': `/job/${build.id + 1 + at}`,
      '@representation': 'minimal',
      id: build.id + 1 + at,
    })),
    stages: [],
    created_by: {
      '@type': 'user',
      '@href': '/user/1',
      '@representation': 'minimal',
      id: 1,
      login: 'octocat',
    },
    updated_at: iso(build.updatedAt ?? finishedAt ?? started ?? new Date(EPOCH)),
  };
}

function jobsJson(entry: RepoEntry, build: FakeTravisBuild): Json[] {
  const state = build.state ?? 'passed';
  return (build.jobs ?? [{}]).map((job, at) => ({
    '@type': 'job',
    '@href': `/job/${build.id + 1 + at}`,
    '@representation': 'standard',
    id: build.id + 1 + at,
    number: `${build.id % 100_000}.${at + 1}`,
    ...(job.name === undefined ? {} : { name: job.name }),
    state: job.state ?? state,
    started_at: UNSTARTED.has(job.state ?? state)
      ? null
      : iso(new Date(EPOCH + (build.id % 1_000_000) * 1000)),
    finished_at: UNFINISHED.has(job.state ?? state)
      ? null
      : iso(new Date(EPOCH + (build.id % 1_000_000) * 1000 + 120_000)),
    allow_failure: false,
    build: { '@type': 'build', '@href': `/build/${build.id}`, '@representation': 'minimal', id: build.id },
    repository: repositoryJson(entry, 'minimal'),
    config: {
      language: 'python',
      ...(job.os === undefined ? {} : { os: job.os }),
      ...(job.dist === undefined ? {} : { dist: job.dist }),
    },
  }));
}

function iso(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function notFound(resourceType: string): FakeAnswer {
  return {
    status: 404,
    body: {
      '@type': 'error',
      error_type: 'not_found',
      error_message: `${resourceType} not found (or insufficient access)`,
      resource_type: resourceType,
    },
  };
}
