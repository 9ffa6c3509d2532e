import { Injectable } from '@nestjs/common';
import {
  isFinishedStatus,
  type Build,
  type BuildCheckRequest,
  type BuildCheckResult,
  type BuildStatus,
  RegisterTestingService,
} from './testing-service.js';
import type { InstanceTarget } from '../../workflows/index.js';
import { buildLimit, isRecord, joinUrl, resourceSegments, toDate, HttpTestingService } from './upstream.js';

const STATES: Readonly<Record<string, BuildStatus>> = {
  created: 'waiting',
  received: 'waiting',
  started: 'running',
  passed: 'passed',
  failed: 'failed',
  canceled: 'aborted',
  errored: 'error',
};

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

  /**
   * API.md 7.1: a web-site URL (`https://travis-ci.com`, `https://app.travis-ci.com`, the retired
   * `https://travis-ci.org`, whose repositories moved to .com) means the API; a resource
   * `github/{owner}/{repo}` (the path of the repository's web page) means the repository's slug.
   */
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
    const web = /^\/*github\/([^/]+)\/([^/]+?)\/*$/.exec(target.resource.trim());
    const resource = web ? `repo/${encodeURIComponent(`${web[1]}/${web[2]}`)}` : target.resource;
    return { url, resource };
  }

  /**
   * One request: `GET {url}/repo/{id or slug}/builds?limit=N` (conditional on `etag`), newest
   * build first. `duration` is Travis's own, in whole seconds (0 until the build finishes);
   * `startedAt` falls back to `updated_at`, then to the check time, for builds not started yet.
   * Resolves `failed` for a 404 ("repository not found"), a 5xx, a timeout or a refused address;
   * `rate_limited` on a 429 or an exhausted rate-limit header.
   */
  async latestBuilds(request: BuildCheckRequest): Promise<BuildCheckResult> {
    const segments = resourceSegments(request.resource);
    if (segments === undefined || segments[0] !== 'repo' || segments.length < 2 || segments.length > 3) {
      return {
        kind: 'failed',
        reason: `'${request.resource}' is not a Travis repository (repo/{id or slug})`,
      };
    }
    const repository = segments.slice(1).join('/');
    const now = request.now ?? new Date();
    let webBase: string;
    try {
      webBase = travisWebBase(request.serviceUrl);
    } catch {
      return { kind: 'failed', reason: `not a valid URL: ${request.serviceUrl.slice(0, 200)}` };
    }
    const token = this.http.credentials(request)?.token;
    const answer = await this.http.getJson({
      url: joinUrl(request.serviceUrl, ['repo', repository, 'builds'], `limit=${buildLimit(request)}`),
      headers: { accept: 'application/json', 'travis-api-version': '3' },
      authorization: token ? `token ${token}` : undefined,
      etag: request.etag,
      allowPrivate: this.http.allowPrivate(request.serviceUrl),
      timeoutMs: this.http.timeoutMs,
      notFound: `repository ${repository} not found`,
      now,
    });
    if (answer.kind !== 'json') {
      return answer;
    }
    const rawBuilds = isRecord(answer.body) ? answer.body.builds : undefined;
    if (!Array.isArray(rawBuilds)) {
      return { kind: 'failed', reason: 'the Travis answer has no builds list' };
    }
    const fallbackSlug = /^\d+$/.test(repository) ? undefined : repository;
    const builds = rawBuilds
      .map((raw) => toBuild(raw, webBase, fallbackSlug, now))
      .filter((build): build is Build => build !== undefined)
      .sort((a, b) => Number(b.buildId) - Number(a.buildId));
    return { kind: 'builds', builds, etag: answer.etag };
  }
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
  const status = STATES[state] ?? (toDate(raw.finished_at) ? 'error' : 'waiting');
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
  };
}
