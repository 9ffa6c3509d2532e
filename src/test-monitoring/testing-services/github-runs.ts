import { splitJobSelector } from '../../common/job-selector.js';
import {
  isFailingStatus,
  isFinishedStatus,
  type Build,
  type BuildJob,
  type BuildStatus,
  type BuildStep,
  type JobStatus,
  type RunnerInfo,
} from './testing-service.js';
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
  headSha?: string;
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
    headSha: typeof value.head_sha === 'string' && value.head_sha !== '' ? value.head_sha : undefined,
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
    headSha: run.headSha,
    ...(isFailingStatus(run.status) && run.conclusion !== undefined
      ? { ciFields: [`conclusion: ${run.conclusion}`] }
      : {}),
  };
}

export function buildIdOf(runId: number, attempt: number): string {
  return `${runId}_${attempt}`;
}

/**
 * `[owner, repo, workflow]` of a `repos/{owner}/{repo}/actions/workflows/{file or id}` resource,
 * whatever job selector it ends with (API.md 16).
 */
export function workflowOf(resource: string): [string, string, string] | undefined {
  const segments = resourceSegments(splitJobSelector(resource).resource);
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

/** A job's or step's state (GitHub's `status` and `conclusion`) in our words: the run's table, plus `skipped`. */
function jobStatusOf(status: unknown, conclusion: unknown): JobStatus {
  return conclusion === 'skipped' ? 'skipped' : buildStatusOf(status, conclusion);
}

function wordOf(status: unknown, conclusion: unknown): string | null {
  return typeof conclusion === 'string' ? conclusion : typeof status === 'string' ? status : null;
}

/** One job of `GET …/runs/{id}/attempts/{n}/jobs`, with its steps and what its record says of the runner. */
export function parseJob(value: unknown): BuildJob | undefined {
  if (!isRecord(value) || typeof value.name !== 'string') {
    return undefined;
  }
  const steps: BuildStep[] = (Array.isArray(value.steps) ? value.steps : []).flatMap((step: unknown) =>
    isRecord(step) && typeof step.name === 'string'
      ? [
          {
            name: step.name,
            status: jobStatusOf(step.status, step.conclusion),
            conclusion: wordOf(step.status, step.conclusion),
          },
        ]
      : [],
  );
  const labels = Array.isArray(value.labels)
    ? value.labels.filter((label): label is string => typeof label === 'string')
    : [];
  return {
    id: typeof value.id === 'number' ? value.id : undefined,
    name: value.name,
    status: jobStatusOf(value.status, value.conclusion),
    conclusion: wordOf(value.status, value.conclusion),
    startedAt: toDate(value.started_at),
    finishedAt: toDate(value.completed_at),
    url: typeof value.html_url === 'string' ? value.html_url : undefined,
    steps,
    runner: { os: null, image: null, version: null, labels },
  };
}

/** Bytes of a job's log read for its header: the "Set up job" group comes first and is short. */
export const LOG_HEAD_BYTES = 64 * 1024;

/**
 * The runner as the head of a GitHub job log tells it, in the "Set up job" group:
 * ```
 * 2024-01-01T00:00:01.0000000Z ##[group]Operating System
 * 2024-01-01T00:00:01.0000000Z Ubuntu
 * 2024-01-01T00:00:01.0000000Z 22.04.3
 * 2024-01-01T00:00:01.0000000Z LTS
 * 2024-01-01T00:00:01.0000000Z ##[endgroup]
 * 2024-01-01T00:00:01.0000000Z ##[group]Runner Image
 * 2024-01-01T00:00:01.0000000Z Image: ubuntu-22.04
 * 2024-01-01T00:00:01.0000000Z Version: 20240101.1.0
 * ```
 * (older runners name the group "Virtual Environment", with "Environment:" for the image).
 * Null members for what the head does not hold.
 */
export function runnerOfLogHead(text: string): Omit<RunnerInfo, 'labels'> {
  const lines = text.split(/\r?\n/).map((line) =>
    line
      .replace(/^\uFEFF/, '')
      .replace(/^\d{4}-\d\d-\d\dT[\d:.]+Z /, '')
      .trim(),
  );
  const runner: Omit<RunnerInfo, 'labels'> = { os: null, image: null, version: null };
  let group: string | undefined;
  const os: string[] = [];
  for (const line of lines) {
    const opened = /^##\[group\](.*)$/.exec(line);
    if (opened) {
      group = opened[1].trim();
      continue;
    }
    if (line.startsWith('##[endgroup]')) {
      group = undefined;
      continue;
    }
    if (group === 'Operating System' && line !== '') {
      os.push(line);
    } else if (group === 'Runner Image' || group === 'Virtual Environment') {
      const image = /^(?:Image|Environment):\s*(.+)$/.exec(line);
      const version = /^Version:\s*(.+)$/.exec(line);
      runner.image ??= image?.[1] ?? null;
      runner.version ??= version?.[1] ?? null;
    }
  }
  runner.os = os.length > 0 ? os.join(' ') : null;
  return runner;
}
