import { Injectable } from '@nestjs/common';
import {
  RegisterTestingService,
  type Build,
  type BuildCheckRequest,
  type BuildCheckResult,
  type BuildStatus,
} from './testing-service.js';
import { buildLimit, isRecord, joinUrl, resourceSegments, toDate, HttpTestingService } from './upstream.js';

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

  async latestBuilds(request: BuildCheckRequest): Promise<BuildCheckResult> {
    const segments = jobSegments(request.resource);
    if (segments === undefined) {
      return { kind: 'failed', reason: notAJob(request.resource) };
    }
    const job = segments.filter((_, index) => index % 2 === 1).join('/');
    const credentials = this.http.credentials(request);
    const password = credentials?.password ?? credentials?.token;
    const tree = `builds[${TREE_FIELDS}]{0,${buildLimit(request)}}`;
    const answer = await this.http.getJson({
      url: joinUrl(request.serviceUrl, [...segments, 'api', 'json'], `tree=${encodeURIComponent(tree)}`),
      headers: { accept: 'application/json' },
      authorization:
        credentials?.username && password
          ? `Basic ${Buffer.from(`${credentials.username}:${password}`).toString('base64')}`
          : undefined,
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
