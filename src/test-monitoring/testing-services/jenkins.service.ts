import { Injectable } from '@nestjs/common';
import {
  isFailingStatus,
  RegisterTestingService,
  type Build,
  type BuildCheckRequest,
  type BuildCheckResult,
  type BuildStatus,
  type BuildLogRequest,
  type BuildLogResult,
  type ResourceTarget,
  type TriggerRequest,
  type TriggerResult,
  type UpstreamFault,
} from './testing-service.js';
import type { TestingServiceCredentials } from '../../config/testing-services-file.js';
import {
  buildLimit,
  contentTypeOf,
  isRecord,
  joinUrl,
  resourceSegments,
  toDate,
  HttpTestingService,
  type UpstreamCall,
} from './upstream.js';

const RESULTS: Readonly<Record<string, BuildStatus>> = {
  SUCCESS: 'passed',
  FAILURE: 'failed',
  UNSTABLE: 'failed',
  ABORTED: 'aborted',
  NOT_BUILT: 'aborted',
};

/** The build fields asked for; `tree` keeps Jenkins from serialising whole build objects. */
const TREE_FIELDS = 'number,url,result,building,timestamp,duration';

/**
 * Jenkins (API.md 2.8): `resource` is `job/{name}`, with folders and multibranch jobs nested as
 * `job/a/job/b`; names may be URL-encoded as in Jenkins's own URLs.
 */
@RegisterTestingService()
@Injectable()
export class JenkinsService extends HttpTestingService {
  readonly type = 'jenkins';
  readonly settings = ['username', 'password', 'token'] as const;

  /**
   * One request: `GET {url}/{resource}/api/json?tree=builds[…]{0,N}` with HTTP Basic auth when
   * the credentials have a username and a password (or an API token in `token`). Timestamps are
   * epoch milliseconds, durations whole seconds (0 while building). A job with no builds is a
   * success with none; resolves `failed` for a 404 ("job not found"), a folder instead of a job,
   * a 5xx, a timeout or a refused address; `rate_limited` on a 429.
   */
  resourceProblem(resource: string): string | undefined {
    return jobSegments(resource) === undefined ? notAJob(resource) : undefined;
  }

  /** The job's page: its path under the server (`{url}/job/a/job/b/`), as Jenkins links it. */
  override resourcePage(target: ResourceTarget): string | undefined {
    const segments = jobSegments(target.resource);
    return segments === undefined ? undefined : `${joinUrl(target.serviceUrl, segments)}/`;
  }

  /**
   * API.md 11: `POST {url}/{job}/build` → 201 (the build is queued). Jenkins with CSRF protection
   * refuses it (403) without a crumb: then the crumb of `{url}/crumbIssuer/api/json` is sent in the
   * header it names, with the session cookie it was issued for, once. Needs a username and a
   * password or API token in TESTING_SERVICES_FILE.
   */
  override async triggerBuild(request: TriggerRequest): Promise<TriggerResult> {
    const segments = jobSegments(request.resource);
    if (segments === undefined) {
      return { kind: 'unavailable', reason: notAJob(request.resource) };
    }
    const authorization = this.authorization(request);
    if (authorization === undefined) {
      return this.noCredentials(request.serviceUrl);
    }
    const base = {
      headers: { accept: 'application/json' },
      authorization,
      allowPrivate: this.http.allowPrivate(request.serviceUrl),
      now: request.now ?? new Date(),
    };
    const build: UpstreamCall = {
      ...base,
      method: 'POST',
      url: joinUrl(request.serviceUrl, [...segments, 'build']),
    };
    const answer = await this.http.call(build);
    if (answer.kind !== 'answer') {
      return answer;
    }
    if (answer.status >= 200 && answer.status < 300) {
      answer.body.resume();
      return { kind: 'triggered', how: 'build' };
    }
    const refusal = await this.http.fault(answer, build);
    if (answer.status !== 403) {
      return refusal;
    }
    const crumb = await this.crumb(request.serviceUrl, base);
    if (crumb === undefined) {
      return refusal;
    }
    if (crumb.kind !== 'crumb') {
      return crumb;
    }
    return this.http.start({ ...build, headers: { ...build.headers, ...crumb.headers } }, 'build');
  }

  /** The build's console log, `GET {url}/{job}/{number}/consoleText`, as Jenkins sends it; `none` on a 404. */
  override async buildLog(request: BuildLogRequest): Promise<BuildLogResult> {
    const segments = jobSegments(request.resource);
    if (segments === undefined) {
      return { kind: 'unavailable', reason: notAJob(request.resource) };
    }
    if (!/^\d+$/.test(request.buildId)) {
      return { kind: 'none', reason: `'${request.buildId}' is not a Jenkins build number` };
    }
    const call: UpstreamCall = {
      method: 'GET',
      url: joinUrl(request.serviceUrl, [...segments, request.buildId, 'consoleText']),
      headers: { accept: 'text/plain' },
      authorization: this.authorization(request),
      allowPrivate: this.http.allowPrivate(request.serviceUrl),
      now: request.now ?? new Date(),
      signal: request.signal,
    };
    const answer = await this.http.open(call);
    if (answer.kind !== 'answer') {
      return answer;
    }
    if (answer.status === 404) {
      answer.done();
      return { kind: 'none', reason: `Jenkins keeps no console log of build ${request.buildId} (404)` };
    }
    if (answer.status < 200 || answer.status >= 300) {
      const fault = await this.http.fault(answer, call);
      answer.done();
      return fault;
    }
    return { kind: 'log', contentType: contentTypeOf(answer.headers), chunks: answer.chunks };
  }

