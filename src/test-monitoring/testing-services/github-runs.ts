import { isFailingStatus, isFinishedStatus, type Build, type BuildStatus } from './testing-service.js';
import { isRecord, resourceSegments, toDate } from './upstream.js';

/*
 * GitHub's words in ours: its runs as builds (API.md 2.8's state table), its resources and its web
 * site's addresses. What GitHub names differently changes here, not in the service's calls.
 */

/** `https://github.com` (or `www.`), with or without a path: the web site, not the API. */
export function isGithubWebSite(url: string): boolean {
  try {
    return /^(www\.)?github\.com$/i.test(new URL(url).hostname);
  } catch {
    return false;
  }
}

const CONCLUSIONS: Readonly<Record<string, BuildStatus>> = {
  success: 'passed',
  failure: 'failed',
  cancelled: 'aborted',
};

export interface GithubRun {
  id: number;
  attempt: number;
  /** The branch or tag it ran on, when the answer says. */
  headBranch?: string;
  createdAt: Date;
  status: BuildStatus;
  startedAt: Date;
  updatedAt: Date;
  htmlUrl: string;
  /** GitHub's `conclusion`, when the run has one. */
  conclusion?: string;
}

/** The web site of a GitHub API: github.com for the public API, the Enterprise host without `/api/v3`. */
export function githubWebBase(apiUrl: string): string | undefined {
  let api: URL;
  try {
    api = new URL(apiUrl);
  } catch {
    return undefined;
  }
  if (api.hostname === 'api.github.com') {
    return 'https://github.com';
  }
  return `${api.origin}${api.pathname.replace(/\/+$/, '').replace(/\/api(\/v3)?$/, '')}`;
}

/** GitHub's search syntax takes ISO 8601 times; whole seconds, as GitHub keeps them. */
export function githubTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The state table of API.md 2.8. */
function buildStatusOf(status: unknown, conclusion: unknown): BuildStatus {
  if (status === 'completed' || (typeof conclusion === 'string' && conclusion !== '')) {
    return typeof conclusion === 'string' ? (CONCLUSIONS[conclusion] ?? 'error') : 'error';
  }
  if (status === 'in_progress') {
    return 'running';
  }
  // queued, requested, waiting, pending, and any status GitHub adds later: not finished, so a
  // new status can never flip the aggregate.
  return 'waiting';
}

export function parseRun(value: unknown): GithubRun | undefined {
  if (!isRecord(value) || typeof value.id !== 'number') {
    return undefined;
  }
  const startedAt = toDate(value.run_started_at) ?? toDate(value.created_at);
  if (!startedAt) {
    return undefined;
  }
  const attempt = typeof value.run_attempt === 'number' && value.run_attempt >= 1 ? value.run_attempt : 1;
  return {
    id: value.id,
    attempt: Math.floor(attempt),
    headBranch: typeof value.head_branch === 'string' ? value.head_branch : undefined,
    createdAt: toDate(value.created_at) ?? startedAt,
    status: buildStatusOf(value.status, value.conclusion),
    startedAt,
    updatedAt: toDate(value.updated_at) ?? startedAt,
    htmlUrl:
      typeof value.html_url === 'string' ? value.html_url : typeof value.url === 'string' ? value.url : '',
    conclusion:
      typeof value.conclusion === 'string' && value.conclusion !== '' ? value.conclusion : undefined,
  };
}

export function toBuild(run: GithubRun): Build {
  return {
    buildId: buildIdOf(run.id, run.attempt),
    status: run.status,
    startedAt: run.startedAt,
    durationSeconds: isFinishedStatus(run.status)
      ? Math.max(0, Math.round((run.updatedAt.getTime() - run.startedAt.getTime()) / 1000))
      : 0,
    url: run.htmlUrl,
    ...(isFailingStatus(run.status) && run.conclusion !== undefined
      ? { ciFields: [`conclusion: ${run.conclusion}`] }
      : {}),
  };
}

export function buildIdOf(runId: number, attempt: number): string {
  return `${runId}_${attempt}`;
}

/** `[owner, repo, workflow]` of a `repos/{owner}/{repo}/actions/workflows/{file or id}` resource. */
export function workflowOf(resource: string): [string, string, string] | undefined {
  const segments = resourceSegments(resource);
  if (
    segments?.length !== 6 ||
    segments[0] !== 'repos' ||
    segments[3] !== 'actions' ||
    segments[4] !== 'workflows'
  ) {
    return undefined;
  }
  return [segments[1], segments[2], segments[5]];
}

export function notAWorkflow(resource: string): string {
  return `'${resource}' is not a GitHub workflow (repos/{owner}/{repo}/actions/workflows/{file or id})`;
}
