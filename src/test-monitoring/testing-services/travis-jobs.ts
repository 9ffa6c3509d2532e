import { isGithubWebSite } from './github-runs.js';
import type { BuildJob, BuildStatus } from './testing-service.js';
import {
  isRecord,
  joinUrl,
  toDate,
  type UpstreamGet,
  type UpstreamHttp,
  type UpstreamTrouble,
} from './upstream.js';

/*
 * Travis's words in ours: its build and job states (API.md 2.8's table), a build's jobs and
 * commit (API.md 16). What Travis names differently changes here, not in the service's calls.
 */

/** A build's states. */
export const TRAVIS_STATES: Readonly<Record<string, BuildStatus>> = {
  created: 'waiting',
  received: 'waiting',
  started: 'running',
  passed: 'passed',
  failed: 'failed',
  canceled: 'aborted',
  errored: 'error',
};

/** A job's states: a build's, plus `queued` (waiting for a machine). */
const JOB_STATES: Readonly<Record<string, BuildStatus>> = { ...TRAVIS_STATES, queued: 'waiting' };

/** The not-found reason of a build's jobs listing. */
export const NO_SUCH_BUILD = 'no such build';

/** What every Travis request of a client carries (headers, token, trust, timeout, time). */
export type TravisRequestBase = Omit<UpstreamGet, 'url' | 'notFound'>;

/** The SHA of a raw build's commit, when it names one. */
export function commitShaOf(raw: Record<string, unknown>): string | undefined {
  return isRecord(raw.commit) && typeof raw.commit.sha === 'string' && raw.commit.sha !== ''
    ? raw.commit.sha
    : undefined;
}

/**
 * One job of `GET /build/{id}/jobs?include=job.config`: its name (`name`, else its config's
 * `name`, else its number), state and what it ran on (`os` and `dist`, else its config's).
 */
export function parseJob(raw: unknown): BuildJob | undefined {
  if (!isRecord(raw) || typeof raw.id !== 'number') {
    return undefined;
  }
  const config = isRecord(raw.config) ? raw.config : {};
  const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
  const state = typeof raw.state === 'string' ? raw.state : '';
  return {
    id: raw.id,
    name: text(raw.name) ?? text(config.name) ?? text(raw.number) ?? String(raw.id),
    status: JOB_STATES[state] ?? (toDate(raw.finished_at) ? 'error' : 'waiting'),
    conclusion: state === '' ? null : state,
    startedAt: toDate(raw.started_at),
    finishedAt: toDate(raw.finished_at),
    steps: [],
    runner: {
      os: text(raw.os) ?? text(config.os),
      image: text(raw.dist) ?? text(config.dist),
      version: null,
      labels: [],
    },
  };
}

/**
 * The repository's GitHub page, when the build's commit links to a comparison on GitHub (Travis
 * links GitHub repositories' commits as `https://github.com/{slug}/compare/…`); undefined for
 * other hosts.
 */
export function githubPageOf(build: Record<string, unknown>): string | undefined {
  const compare = isRecord(build.commit) ? build.commit.compare_url : undefined;
  const slug = isRecord(build.repository) ? build.repository.slug : undefined;
  if (typeof compare !== 'string' || typeof slug !== 'string') {
    return undefined;
  }
  try {
    const url = new URL(compare);
    return isGithubWebSite(url.origin) && url.pathname.startsWith(`/${slug}/`)
      ? `${url.origin}/${slug}`
      : undefined;
  } catch {
    return undefined;
  }
}

/** A build's jobs in the build's order, with their config (one answer: Travis lists a build's jobs whole). */
export async function travisJobsOf(
  http: UpstreamHttp,
  serviceUrl: string,
  buildId: string,
  base: TravisRequestBase,
): Promise<{ kind: 'jobs'; jobs: BuildJob[] } | UpstreamTrouble> {
  const answer = await http.getJson({
    ...base,
    url: joinUrl(serviceUrl, ['build', buildId, 'jobs'], 'include=job.config'),
    notFound: NO_SUCH_BUILD,
  });
  if (answer.kind !== 'json') {
    return answer;
  }
  const raw = isRecord(answer.body) ? answer.body.jobs : undefined;
  if (!Array.isArray(raw)) {
    return { kind: 'failed', reason: 'the Travis answer has no jobs list' };
  }
  return { kind: 'jobs', jobs: raw.map(parseJob).filter((job): job is BuildJob => job !== undefined) };
}
