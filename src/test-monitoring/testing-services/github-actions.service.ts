import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import {
  type BuildCheckRequest,
  type BuildCheckResult,
  type BuildDetailsRequest,
  type BuildDetailsResult,
  type BuildLogRequest,
  type BuildLogResult,
  type ResourceTarget,
  type TriggerRequest,
  type TriggerResult,
  type UpstreamFault,
  findConfiguredService,
  normalizeServiceUrl,
  RegisterTestingService,
} from './testing-service.js';
import type { InstanceTarget } from '../../crates/index.js';
import { splitJobSelector, withJobSelector } from '../../common/job-selector.js';
import { inRegistrationWindow, MissingRefs } from '../build-selection.js';
import { jobLogs } from './log-archive.js';
import { withSelectedJobs } from './job-builds.js';
import { githubBuildDetails, githubJobsOf, type GithubRequestBase } from './github-jobs.js';
import { githubWorkflowDisabled, stateReadDue } from './github-workflow-state.js';

export { STATE_PERIOD_MS, stateReadDue } from './github-workflow-state.js';
import {
  buildIdOf,
  githubTime,
  githubWebBase,
  isGithubWebSite,
  notAWorkflow,
  parseRun,
  toBuild,
  workflowOf,
  type GithubRun,
} from './github-runs.js';
import {
  buildLimit,
  isRecord,
  joinUrl,
  faultOfTrouble,
  HttpTestingService,
  type UpstreamCall,
  type UpstreamTrouble,
} from './upstream.js';

/**
 * Earlier re-run attempts fetched in one check at most. Attempts left over are fetched by the
 * next check (the result then carries no ETag, so that check lists the runs again).
 */
export const MAX_ATTEMPT_REQUESTS = 10;

const PUBLIC_API = 'https://api.github.com';

/**
 * GitHub Actions (API.md 2.8): `resource` is `repos/{owner}/{repo}/actions/workflows/{file or id}`,
 * the service URL `https://api.github.com` or a GitHub Enterprise `…/api/v3`. Every attempt of a
 * run is one build, `"<run id>_<attempt>"`.
 */
@RegisterTestingService()
@Injectable()
export class GithubActionsService extends HttpTestingService {
  readonly type = 'github';
  readonly settings = ['token'] as const;
  private readonly missingRefs = new MissingRefs();

  /**
   * API.md 7.1: the resource may be a full URL of the workflow, on the API
   * (`https://api.github.com/repos/o/r/actions/workflows/ci.yml`, whose base then is the service
   * URL) or on the web site (`https://github.com/o/r/actions/workflows/ci.yml`); and the web site
   * `https://github.com` as the service URL means its API.
   */
  resourceProblem(resource: string): string | undefined {
    return workflowOf(resource) === undefined ? notAWorkflow(resource) : undefined;
  }

  canonicalTarget(target: InstanceTarget): InstanceTarget {
    // The job selector (API.md 16) is no part of the URL: a fragment there would be dropped.
    const { resource: path, glob } = splitJobSelector(target.resource);
    const canonical = this.canonicalPath({ url: target.url, resource: path });
    return { url: canonical.url, resource: withJobSelector(canonical.resource, glob) };
  }

  private canonicalPath(target: InstanceTarget): InstanceTarget {
    const url = isGithubWebSite(target.url) ? PUBLIC_API : target.url;
    const resource = target.resource.trim();
    if (!/^https?:\/\//i.test(resource)) {
      return { url, resource: target.resource };
    }
    let parsed: URL;
    try {
      parsed = new URL(resource);
    } catch {
      return { url, resource: target.resource };
    }
    const path = parsed.pathname.replace(/\/+$/, '');
    if (isGithubWebSite(parsed.origin)) {
      const web = /^\/([^/]+)\/([^/]+)\/actions\/workflows\/([^/]+)$/.exec(path);
      return web
        ? { url: PUBLIC_API, resource: `repos/${web[1]}/${web[2]}/actions/workflows/${web[3]}` }
        : { url, resource };
    }
    const at = path.indexOf('/repos/');
    if (at < 0) {
      return { url, resource };
    }
    return { url: `${parsed.origin}${path.slice(0, at)}`, resource: path.slice(at + 1) };
  }

