import { Injectable } from '@nestjs/common';
import { jobMatcher } from '../../common/job-selector.js';
import {
  isFailingStatus,
  findConfiguredService,
  LogStreamError,
  normalizeServiceUrl,
  RegisterTestingService,
  type Build,
  type BuildCheckRequest,
  type BuildCheckResult,
  type BuildDetailsRequest,
  type BuildDetailsResult,
  type BuildJob,
  type BuildLogRequest,
  type BuildLogResult,
  type BuildStatus,
  type ResourceTarget,
  type TriggerRequest,
  type TriggerResult,
  type UpstreamFault,
} from './testing-service.js';
import type { TestingServiceCredentials } from '../../config/testing-services-file.js';
import type { InstanceTarget } from '../../crates/index.js';
import { inRegistrationWindow, MissingRefs } from '../build-selection.js';
import { MAX_JOB_REQUESTS, selectJobs, withSelectedJobs } from './job-builds.js';
import {
  buildJobOf,
  type GitlabJob,
  JOBS_PER_PAGE,
  jobsInStageOrder,
  MAX_JOB_PAGES,
  notAProject,
  parseGitlabResource,
  toBuild,
  toJob,
} from './gitlab-pipelines.js';

import {
  buildLimit,
  contentTypeOf,
  faultOfTrouble,
  HttpTestingService,
  isRecord,
  joinUrl,
  type UpstreamCall,
  type UpstreamGet,
  type UpstreamTrouble,
} from './upstream.js';

/**
 * GitLab CI (API.md 18), gitlab.com or self-hosted: the service URL is the instance's base
 * (`https://gitlab.com`), its API `{url}/api/v4`; the resource is a project (see
 * parseGitlabResource). Builds are pipelines, logs the traces of their jobs in stage order, a
 * trigger a new pipeline. Credentials: a `token` in TESTING_SERVICES_FILE (an access token with
 * the `api` scope to start pipelines), sent as `Authorization: Bearer`.
 */
@RegisterTestingService()
@Injectable()
export class GitlabService extends HttpTestingService {
  readonly type = 'gitlab';
  readonly settings = ['token'] as const;
  private readonly missingRefs = new MissingRefs();

  /**
   * API.md 18: an instance on gitlab.com, or on an instance configured as a `gitlab` service, is
   * GitLab's whatever its crate's `runsOn` says (when that names no known service).
   */
  claimsUrl(url: string): boolean {
    const base = this.canonicalTarget({ url, resource: '' }).url;
    try {
      if (new URL(base).hostname.toLowerCase() === 'gitlab.com') {
        return true;
      }
    } catch {
      return false;
    }
    return findConfiguredService(this.config.monitoring.services, this.type, base) !== undefined;
  }

  resourceProblem(resource: string): string | undefined {
    return parseGitlabResource(resource) === undefined ? notAProject(resource) : undefined;
  }

  /**
   * The API's URL (`…/api/v4`) means the instance; a project's web page on the instance (`{url}/group/
   * project`, any `/-/…` page of it) means the project.
   */
  canonicalTarget(target: InstanceTarget): InstanceTarget {
    const url = target.url
      .trim()
      .replace(/\/+$/, '')
      .replace(/\/api\/v4$/, '');
    const resource = target.resource.trim();
    if (!/^https?:\/\//i.test(resource)) {
      return { url, resource: target.resource };
    }
    const base = normalizeServiceUrl(url);
    const page = resource.replace(/\/-\/.*$/, '').replace(/\/+$/, '');
    return normalizeServiceUrl(page).toLowerCase().startsWith(`${base.toLowerCase()}/`)
      ? { url, resource: page.slice(base.length + 1).replace(/\.git$/, '') }
      : { url, resource: target.resource };
  }

