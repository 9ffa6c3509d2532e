import { Injectable } from '@nestjs/common';
import {
  isFinishedStatus,
  type Build,
  type BuildCheckRequest,
  type BuildCheckResult,
  type BuildStatus,
  normalizeServiceUrl,
  RegisterTestingService,
} from './testing-service.js';
import type { InstanceTarget } from '../../workflows/index.js';
import { inRegistrationWindow, MissingRefs } from '../build-selection.js';
import {
  buildLimit,
  isRecord,
  joinUrl,
  resourceSegments,
  toDate,
  HttpTestingService,
  type UpstreamTrouble,
} from './upstream.js';

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

/** The id or slug of a `repo/{id or slug}` resource. */
function repositoryOf(resource: string): string | undefined {
  const segments = resourceSegments(resource);
  if (segments === undefined || segments[0] !== 'repo' || segments.length < 2 || segments.length > 3) {
    return undefined;
  }
  return segments.slice(1).join('/');
}

function notARepository(resource: string): string {
  return `'${resource}' is not a Travis repository (repo/{id or slug})`;
}