  /**
   * The workflow's page on the web site: `https://github.com/{o}/{r}/actions/workflows/{file}` for
   * the public API, the same path on a GitHub Enterprise host (its API is `{host}/api/v3`).
   */
  override resourcePage(target: ResourceTarget): string | undefined {
    const web = githubWebBase(target.serviceUrl);
    const named = workflowOf(target.resource);
    if (web === undefined || named === undefined) {
      return web;
    }
    const [owner, repo, workflow] = named;
    return `${web}/${[owner, repo, 'actions', 'workflows', workflow].map(encodeURIComponent).join('/')}`;
  }

  /**
   * GITHUB_TOKEN is the token of the public API when TESTING_SERVICES_FILE does not configure that
   * URL (a configured entry, with or without a token, wins).
   */
  private environmentToken(serviceUrl: string): string | undefined {
    const api = this.config.registry.github.apiUrl;
    const configured = findConfiguredService(this.config.monitoring.services, this.type, api);
    return configured === undefined && normalizeServiceUrl(serviceUrl) === normalizeServiceUrl(api)
      ? this.config.monitoring.serviceTokens.GITHUB_TOKEN
      : undefined;
  }

  /**
   * API.md 11: a `workflow_dispatch` of the workflow on the version's ref (the first of the
   * selection's refs that is a branch or tag of the repository, else its default branch):
   * `POST …/actions/workflows/{id}/dispatches {"ref"}` → 204. A workflow without that trigger
   * (GitHub's 422 says so) gets a re-run of `latestBuildId`'s run instead:
   * `POST …/actions/runs/{run id}/rerun` → 201. A periodic re-run (`rerun`, API.md 16) re-runs
   * that run first, and dispatches only when GitHub refuses the re-run (403 for a run created over
   * a month ago; any other 4xx but a 401 or a rate limit: a disabled workflow, a run gone). Needs a
   * token: GITHUB_TOKEN for GITHUB_API_URL, or the service's entry in TESTING_SERVICES_FILE.
   */
  override async triggerBuild(request: TriggerRequest): Promise<TriggerResult> {
    const named = workflowOf(request.resource);
    if (named === undefined) {
      return { kind: 'unavailable', reason: notAWorkflow(request.resource) };
    }
    const now = request.now ?? new Date();
    const base = this.requestBase(request, now);
    if (base.authorization === undefined) {
      const api = normalizeServiceUrl(this.config.registry.github.apiUrl);
      return this.noCredentials(
        request.serviceUrl,
        normalizeServiceUrl(request.serviceUrl) === api
          ? 'GITHUB_TOKEN (or TESTING_SERVICES_FILE)'
          : 'TESTING_SERVICES_FILE',
      );
    }
    const [owner, repo, workflow] = named;
    const runId = /^(\d+)_\d+$/.exec(request.latestBuildId ?? '')?.[1];
    const rerun = (id: string): UpstreamCall => ({
      ...base,
      method: 'POST',
      url: joinUrl(request.serviceUrl, ['repos', owner, repo, 'actions', 'runs', id, 'rerun']),
    });
    let refusedRerun: string | undefined;
    if (request.rerun && runId !== undefined) {
      const rerunResult = await this.http.start(rerun(runId), 'rerun');
      if (!refusesRerun(rerunResult)) {
        return rerunResult;
      }
      refusedRerun = rerunResult.reason;
    }
    const ref = await this.dispatchRef(request, owner, repo, base);
    if (typeof ref !== 'string') {
      return ref;
    }
    const dispatch: UpstreamCall = {
      ...base,
      method: 'POST',
      url: joinUrl(request.serviceUrl, [
        'repos',
        owner,
        repo,
        'actions',
        'workflows',
        workflow,
        'dispatches',
      ]),
      json: { ref },
    };
    const answer = await this.http.call(dispatch);
    if (answer.kind !== 'answer') {
      return answer;
    }
    if (answer.status >= 200 && answer.status < 300) {
      answer.body.resume();
      return { kind: 'triggered', how: 'dispatch' };
    }
    const fault = await this.http.fault(answer, dispatch);
    if (refusedRerun !== undefined) {
      // The re-run was tried first: nothing is left to try.
      return fault.kind === 'refused'
        ? {
            ...fault,
            reason: `the re-run was refused (${refusedRerun}), and so was a fresh run: ${fault.reason}`,
          }
        : fault;
    }
    // Only a workflow without the trigger: a disabled one says "Cannot trigger a 'workflow_dispatch'
    // on a disabled workflow", and a re-run of it would be refused too.
    if (answer.status !== 422 || !/does not have 'workflow_dispatch'/i.test(fault.reason)) {
      return fault;
    }
    if (runId === undefined) {
      return { kind: 'refused', status: 422, reason: `${fault.reason}; and it has no run to re-run` };
    }
    return this.http.start(rerun(runId), 'rerun');
  }