  /** The project's pipelines page, `{url}/{path}/-/pipelines` (a numeric id: `{url}/projects/{id}`). */
  override resourcePage(target: ResourceTarget): string | undefined {
    const named = parseGitlabResource(target.resource);
    const base = target.serviceUrl.trim().replace(/\/+$/, '');
    if (named === undefined) {
      return undefined;
    }
    if (/^\d+$/.test(named.project)) {
      return `${base}/projects/${named.project}`;
    }
    const path = named.project.split('/').map(encodeURIComponent).join('/');
    return `${base}/${path}/-/pipelines${named.ref ? `?ref=${encodeURIComponent(named.ref)}` : ''}`;
  }

  /**
   * `GET …/projects/{id}/pipelines?per_page=N[&ref=][&updated_after=]`, conditional on `etag`,
   * newest first; `skipped` pipelines left out. The resource's `?ref=` selects that ref; else the
   * version's (API.md 7.2): the first of its refs the project has as a branch or tag, else its
   * registration window. `startedAt` is the pipeline's creation; `duration` its last update less
   * its start, once finished.
   */
  async latestBuilds(request: BuildCheckRequest): Promise<BuildCheckResult> {
    const listed = await this.listedBuilds(request);
    const named = parseGitlabResource(request.resource);
    if (listed.kind !== 'builds' || named === undefined) {
      return listed;
    }
    const jobsOf = async (buildId: string) => {
      const jobs = await this.pipelineJobs(request, buildId, request.now ?? new Date());
      return jobs.kind === 'none'
        ? { kind: 'jobs' as const, jobs: [] }
        : jobs.kind === 'jobs'
          ? { kind: 'jobs' as const, jobs: jobsInStageOrder(jobs.jobs).map(buildJobOf) }
          : jobs;
    };
    return named.jobGlob === undefined
      ? this.withFailingJobFields(listed, request, jobsOf)
      : withSelectedJobs(listed, request, named.jobGlob, jobsOf);
  }

  /**
   * API.md 16: a failing pipeline's own `status` says little; why its jobs failed is in their
   * `failure_reason`, read (one jobs listing per failing pipeline not stored finished, at most
   * MAX_JOB_REQUESTS a check) and handed to the classifier beside it. Trouble reading the jobs
   * leaves the pipeline's status alone to decide, with its log.
   */
  private async withFailingJobFields(
    listed: Extract<BuildCheckResult, { kind: 'builds' }>,
    request: BuildCheckRequest,
    jobsOf: (buildId: string) => Promise<{ kind: 'jobs'; jobs: BuildJob[] } | UpstreamTrouble>,
  ): Promise<BuildCheckResult> {
    const finished = request.finishedBuildIds ?? new Set<string>();
    let asked = 0;
    const builds: Build[] = [];
    for (const build of listed.builds) {
      if (!isFailingStatus(build.status) || finished.has(build.buildId) || asked === MAX_JOB_REQUESTS) {
        builds.push(build);
        continue;
      }
      asked++;
      const jobs = await jobsOf(build.buildId);
      const reasons =
        jobs.kind === 'jobs'
          ? jobs.jobs
              .filter((job) => isFailingStatus(job.status as BuildStatus))
              .flatMap((job) => (job.ciFields ?? []).filter((field) => field.startsWith('failure_reason: ')))
          : [];
      builds.push({ ...build, ciFields: [...new Set([...(build.ciFields ?? []), ...reasons])] });
    }
    return { ...listed, builds };
  }

