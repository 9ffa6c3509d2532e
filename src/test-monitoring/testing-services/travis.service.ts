import { Injectable } from '@nestjs/common';
import {
  isFailingStatus,
  isFinishedStatus,
  type Build,
  type BuildCheckRequest,
  type BuildCheckResult,
  type BuildDetailsRequest,
  type BuildDetailsResult,
  type BuildLogRequest,
  type BuildLogResult,
  LogStreamError,
  type ResourceTarget,
  type TriggerRequest,
  type TriggerResult,
  type UpstreamFault,
  normalizeServiceUrl,
  RegisterTestingService,
} from './testing-service.js';
import type { InstanceTarget } from '../../crates/index.js';
import { splitJobSelector, withJobSelector } from '../../common/job-selector.js';
import { selectJobs, withSelectedJobs } from './job-builds.js';
import { commitShaOf, githubPageOf, NO_SUCH_BUILD, TRAVIS_STATES, travisJobsOf } from './travis-jobs.js';
import { inRegistrationWindow, MissingRefs } from '../build-selection.js';
import {
  buildLimit,
  isRecord,
  joinUrl,
  resourceSegments,
  toDate,
  contentTypeOf,
  faultOfTrouble,
  HttpTestingService,
  type UpstreamCall,
  type UpstreamGet,
  type UpstreamTrouble,
} from './upstream.js';

/** API hosts whose web pages live on another host; any other API's pages share its origin. */
const WEB_HOSTS: Readonly<Record<string, string>> = {
  'api.travis-ci.com': 'app.travis-ci.com',
  'api.travis-ci.org': 'travis-ci.org',
};

/**
 * Where the build pages of a Travis API live: `https://api.travis-ci.com` → `https://app.travis-ci.com`
 * (and the retired `.org` likewise); Travis CI Enterprise serves its API under `/api` of the web
 * host, so for any other API URL the web pages are on the API's origin.
 */
export function travisWebBase(apiUrl: string): string {
  const url = new URL(apiUrl);
  const host = WEB_HOSTS[url.hostname.toLowerCase()];
  return host === undefined ? url.origin : `${url.protocol}//${host}`;
}

/** Travis's web sites, which crates name as the instance `url`: each means the API of travis-ci.com (API.md 7.1). */
const WEB_SITES = new Set([
  'travis-ci.com',
  'www.travis-ci.com',
  'app.travis-ci.com',
  'travis-ci.org',
  'www.travis-ci.org',
]);
const PUBLIC_API = 'https://api.travis-ci.com';

/**
 * Travis CI, API v3 (API.md 2.8): `resource` is `repo/{id}` or `repo/{slug}` with the slug
 * URL-encoded (`repo/owner%2Fname`); an unencoded `repo/owner/name` is accepted too.
 */
@RegisterTestingService()
@Injectable()
export class TravisService extends HttpTestingService {
  readonly type = 'travis';
  readonly settings = ['token'] as const;
  private readonly missingRefs = new MissingRefs();

  /**
   * API.md 7.1: a web-site URL (`https://travis-ci.com`, `https://app.travis-ci.com`, the retired
   * `https://travis-ci.org`, whose repositories moved to .com) means the API; a resource
   * `github/{owner}/{repo}` (the path of the repository's web page) means the repository's slug.
   */
  resourceProblem(resource: string): string | undefined {
    return repositoryOf(resource) === undefined ? notARepository(resource) : undefined;
  }