  /**
   * The run attempt's log archive (`GET …/actions/runs/{id}/attempts/{n}/logs`, which GitHub
   * answers with a redirect to a short-lived URL of its storage, where the token is not sent),
   * saved under DATA_DIR/tmp while its job logs are read, in job order. `none` when GitHub keeps
   * none (404, or 410 once the logs expired).
   */
  override async buildLog(request: BuildLogRequest): Promise<BuildLogResult> {
    const named = workflowOf(request.resource);
    if (named === undefined) {
      return { kind: 'unavailable', reason: notAWorkflow(request.resource) };
    }
    const attempt = /^(\d+)_(\d+)$/.exec(request.buildId);
    if (attempt === null) {
      return {
        kind: 'none',
        reason: `'${request.buildId}' is not a GitHub run attempt (<run id>_<attempt>)`,
      };
    }
    const [owner, repo] = named;
    const call: UpstreamCall = {
      ...this.requestBase(request, request.now ?? new Date()),
      method: 'GET',
      url: joinUrl(request.serviceUrl, [
        'repos',
        owner,
        repo,
        'actions',
        'runs',
        attempt[1],
        'attempts',
        attempt[2],
        'logs',
      ]),
      signal: request.signal,
    };
    const answer = await this.http.open(call);
    if (answer.kind !== 'answer') {
      return answer;
    }
    if (answer.status === 404 || answer.status === 410) {
      answer.done();
      return {
        kind: 'none',
        reason: `GitHub keeps no log of run ${attempt[1]} attempt ${attempt[2]} (${answer.status})`,
      };
    }
    if (answer.status < 200 || answer.status >= 300) {
      const fault = await this.http.fault(answer, call);
      answer.done();
      return fault;
    }
    return {
      kind: 'log',
      contentType: 'text/plain; charset=utf-8',
      chunks: jobLogs(
        join(this.config.dataDir, 'tmp'),
        answer.chunks,
        splitJobSelector(request.resource).glob,
      ),
    };
  }

  /**
   * API.md 16: the run attempt's jobs (`GET …/runs/{id}/attempts/{n}/jobs`, the selected ones when
   * the resource selects jobs), their commit, and the runner of the first of them that ran, as the
   * head of its log tells it (`GET …/actions/jobs/{id}/logs`, read for LOG_HEAD_BYTES at most) with
   * the labels of its record. The repository's page is the web site's. `none` for a run GitHub
   * does not know.
   */
  override async buildDetails(request: BuildDetailsRequest): Promise<BuildDetailsResult> {
    const named = workflowOf(request.resource);
    if (named === undefined) {
      return { kind: 'unavailable', reason: notAWorkflow(request.resource) };
    }
    return githubBuildDetails(
      this.http,
      request,
      named,
      this.requestBase(request, request.now ?? new Date()),
    );
  }