  /** The pipelines of the project, as latestBuilds reads them, before job selection. */
  private async listedBuilds(request: BuildCheckRequest): Promise<BuildCheckResult> {
    const named = parseGitlabResource(request.resource);
    if (named === undefined) {
      return { kind: 'failed', reason: notAProject(request.resource) };
    }
    const now = request.now ?? new Date();
    const base = this.requestBase(request, now);
    const list = async (filter: string, etag: string | undefined): Promise<Listing | UpstreamTrouble> => {
      const answer = await this.http.getJson({
        ...base,
        url: this.api(
          request.serviceUrl,
          named.project,
          ['pipelines'],
          `per_page=${buildLimit(request)}${filter}`,
        ),
        etag,
        notFound: `project ${named.project} not found`,
      });
      if (answer.kind !== 'json') {
        return answer;
      }
      if (!Array.isArray(answer.body)) {
        return { kind: 'failed', reason: 'the GitLab answer is not a list of pipelines' };
      }
      const builds = answer.body
        .map((raw) => toBuild(raw, request.serviceUrl, named.project))
        .filter((build): build is Build & { ref?: string } => build !== undefined);
      return { kind: 'listing', builds, etag: answer.etag };
    };
    const done = (listing: Listing, builds = listing.builds): BuildCheckResult => ({
      kind: 'builds',
      builds: builds.map(({ ref: _ref, ...build }) => build),
      etag: listing.etag,
    });
    const selection = request.selection;
    if (named.ref !== undefined || !selection) {
      const filter = named.ref === undefined ? '' : `&ref=${encodeURIComponent(named.ref)}`;
      const listing = await list(filter, request.etag);
      return listing.kind === 'listing' ? done(listing) : listing;
    }
    const refKey = (ref: string) => `${normalizeServiceUrl(request.serviceUrl)} ${named.project} ${ref}`;
    const refs = selection.refs.filter((ref) => !this.missingRefs.has(refKey(ref), now));
    for (const [index, ref] of refs.entries()) {
      let listing = await list(`&ref=${encodeURIComponent(ref)}`, index === 0 ? request.etag : undefined);
      if (listing.kind === 'not_modified') {
        // As for GitHub: with no build stored, "unchanged" can only mean "no pipelines of the ref".
        if ((request.knownBuildIds?.size ?? 0) > 0) {
          return listing;
        }
        listing = { kind: 'listing', builds: [] };
      }
      if (listing.kind !== 'listing') {
        return listing;
      }
      if (listing.builds.length > 0) {
        return done(listing);
      }
      const exists = await this.refExists(request.serviceUrl, named.project, ref, base);
      if (exists !== true && exists !== false) {
        return exists;
      }
      if (exists) {
        return done(listing);
      }
      this.missingRefs.remember(refKey(ref), now);
    }
    const from =
      selection.from === undefined
        ? ''
        : `&updated_after=${encodeURIComponent(selection.from.toISOString())}`;
    const listing = await list(from, refs.length === 0 ? request.etag : undefined);
    return listing.kind === 'listing'
      ? done(
          listing,
          listing.builds.filter((build) => inRegistrationWindow(selection, build.startedAt)),
        )
      : listing;
  }

  /**
   * The jobs of one pipeline (`GET …/pipelines/{id}/jobs`, every page up to 1,000 jobs), in
   * GitLab's order, with what job selection and failure classes read of them; `none` when the
   * pipeline is not there.
   */
  async pipelineJobs(
    target: ResourceTarget & { credentials?: TestingServiceCredentials },
    pipelineId: string,
    now = new Date(),
  ): Promise<{ kind: 'jobs'; jobs: GitlabJob[] } | { kind: 'none' } | UpstreamTrouble> {
    const named = parseGitlabResource(target.resource);
    if (named === undefined || !/^\d+$/.test(pipelineId)) {
      return { kind: 'none' };
    }
    const jobs: GitlabJob[] = [];
    for (let page = 1; page <= MAX_JOB_PAGES; page++) {
      const answer = await this.http.getJson({
        ...this.requestBase(target, now),
        url: this.api(
          target.serviceUrl,
          named.project,
          ['pipelines', pipelineId, 'jobs'],
          `per_page=${JOBS_PER_PAGE}&page=${page}`,
        ),
        notFound: NO_SUCH_PIPELINE,
      });
      if (answer.kind === 'failed' && answer.reason === `${NO_SUCH_PIPELINE} (404)`) {
        return { kind: 'none' };
      }
      if (answer.kind !== 'json') {
        return answer;
      }
      const items = Array.isArray(answer.body) ? (answer.body as unknown[]) : [];
      jobs.push(...items.flatMap(toJob));
      if (items.length < JOBS_PER_PAGE) {
        break;
      }
    }
    return { kind: 'jobs', jobs };
  }