  canonicalTarget(target: InstanceTarget): InstanceTarget {
    let url = target.url;
    try {
      const parsed = new URL(target.url);
      if (WEB_SITES.has(parsed.hostname.toLowerCase()) && /^\/*$/.test(parsed.pathname)) {
        url = PUBLIC_API;
      }
    } catch {
      // Not a URL: the parser refuses it before this is asked.
    }
    const { resource: path, glob } = splitJobSelector(target.resource);
    const web = /^\/*github\/([^/]+)\/([^/]+?)\/*$/.exec(path.trim());
    const resource = web ? `repo/${encodeURIComponent(`${web[1]}/${web[2]}`)}` : path;
    return { url, resource: withJobSelector(resource, glob) };
  }

  /**
   * The repository's page: `{web}/github/{owner}/{name}` by slug (the web site of the API, see
   * travisWebBase); for a numeric id, the web site itself.
   */
  override resourcePage(target: ResourceTarget): string | undefined {
    let web: string;
    try {
      web = travisWebBase(target.serviceUrl);
    } catch {
      return undefined;
    }
    const repository = repositoryOf(target.resource);
    return repository?.includes('/') ? `${web}/github/${repository}` : web;
  }

  /**
   * API.md 11: a build request on the version's branch (the first of the selection's refs Travis
   * has a branch of, else the repository's default branch), API v3:
   * `POST {url}/repo/{id or slug}/requests {"request": {"branch"}}` with `Travis-API-Version: 3`
   * → 202. Needs the service's token in TESTING_SERVICES_FILE.
   */
  override async triggerBuild(request: TriggerRequest): Promise<TriggerResult> {
    const repository = repositoryOf(request.resource);
    if (repository === undefined) {
      return { kind: 'unavailable', reason: notARepository(request.resource) };
    }
    const token = this.http.credentials(request)?.token;
    if (!token) {
      return this.noCredentials(request.serviceUrl);
    }
    const now = request.now ?? new Date();
    const base = {
      headers: { accept: 'application/json', 'travis-api-version': '3' },
      authorization: `token ${token}`,
      allowPrivate: this.http.allowPrivate(request.serviceUrl),
      timeoutMs: this.http.timeoutMs,
      now,
    };
    const branch = await this.requestBranch(request, repository, base);
    if (typeof branch !== 'string') {
      return branch;
    }
    const call: UpstreamCall = {
      ...base,
      method: 'POST',
      url: joinUrl(request.serviceUrl, ['repo', repository, 'requests']),
      json: { request: { branch } },
    };
    return this.http.start(call, 'request');
  }

  /**
   * The logs of the build's jobs, in the build's job order (`GET {url}/build/{id}` for its jobs,
   * then `GET {url}/job/{id}/log.txt` of each, which Travis may redirect to its log storage). A
   * job without a log is skipped; `none` when the build is unknown or its first job has no log.
   */
  override async buildLog(request: BuildLogRequest): Promise<BuildLogResult> {
    if (repositoryOf(request.resource) === undefined) {
      return { kind: 'unavailable', reason: notARepository(request.resource) };
    }
    if (!/^\d+$/.test(request.buildId)) {
      return { kind: 'none', reason: `'${request.buildId}' is not a Travis build id` };
    }
    const token = this.http.credentials(request)?.token;
    const now = request.now ?? new Date();
    const base = {
      headers: { accept: 'application/json', 'travis-api-version': '3' },
      authorization: token ? `token ${token}` : undefined,
      allowPrivate: this.http.allowPrivate(request.serviceUrl),
      timeoutMs: this.http.timeoutMs,
      now,
    };
    const build = await this.http.getJson({
      ...base,
      url: joinUrl(request.serviceUrl, ['build', request.buildId]),
      notFound: NO_SUCH_BUILD,
    });
    if (build.kind === 'failed' && build.reason === `${NO_SUCH_BUILD} (404)`) {
      return { kind: 'none', reason: `Travis has no build ${request.buildId}` };
    }
    if (build.kind !== 'json') {
      return faultOfTrouble(build);
    }
    const jobs = isRecord(build.body) && Array.isArray(build.body.jobs) ? build.body.jobs : [];
    let jobIds = jobs.flatMap((job) => (isRecord(job) && typeof job.id === 'number' ? [job.id] : []));
    const glob = splitJobSelector(request.resource).glob;
    if (glob !== undefined) {
      // API.md 16: the selected jobs' logs only; their names are in the jobs listing.
      const listed = await travisJobsOf(this.http, request.serviceUrl, request.buildId, base);
      if (listed.kind !== 'jobs') {
        return faultOfTrouble(listed);
      }
      jobIds = selectJobs(listed.jobs, glob).flatMap((job) => (job.id === undefined ? [] : [job.id]));
    }
    const open = async (jobId: number) => {
      const call: UpstreamCall = {
        ...base,
        method: 'GET',
        headers: { accept: 'text/plain', 'travis-api-version': '3' },
        url: joinUrl(request.serviceUrl, ['job', String(jobId), 'log.txt']),
        signal: request.signal,
      };
      const answer = await this.http.open(call);
      if (answer.kind !== 'answer') {
        return answer;
      }
      if (answer.status === 404) {
        answer.done();
        return undefined;
      }
      if (answer.status < 200 || answer.status >= 300) {
        const fault = await this.http.fault(answer, call);
        answer.done();
        return fault;
      }
      return answer;
    };
    const first = jobIds.length === 0 ? undefined : await open(jobIds[0]);
    if (first === undefined) {
      return { kind: 'none', reason: `Travis keeps no log of build ${request.buildId}` };
    }
    if (first.kind !== 'answer') {
      return first;
    }
    const firstChunks = first.chunks;
    async function* chunks(): AsyncGenerator<Buffer> {
      yield* firstChunks;
      for (const jobId of jobIds.slice(1)) {
        const next = await open(jobId);
        if (next === undefined) {
          continue;
        }
        if (next.kind !== 'answer') {
          throw new LogStreamError(next.kind === 'timeout' ? 'timeout' : 'refused', next.reason);
        }
        yield* next.chunks;
      }
    }
    return { kind: 'log', contentType: contentTypeOf(first.headers), chunks: chunks() };
  }

  /** The first of the selection's refs that is a branch Travis knows, else the default branch. */
  private async requestBranch(
    request: TriggerRequest,
    repository: string,
    base: Omit<UpstreamGet, 'url' | 'notFound'>,
  ): Promise<string | UpstreamFault> {
    for (const ref of request.selection?.refs ?? []) {
      const branch = await this.http.getJson({
        ...base,
        url: joinUrl(request.serviceUrl, ['repo', repository, 'branch', ref]),
        notFound: NO_SUCH_BRANCH,
      });
      if (branch.kind === 'json') {
        return ref;
      }
      if (branch.kind !== 'failed' || branch.reason !== `${NO_SUCH_BRANCH} (404)`) {
        return faultOfTrouble(branch);
      }
    }
    const answer = await this.http.getJson({
      ...base,
      url: joinUrl(request.serviceUrl, ['repo', repository]),
      notFound: `repository ${repository} not found`,
    });
    if (answer.kind !== 'json') {
      return faultOfTrouble(answer);
    }
    const branch =
      isRecord(answer.body) && isRecord(answer.body.default_branch)
        ? answer.body.default_branch.name
        : undefined;
    return typeof branch === 'string' && branch !== ''
      ? branch
      : { kind: 'refused', reason: `the Travis answer for ${repository} has no default_branch` };
  }

  /**
   * One request: `GET {url}/repo/{id or slug}/builds?limit=N` (conditional on `etag`), newest
   * build first. `duration` is Travis's own, in whole seconds (0 until the build finishes);
   * `startedAt` falls back to `updated_at`, then to the check time, for builds not started yet.
   * Resolves `failed` for a 404 ("repository not found"), a 5xx, a timeout or a refused address;
   * `rate_limited` on a 429 or an exhausted rate-limit header.
   */
  async latestBuilds(request: BuildCheckRequest): Promise<BuildCheckResult> {
    const listed = await this.listedBuilds(request);
    const glob = splitJobSelector(request.resource).glob;
    return listed.kind === 'builds' && glob !== undefined
      ? withSelectedJobs(listed, request, glob, (buildId) =>
          travisJobsOf(
            this.http,
            request.serviceUrl,
            buildId,
            this.requestBase(request, request.now ?? new Date()),
          ),
        )
      : listed;
  }

  /**
   * API.md 16: what a build ran: its commit (`GET /build/{id}`; the repository's page is its
   * GitHub page when the commit's `compare_url` is on github.com) and its jobs
   * (`GET /build/{id}/jobs?include=job.config`, the selected ones when the resource selects jobs),
   * with the `os` and `dist` of the first that ran as the runner. `none` for a build Travis does
   * not know.
   */
  override async buildDetails(request: BuildDetailsRequest): Promise<BuildDetailsResult> {
    if (repositoryOf(request.resource) === undefined) {
      return { kind: 'unavailable', reason: notARepository(request.resource) };
    }
    if (!/^\d+$/.test(request.buildId)) {
      return { kind: 'none', reason: `'${request.buildId}' is not a Travis build id` };
    }
    const base = this.requestBase(request, request.now ?? new Date());
    const build = await this.http.getJson({
      ...base,
      url: joinUrl(request.serviceUrl, ['build', request.buildId]),
      notFound: NO_SUCH_BUILD,
    });
    if (build.kind === 'failed' && build.reason === `${NO_SUCH_BUILD} (404)`) {
      return { kind: 'none', reason: `Travis has no build ${request.buildId}` };
    }
    if (build.kind !== 'json' || !isRecord(build.body)) {
      return build.kind === 'json'
        ? { kind: 'refused', reason: 'the Travis answer is not a build' }
        : faultOfTrouble(build);
    }
    const listed = await travisJobsOf(this.http, request.serviceUrl, request.buildId, base);
    if (listed.kind !== 'jobs') {
      return faultOfTrouble(listed);
    }
    const glob = splitJobSelector(request.resource).glob;
    const jobs = glob === undefined ? listed.jobs : selectJobs(listed.jobs, glob);
    return {
      kind: 'details',
      details: {
        headSha: commitShaOf(build.body),
        repositoryPage: githubPageOf(build.body),
        runner: jobs.find((job) => job.status !== 'skipped')?.runner,
        jobs,
      },
    };
  }

  private requestBase(
    request: { serviceUrl: string; credentials?: BuildCheckRequest['credentials'] },
    now: Date,
  ): Omit<UpstreamGet, 'url' | 'notFound'> {
    const token = this.http.credentials(request)?.token;
    return {
      headers: { accept: 'application/json', 'travis-api-version': '3' },
      authorization: token ? `token ${token}` : undefined,
      allowPrivate: this.http.allowPrivate(request.serviceUrl),
      timeoutMs: this.http.timeoutMs,
      now,
    };
  }

  private async listedBuilds(request: BuildCheckRequest): Promise<BuildCheckResult> {
    const repository = repositoryOf(request.resource);
    if (repository === undefined) {
      return { kind: 'failed', reason: notARepository(request.resource) };
    }
    const now = request.now ?? new Date();
    let webBase: string;
    try {
      webBase = travisWebBase(request.serviceUrl);
    } catch {
      return { kind: 'failed', reason: `not a valid URL: ${request.serviceUrl.slice(0, 200)}` };
    }
    const token = this.http.credentials(request)?.token;
    const base = {
      headers: { accept: 'application/json', 'travis-api-version': '3' },
      authorization: token ? `token ${token}` : undefined,
      allowPrivate: this.http.allowPrivate(request.serviceUrl),
      timeoutMs: this.http.timeoutMs,
      now,
    };
    const fallbackSlug = /^\d+$/.test(repository) ? undefined : repository;
    const list = async (
      filter: string,
      etag: string | undefined,
    ): Promise<TravisListing | UpstreamTrouble> => {
      const answer = await this.http.getJson({
        ...base,
        url: joinUrl(
          request.serviceUrl,
          ['repo', repository, 'builds'],
          `limit=${buildLimit(request)}${filter}`,
        ),
        etag,
        notFound: `repository ${repository} not found`,
      });
      if (answer.kind !== 'json') {
        return answer;
      }
      const rawBuilds = isRecord(answer.body) ? answer.body.builds : undefined;
      if (!Array.isArray(rawBuilds)) {
        return { kind: 'failed', reason: 'the Travis answer has no builds list' };
      }
      const builds = (rawBuilds as unknown[])
        .map((raw) => ({ raw, build: toBuild(raw, webBase, fallbackSlug, now) }))
        .filter((entry): entry is { raw: unknown; build: Build } => entry.build !== undefined)
        .sort((a, b) => Number(b.build.buildId) - Number(a.build.buildId));
      return { kind: 'listing', builds, etag: answer.etag };
    };
    const selection = request.selection;
    if (!selection) {
      const listing = await list('', request.etag);
      return listing.kind === 'listing'
        ? { kind: 'builds', builds: listing.builds.map((entry) => entry.build), etag: listing.etag }
        : listing;
    }
    // API.md 7.2: the builds of the first candidate ref Travis knows (tag builds are filed under a
    // branch of the tag's name), else those of the registration window. Travis's API cannot filter
    // by time: the window keeps what the latest builds hold of it.
    const refKey = (ref: string) => `${normalizeServiceUrl(request.serviceUrl)} ${repository} ${ref}`;
    const refs = selection.refs.filter((ref) => !this.missingRefs.has(refKey(ref), now));
    for (const [index, ref] of refs.entries()) {
      let listing = await list(
        `&branch.name=${encodeURIComponent(ref)}`,
        index === 0 ? request.etag : undefined,
      );
      if (listing.kind === 'not_modified') {
        // As for GitHub: with no build stored, "unchanged" can only mean "no builds of the ref".
        if ((request.knownBuildIds?.size ?? 0) > 0) {
          return listing;
        }
        listing = { kind: 'listing', builds: [] };
      }
      if (listing.kind !== 'listing') {
        return listing;
      }
      const kept = listing.builds.filter(
        (entry) => branchOf(entry.raw) === undefined || branchOf(entry.raw) === ref,
      );
      if (kept.length > 0) {
        return { kind: 'builds', builds: kept.map((entry) => entry.build), etag: listing.etag };
      }
      const branch = await this.http.getJson({
        ...base,
        url: joinUrl(request.serviceUrl, ['repo', repository, 'branch', ref]),
        notFound: NO_SUCH_BRANCH,
      });
      if (branch.kind === 'json') {
        return { kind: 'builds', builds: [], etag: listing.etag };
      }
      if (branch.kind !== 'failed' || branch.reason !== `${NO_SUCH_BRANCH} (404)`) {
        return branch.kind === 'not_modified' ? { kind: 'builds', builds: [] } : branch;
      }
      this.missingRefs.remember(refKey(ref), now);
    }
    const listing = await list('', refs.length === 0 ? request.etag : undefined);
    if (listing.kind !== 'listing') {
      return listing;
    }
    return {
      kind: 'builds',
      builds: listing.builds
        .map((entry) => entry.build)
        .filter((build) => inRegistrationWindow(selection, build.startedAt)),
      etag: listing.etag,
    };
  }
}

/** The not-found reason of a branch lookup: a 404 there is an answer (no such branch), not a failure. */
const NO_SUCH_BRANCH = 'no such branch';

interface TravisListing {
  kind: 'listing';
  /** Each build with the raw object it came from (its branch is read from there). */
  builds: { raw: unknown; build: Build }[];
  etag?: string;
}

/** `branch.name` of a raw build, when it has one. */
function branchOf(raw: unknown): string | undefined {
  return isRecord(raw) && isRecord(raw.branch) && typeof raw.branch.name === 'string'
    ? raw.branch.name
    : undefined;
}

function toBuild(
  raw: unknown,
  webBase: string,
  fallbackSlug: string | undefined,
  now: Date,
): Build | undefined {
  if (!isRecord(raw) || typeof raw.id !== 'number') {
    return undefined;
  }
  const state = typeof raw.state === 'string' ? raw.state : '';
  // A state Travis adds later is final once the build has a finish time, pending before.
  const status = TRAVIS_STATES[state] ?? (toDate(raw.finished_at) ? 'error' : 'waiting');
  const slug =
    isRecord(raw.repository) && typeof raw.repository.slug === 'string' ? raw.repository.slug : fallbackSlug;
  return {
    buildId: String(raw.id),
    status,
    startedAt: toDate(raw.started_at) ?? toDate(raw.updated_at) ?? now,
    durationSeconds:
      isFinishedStatus(status) && typeof raw.duration === 'number'
        ? Math.max(0, Math.round(raw.duration))
        : 0,
    // Without a slug (a numeric resource and a minimal answer) the repository page is unknown.
    url: slug === undefined ? `${webBase}/builds/${raw.id}` : `${webBase}/${slug}/builds/${raw.id}`,
    headSha: commitShaOf(raw),
    ...(isFailingStatus(status) && state !== '' ? { ciFields: [`state: ${state}`] } : {}),
  };
}

/** The id or slug of a `repo/{id or slug}` resource, whatever job selector it ends with (API.md 16). */
function repositoryOf(resource: string): string | undefined {
  const segments = resourceSegments(splitJobSelector(resource).resource);
  if (segments === undefined || segments[0] !== 'repo' || segments.length < 2 || segments.length > 3) {
    return undefined;
  }
  return segments.slice(1).join('/');
}

function notARepository(resource: string): string {
  return `'${resource}' is not a Travis repository (repo/{id or slug})`;
}