  /** The first of the selection's refs that the repository has, else its default branch. */
  private async dispatchRef(
    request: TriggerRequest,
    owner: string,
    repo: string,
    base: GithubRequestBase,
  ): Promise<string | UpstreamFault> {
    for (const ref of request.selection?.refs ?? []) {
      const exists = await this.refExists(request.serviceUrl, owner, repo, ref, base);
      if (exists === true) {
        return ref;
      }
      if (exists !== false) {
        return faultOfTrouble(exists);
      }
    }
    const repository = await this.http.getJson({
      ...base,
      url: joinUrl(request.serviceUrl, ['repos', owner, repo]),
      notFound: `repository ${owner}/${repo} not found`,
    });
    if (repository.kind !== 'json') {
      return faultOfTrouble(repository);
    }
    const branch = isRecord(repository.body) ? repository.body.default_branch : undefined;
    return typeof branch === 'string' && branch !== ''
      ? branch
      : { kind: 'refused', reason: `the GitHub answer for ${owner}/${repo} has no default_branch` };
  }

  /**
   * Lists the workflow's latest `limit` runs (`GET …/runs?per_page=N`, conditional on `etag`).
   * The listing shows each run's latest attempt; earlier attempts missing from
   * `request.knownBuildIds` are fetched one request each (`…/runs/{id}/attempts/{n}`, at most
   * MAX_ATTEMPT_REQUESTS per check), so an unchanged workflow costs one request (a 304) and a new
   * run without re-runs one request too. Durations are whole seconds (`updated_at` −
   * `run_started_at`, 0 until the run completes). Resolves `failed` for a 404 ("workflow not
   * found"), a 5xx, a timeout or a refused address; `rate_limited` on 403/429 with an exhausted
   * `x-ratelimit-remaining` (until `x-ratelimit-reset`) or a `Retry-After`.
   * API.md 6.2: with the runs it reads the workflow's `state` (see `disabled`, `stateReadDue`).
   * API.md 16: a resource that selects jobs (`#job=<glob>`) has each run not stored finished yet
   * made of its matching jobs (`…/runs/{id}/attempts/{n}/jobs`, one request per run, at most
   * MAX_JOB_REQUESTS per check); runs without a matching job that ran are no builds of it.
   */
  async latestBuilds(request: BuildCheckRequest): Promise<BuildCheckResult> {
    const listed = await this.runsOf(request);
    const glob = splitJobSelector(request.resource).glob;
    const [owner, repo] = workflowOf(request.resource) ?? ['', ''];
    const base = this.requestBase(request, request.now ?? new Date());
    const result =
      listed.kind === 'builds' && glob !== undefined
        ? await withSelectedJobs(listed, request, glob, (buildId) =>
            githubJobsOf(this.http, request.serviceUrl, owner, repo, buildId, base),
          )
        : listed;
    const now = request.now ?? new Date();
    const due =
      result.kind === 'builds' ||
      (result.kind === 'not_modified' &&
        stateReadDue(request.resource, now, this.config.monitoring.refreshIntervalSeconds * 1000));
    return due ? { ...result, ...(await this.disabled(request, now)) } : result;
  }

