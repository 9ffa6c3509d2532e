import { Injectable, Module } from '@nestjs/common';
import {
  RegisterTestingService,
  type Build,
  type BuildCheckRequest,
  type BuildCheckResult,
  type BuildStatus,
  type ResourceTarget,
  type TriggerRequest,
  type TriggerResult,
} from '../../src/test-monitoring/testing-services/testing-service.js';
import {
  buildLimit,
  HttpTestingService,
  isRecord,
  joinUrl,
  resourceSegments,
} from '../../src/test-monitoring/testing-services/upstream.js';

/**
 * A CI service that lives only in the tests: the walk-through of docs/extending.md ("a new CI
 * service") done for real, against Drone CI's build listing (test/fakes/drone-fake.ts). No file
 * of src/ names it: crates say `"runsOn": {"@id": "https://w3id.org/ro/terms/test#DroneService"}`.
 */
const STATUSES: Readonly<Record<string, BuildStatus>> = {
  success: 'passed',
  failure: 'failed',
  error: 'error',
  killed: 'aborted',
  skipped: 'aborted',
  running: 'running',
  pending: 'waiting',
  blocked: 'waiting',
};

/** Step 1 of the guide: the class, marked for the registry of testing services. */
@RegisterTestingService()
@Injectable()
export class DroneService extends HttpTestingService {
  readonly type = 'drone';
  readonly settings = ['token'] as const;

  /** The repository's page: Drone serves its web pages and its API on one host, `{url}/{owner}/{name}`. */
  override resourcePage(target: ResourceTarget): string | undefined {
    const repository = repositoryOf(target.resource);
    return repository === undefined ? undefined : joinUrl(target.serviceUrl, repository);
  }

  /**
   * `POST {url}/api/repos/{owner}/{name}/builds?branch=…` (Drone's "create a build", on the
   * version's first ref, else the repository's default branch) with the configured token.
   * Drone keeps its logs per step as JSON: this client serves none (`buildLog` stays unavailable).
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
    const ref = request.selection?.refs[0];
    const call = {
      method: 'POST' as const,
      url: joinUrl(
        request.serviceUrl,
        ['api', 'repos', ...repository, 'builds'],
        ref === undefined ? '' : `branch=${encodeURIComponent(ref)}`,
      ),
      headers: { accept: 'application/json' },
      authorization: `Bearer ${token}`,
      allowPrivate: this.http.allowPrivate(request.serviceUrl),
      now: request.now ?? new Date(),
    };
    return this.http.start(call, 'build');
  }

  /** `resource` is `repos/{owner}/{name}`; one request, `GET {url}/api/repos/{owner}/{name}/builds`. */
  async latestBuilds(request: BuildCheckRequest): Promise<BuildCheckResult> {
    const repository = repositoryOf(request.resource);
    if (repository === undefined) {
      return { kind: 'failed', reason: notARepository(request.resource) };
    }
    const [owner, name] = repository;
    const token = this.http.credentials(request)?.token;
    const answer = await this.http.getJson({
      url: joinUrl(
        request.serviceUrl,
        ['api', 'repos', owner, name, 'builds'],
        `page=1&per_page=${buildLimit(request)}`,
      ),
      headers: { accept: 'application/json' },
      authorization: token ? `Bearer ${token}` : undefined,
      etag: request.etag,
      allowPrivate: this.http.allowPrivate(request.serviceUrl),
      timeoutMs: this.http.timeoutMs,
      notFound: `repository ${owner}/${name} not found`,
      now: request.now ?? new Date(),
    });
    if (answer.kind !== 'json') {
      return answer;
    }
    if (!Array.isArray(answer.body)) {
      return { kind: 'failed', reason: 'the Drone answer is not a list of builds' };
    }
    const webBase = joinUrl(request.serviceUrl, [owner, name]);
    const builds = answer.body
      .map((raw) => toBuild(raw, webBase))
      .filter((build): build is Build => build !== undefined)
      .sort((a, b) => Number(b.buildId) - Number(a.buildId));
    return { kind: 'builds', builds, etag: answer.etag };
  }
}

/** `[owner, name]` of a `repos/{owner}/{name}` resource. */
function repositoryOf(resource: string): [string, string] | undefined {
  const segments = resourceSegments(resource);
  return segments?.length === 3 && segments[0] === 'repos' ? [segments[1], segments[2]] : undefined;
}

function notARepository(resource: string): string {
  return `'${resource}' is not a Drone repository (repos/{owner}/{name})`;
}

function toBuild(raw: unknown, webBase: string): Build | undefined {
  if (!isRecord(raw) || typeof raw.number !== 'number' || typeof raw.status !== 'string') {
    return undefined;
  }
  const started = typeof raw.started === 'number' && raw.started > 0 ? raw.started : raw.created;
  if (typeof started !== 'number') {
    return undefined;
  }
  const finished = typeof raw.finished === 'number' ? raw.finished : 0;
  return {
    buildId: String(raw.number),
    status: STATUSES[raw.status] ?? (finished > 0 ? 'error' : 'waiting'),
    startedAt: new Date(started * 1000),
    durationSeconds: finished > 0 ? Math.max(0, finished - started) : 0,
    url: `${webBase}/${raw.number}`,
  };
}

/** Step 2: the one registration line, here in a test module instead of TestMonitoringModule. */
@Module({ providers: [DroneService] })
export class DroneCiModule {}