  /**
   * The CSRF crumb as headers to send (its field, and the session cookie it belongs to); undefined
   * when Jenkins issues none (no CSRF protection: the 403 was something else).
   */
  private async crumb(
    serviceUrl: string,
    base: Omit<UpstreamCall, 'method' | 'url'>,
  ): Promise<{ kind: 'crumb'; headers: Record<string, string> } | UpstreamFault | undefined> {
    const call: UpstreamCall = {
      ...base,
      method: 'GET',
      url: joinUrl(serviceUrl, ['crumbIssuer', 'api', 'json']),
    };
    const answer = await this.http.call(call);
    if (answer.kind !== 'answer') {
      return answer;
    }
    if (answer.status === 404) {
      answer.body.resume();
      return undefined;
    }
    if (answer.status < 200 || answer.status >= 300) {
      return this.http.fault(answer, call);
    }
    const body = await this.http.json(answer);
    if (!isRecord(body) || typeof body.crumb !== 'string' || typeof body.crumbRequestField !== 'string') {
      return { kind: 'refused', reason: 'the crumb issuer of Jenkins answered without a crumb' };
    }
    const headers: Record<string, string> = { [body.crumbRequestField.toLowerCase()]: body.crumb };
    const cookies = (answer.headers['set-cookie'] ?? [])
      .map((cookie) => cookie.split(';')[0])
      .filter(Boolean);
    if (cookies.length > 0) {
      headers.cookie = cookies.join('; ');
    }
    return { kind: 'crumb', headers };
  }

  /** HTTP Basic with the configured username and password (or API token in `token`). */
  private authorization(request: {
    serviceUrl: string;
    credentials?: TestingServiceCredentials;
  }): string | undefined {
    const credentials = this.http.credentials(request);
    const password = credentials?.password ?? credentials?.token;
    return credentials?.username && password
      ? `Basic ${Buffer.from(`${credentials.username}:${password}`).toString('base64')}`
      : undefined;
  }

  async latestBuilds(request: BuildCheckRequest): Promise<BuildCheckResult> {
    const segments = jobSegments(request.resource);
    if (segments === undefined) {
      return { kind: 'failed', reason: notAJob(request.resource) };
    }
    const job = segments.filter((_, index) => index % 2 === 1).join('/');
    const tree = `builds[${TREE_FIELDS}]{0,${buildLimit(request)}}`;
    const answer = await this.http.getJson({
      url: joinUrl(request.serviceUrl, [...segments, 'api', 'json'], `tree=${encodeURIComponent(tree)}`),
      headers: { accept: 'application/json' },
      authorization: this.authorization(request),
      etag: request.etag,
      allowPrivate: this.http.allowPrivate(request.serviceUrl),
      timeoutMs: this.http.timeoutMs,
      notFound: `job ${job} not found`,
      now: request.now ?? new Date(),
    });
    if (answer.kind !== 'json') {
      return answer;
    }
    const rawBuilds = isRecord(answer.body) ? answer.body.builds : undefined;
    if (!Array.isArray(rawBuilds)) {
      // Folders and organisations answer without `builds`: the resource names no buildable job.
      return { kind: 'failed', reason: `${job} is not a job with builds` };
    }
    const builds = rawBuilds
      .map((raw) => toBuild(raw, request.serviceUrl, segments))
      .filter((build): build is Build => build !== undefined)
      .sort((a, b) => Number(b.buildId) - Number(a.buildId));
    return { kind: 'builds', builds, etag: answer.etag };
  }
}

function toBuild(raw: unknown, serviceUrl: string, jobSegments: readonly string[]): Build | undefined {
  if (!isRecord(raw) || typeof raw.number !== 'number') {
    return undefined;
  }
  const startedAt = toDate(raw.timestamp);
  if (!startedAt) {
    return undefined;
  }
  const running = raw.building === true;
  const status: BuildStatus = running
    ? 'running'
    : ((typeof raw.result === 'string' ? RESULTS[raw.result] : undefined) ?? 'error');
  return {
    buildId: String(raw.number),
    status,
    startedAt,
    durationSeconds:
      !running && typeof raw.duration === 'number' ? Math.max(0, Math.round(raw.duration / 1000)) : 0,
    url:
      typeof raw.url === 'string' ? raw.url : `${joinUrl(serviceUrl, [...jobSegments, String(raw.number)])}/`,
    ...(isFailingStatus(status) && typeof raw.result === 'string'
      ? { ciFields: [`result: ${raw.result}`] }
      : {}),
  };
}

/** The segments of a `job/{name}` resource, folders nested as `job/{a}/job/{b}`. */
function jobSegments(resource: string): string[] | undefined {
  const segments = resourceSegments(resource);
  if (
    segments === undefined ||
    segments.length % 2 !== 0 ||
    segments.some((segment, index) => index % 2 === 0 && segment !== 'job')
  ) {
    return undefined;
  }
  return segments;
}

function notAJob(resource: string): string {
  return `'${resource}' is not a Jenkins job (job/{name}, job/{a}/job/{b})`;
}