  private requestBase(
    request: Pick<BuildCheckRequest, 'serviceUrl' | 'credentials'>,
    now: Date,
  ): GithubRequestBase {
    const token = this.http.credentials(request)?.token ?? this.environmentToken(request.serviceUrl);
    return {
      headers: { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' },
      authorization: token ? `Bearer ${token}` : undefined,
      allowPrivate: this.http.allowPrivate(request.serviceUrl),
      timeoutMs: this.http.timeoutMs,
      now,
    };
  }

  private disabled(request: BuildCheckRequest, now: Date): Promise<{ workflowDisabled?: boolean }> {
    return githubWorkflowDisabled(this.http, this.requestBase(request, now), request);
  }

  private async runsOf(request: BuildCheckRequest): Promise<BuildCheckResult> {
    const named = workflowOf(request.resource);
    if (named === undefined) {
      return { kind: 'failed', reason: notAWorkflow(request.resource) };
    }
    const [owner, repo, workflow] = named;
    const segments = ['repos', owner, repo, 'actions', 'workflows', workflow];
    const now = request.now ?? new Date();
    const base = this.requestBase(request, now);
    const list = async (filter: string, etag: string | undefined): Promise<Listing | UpstreamTrouble> => {
      const listing = await this.http.getJson({
        ...base,
        url: joinUrl(request.serviceUrl, [...segments, 'runs'], `per_page=${buildLimit(request)}${filter}`),
        etag,
        notFound: `workflow ${owner}/${repo}/${workflow} not found`,
      });
      if (listing.kind !== 'json') {
        return listing;
      }
      const rawRuns = isRecord(listing.body) ? listing.body.workflow_runs : undefined;
      if (!Array.isArray(rawRuns)) {
        return { kind: 'failed', reason: 'the GitHub answer has no workflow_runs list' };
      }
      const runs = rawRuns.map(parseRun).filter((run): run is GithubRun => run !== undefined);
      return { kind: 'runs', runs, etag: listing.etag };
    };
    const selection = request.selection;
    if (!selection) {
      const listing = await list('', request.etag);
      return listing.kind === 'runs'
        ? this.withEarlierAttempts(listing, listing.etag, request, base)
        : listing;
    }
    // API.md 7.2: the runs of the first candidate ref the repository has, else of the registration
    // window. Refs found missing are remembered, so that the request giving the result is the first
    // of the next check, the one that carries the stored ETag.
    const refKey = (ref: string) => `${normalizeServiceUrl(request.serviceUrl)} ${owner}/${repo} ${ref}`;
    const refs = selection.refs.filter((ref) => !this.missingRefs.has(refKey(ref), now));
    for (const [index, ref] of refs.entries()) {
      let listing = await list(`&branch=${encodeURIComponent(ref)}`, index === 0 ? request.etag : undefined);
      if (listing.kind === 'not_modified') {
        // The stored ETag may be that of an empty window listing (once a missing ref's memory
        // expires): with no build stored, "unchanged" here can only mean "no runs of the ref".
        if ((request.knownBuildIds?.size ?? 0) > 0) {
          return listing;
        }
        listing = { kind: 'runs', runs: [] };
      }
      if (listing.kind !== 'runs') {
        return listing;
      }
      const kept = listing.runs.filter((run) => run.headBranch === undefined || run.headBranch === ref);
      if (kept.length > 0) {
        return this.withEarlierAttempts({ ...listing, runs: kept }, listing.etag, request, base);
      }
      const exists = await this.refExists(request.serviceUrl, owner, repo, ref, base);
      if (exists !== false && exists !== true) {
        return exists;
      }
      if (exists) {
        return { kind: 'builds', builds: [], etag: listing.etag };
      }
      this.missingRefs.remember(refKey(ref), now);
    }
    const from = selection.from === undefined ? undefined : githubTime(selection.from);
    const until = selection.until === undefined ? undefined : githubTime(selection.until);
    const created =
      from !== undefined && until !== undefined
        ? `${from}..${until}`
        : from !== undefined
          ? `>=${from}`
          : until !== undefined
            ? `<${until}`
            : undefined;
    const listing = await list(
      created === undefined ? '' : `&created=${encodeURIComponent(created)}`,
      refs.length === 0 ? request.etag : undefined,
    );
    if (listing.kind !== 'runs') {
      return listing;
    }
    const inWindow = listing.runs.filter((run) => inRegistrationWindow(selection, run.createdAt));
    return this.withEarlierAttempts({ ...listing, runs: inWindow }, listing.etag, request, base);
  }

  /** Whether `ref` is a branch or a tag of the repository (`git/ref/heads/…`, `git/ref/tags/…`: 404 when not). */
  private async refExists(
    serviceUrl: string,
    owner: string,
    repo: string,
    ref: string,
    base: GithubRequestBase,
  ): Promise<boolean | UpstreamTrouble> {
    for (const kind of ['heads', 'tags']) {
      const answer = await this.http.getJson({
        ...base,
        url: joinUrl(serviceUrl, ['repos', owner, repo, 'git', 'ref', kind, ...ref.split('/')]),
        notFound: NO_SUCH_REF,
      });
      if (answer.kind === 'json') {
        return true;
      }
      if (answer.kind !== 'failed' || answer.reason !== `${NO_SUCH_REF} (404)`) {
        return answer.kind === 'not_modified' ? true : answer;
      }
    }
    return false;
  }

  /**
   * The listing's builds plus the earlier attempts of its re-run runs that `request.knownBuildIds`
   * lacks (one request each, at most MAX_ATTEMPT_REQUESTS); `etag` is kept only when none is left.
   */
  private async withEarlierAttempts(
    listing: Listing,
    etag: string | undefined,
    request: BuildCheckRequest,
    base: GithubRequestBase,
  ): Promise<BuildCheckResult> {
    const [owner, repo] = workflowOf(request.resource) ?? ['', ''];
    const runs = listing.runs;
    const builds = runs.map(toBuild);

    const known = request.knownBuildIds ?? new Set<string>();
    const missing = runs.flatMap((run) =>
      Array.from({ length: run.attempt - 1 }, (_, index) => ({ id: run.id, attempt: index + 1 })).filter(
        (earlier) => !known.has(buildIdOf(earlier.id, earlier.attempt)),
      ),
    );
    let complete = missing.length <= MAX_ATTEMPT_REQUESTS;
    // One at a time: GitHub asks integrators not to send concurrent requests.
    for (const earlier of missing.slice(0, MAX_ATTEMPT_REQUESTS)) {
      const answer = await this.http.getJson({
        ...base,
        url: joinUrl(request.serviceUrl, [
          'repos',
          owner,
          repo,
          'actions',
          'runs',
          String(earlier.id),
          'attempts',
          String(earlier.attempt),
        ]),
        notFound: `attempt ${earlier.attempt} of run ${earlier.id} not found`,
      });
      const run = answer.kind === 'json' ? parseRun(answer.body) : undefined;
      if (!run) {
        // Keep what the listing gave; without an ETag the next check lists again and retries.
        complete = false;
        break;
      }
      builds.push(toBuild(run));
    }
    builds.sort(
      (a, b) => b.startedAt.getTime() - a.startedAt.getTime() || b.buildId.localeCompare(a.buildId),
    );
    return { kind: 'builds', builds, etag: complete ? etag : undefined };
  }
}

/**
 * Whether GitHub refused a re-run as such (API.md 16): a 4xx that is not about our credentials
 * (401) or a rate limit, such as its 403 "Unable to re-run this workflow run because it was
 * created over a month ago". A fresh run may still start then.
 */
function refusesRerun(result: TriggerResult): result is { kind: 'refused'; status: number; reason: string } {
  return (
    result.kind === 'refused' &&
    result.status !== undefined &&
    result.status >= 400 &&
    result.status < 500 &&
    result.status !== 401
  );
}

/** The not-found reason of a ref lookup: a 404 there is an answer (no such ref), not a failure. */
const NO_SUCH_REF = 'no such ref';

interface Listing {
  kind: 'runs';
  runs: GithubRun[];
  etag?: string;
}