  /**
   * A new pipeline: `POST …/projects/{id}/pipeline?ref=` on the resource's ref, else the first of
   * the version's refs the project has, else its default branch → 201. Needs the instance's token.
   */
  override async triggerBuild(request: TriggerRequest): Promise<TriggerResult> {
    const named = parseGitlabResource(request.resource);
    if (named === undefined) {
      return { kind: 'unavailable', reason: notAProject(request.resource) };
    }
    const base = this.requestBase(request, request.now ?? new Date());
    if (base.authorization === undefined) {
      return this.noCredentials(request.serviceUrl);
    }
    const ref = named.ref ?? (await this.pipelineRef(request, named.project, base));
    if (typeof ref !== 'string') {
      return ref;
    }
    const call: UpstreamCall = {
      ...base,
      method: 'POST',
      url: this.api(request.serviceUrl, named.project, ['pipeline'], `ref=${encodeURIComponent(ref)}`),
    };
    return this.http.start(call, 'build');
  }

  /**
   * The traces of the pipeline's jobs (`GET …/jobs/{id}/trace`) one after the other in stage order,
   * each read as it comes; a job without a trace is skipped. `none` when the pipeline is not there
   * or none of its jobs has a trace.
   */
  override async buildLog(request: BuildLogRequest): Promise<BuildLogResult> {
    const named = parseGitlabResource(request.resource);
    if (named === undefined) {
      return { kind: 'unavailable', reason: notAProject(request.resource) };
    }
    const now = request.now ?? new Date();
    const listed = await this.pipelineJobs(request, request.buildId, now);
    if (listed.kind === 'none') {
      return { kind: 'none', reason: `GitLab has no pipeline ${request.buildId} of ${named.project}` };
    }
    if (listed.kind !== 'jobs') {
      return faultOfTrouble(listed);
    }
    const base = this.requestBase(request, now);
    const open = async (jobId: number) => {
      const call: UpstreamCall = {
        ...base,
        method: 'GET',
        headers: { accept: 'text/plain' },
        url: this.api(request.serviceUrl, named.project, ['jobs', String(jobId), 'trace']),
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
    // A selecting instance's log is its matching jobs' (API.md 16).
    const matches = named.jobGlob === undefined ? () => true : jobMatcher(named.jobGlob);
    const order = jobsInStageOrder(listed.jobs.filter((job) => matches(job.name))).map((job) => job.id);
    let at = 0;
    let first: Awaited<ReturnType<typeof open>>;
    for (; at < order.length && first === undefined; at++) {
      first = await open(order[at]);
    }
    if (first === undefined) {
      return { kind: 'none', reason: `GitLab keeps no trace of pipeline ${request.buildId}'s jobs` };
    }
    if (first.kind !== 'answer') {
      return first;
    }
    const firstChunks = first.chunks;
    const rest = order.slice(at);
    async function* chunks(): AsyncGenerator<Buffer> {
      yield* firstChunks;
      for (const jobId of rest) {
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

  /**
   * API.md 16: what a pipeline ran, from its jobs (`GET …/pipelines/{id}/jobs`; the selected ones
   * when the resource selects jobs): their stages' order, statuses and GitLab's `failure_reason`,
   * the commit (the jobs' `pipeline.sha`), the runner of the first job one took (its
   * `description`, the job's tags as labels). Commits compare at `{url}/{path}/-/compare/…`; a
   * project named by its id has no such page here. `none` for a pipeline GitLab does not know.
   */
  override async buildDetails(request: BuildDetailsRequest): Promise<BuildDetailsResult> {
    const named = parseGitlabResource(request.resource);
    if (named === undefined) {
      return { kind: 'unavailable', reason: notAProject(request.resource) };
    }
    const listed = await this.pipelineJobs(request, request.buildId, request.now ?? new Date());
    if (listed.kind === 'none') {
      return { kind: 'none', reason: `GitLab has no pipeline ${request.buildId} of ${named.project}` };
    }
    if (listed.kind !== 'jobs') {
      return faultOfTrouble(listed);
    }
    const all = jobsInStageOrder(listed.jobs).map(buildJobOf);
    const jobs = named.jobGlob === undefined ? all : selectJobs(all, named.jobGlob);
    const base = request.serviceUrl.trim().replace(/\/+$/, '');
    return {
      kind: 'details',
      details: {
        headSha: listed.jobs.find((job) => job.sha !== undefined)?.sha,
        // buildChanges appends `/compare/{from}...{to}`: GitLab's comparison lives under `/-/`.
        repositoryPage: /^\d+$/.test(named.project)
          ? undefined
          : `${base}/${named.project.split('/').map(encodeURIComponent).join('/')}/-`,
        runner: jobs.find((job) => (job.runner?.image ?? null) !== null)?.runner,
        jobs,
      },
    };
  }

  /** The first of the version's refs that is a branch or tag of the project, else its default branch. */
  private async pipelineRef(
    request: TriggerRequest,
    project: string,
    base: RequestBase,
  ): Promise<string | UpstreamFault> {
    for (const ref of request.selection?.refs ?? []) {
      const exists = await this.refExists(request.serviceUrl, project, ref, base);
      if (exists === true) {
        return ref;
      }
      if (exists !== false) {
        return faultOfTrouble(exists);
      }
    }
    const answer = await this.http.getJson({
      ...base,
      url: this.api(request.serviceUrl, project, []),
      notFound: `project ${project} not found`,
    });
    if (answer.kind !== 'json') {
      return faultOfTrouble(answer);
    }
    const branch = isRecord(answer.body) ? answer.body.default_branch : undefined;
    return typeof branch === 'string' && branch !== ''
      ? branch
      : { kind: 'refused', reason: `the GitLab project ${project} has no default branch` };
  }

  /** Whether `ref` is a branch or a tag of the project (`repository/branches/…`, `…/tags/…`: 404 when not). */
  private async refExists(
    serviceUrl: string,
    project: string,
    ref: string,
    base: RequestBase,
  ): Promise<boolean | UpstreamTrouble> {
    for (const kind of ['branches', 'tags']) {
      const answer = await this.http.getJson({
        ...base,
        url: this.api(serviceUrl, project, ['repository', kind, ref]),
        notFound: NO_SUCH_REF,
      });
      if (answer.kind === 'json' || answer.kind === 'not_modified') {
        return true;
      }
      if (answer.kind !== 'failed' || answer.reason !== `${NO_SUCH_REF} (404)`) {
        return answer;
      }
    }
    return false;
  }

  private requestBase(
    request: { serviceUrl: string; credentials?: TestingServiceCredentials },
    now: Date,
  ): RequestBase {
    const token = this.http.credentials(request)?.token;
    return {
      headers: { accept: 'application/json' },
      authorization: token ? `Bearer ${token}` : undefined,
      allowPrivate: this.http.allowPrivate(request.serviceUrl),
      timeoutMs: this.http.timeoutMs,
      now,
    };
  }

  /** `{url}/api/v4/projects/{url-encoded path or id}/…` (API.md 18: paths encoded as one segment). */
  private api(serviceUrl: string, project: string, segments: readonly string[], query = ''): string {
    return joinUrl(serviceUrl, ['api', 'v4', 'projects', project, ...segments], query);
  }
}

/** The not-found reasons of a pipeline's jobs and of a ref lookup: a 404 there is an answer. */
const NO_SUCH_PIPELINE = 'no such pipeline';
const NO_SUCH_REF = 'no such ref';

type RequestBase = Omit<UpstreamGet, 'url' | 'notFound'>;

interface Listing {
  kind: 'listing';
  builds: (Build & { ref?: string })[];
  etag?: string;
}
