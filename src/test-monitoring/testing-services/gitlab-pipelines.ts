import {
  isFailingStatus,
  isFinishedStatus,
  type Build,
  type BuildJob,
  type BuildStatus,
  type JobStatus,
} from './testing-service.js';
import { isRecord, toDate } from './upstream.js';

/*
 * API.md 18: what GitLab's pipelines, jobs and project paths are in the registry's words; pure
 * functions the GitLab testing service reads its answers with.
 */

/** API.md 18: a pipeline's status as a build's; `skipped` pipelines are no build at all. */
export const STATES: Readonly<Record<string, BuildStatus | 'skip'>> = {
  success: 'passed',
  failed: 'failed',
  canceled: 'error',
  skipped: 'skip',
  created: 'running',
  waiting_for_resource: 'running',
  preparing: 'running',
  pending: 'running',
  running: 'running',
  scheduled: 'running',
  manual: 'running',
};

/** A job's status as a job's of a build (API.md 16): a `manual` job left alone did not run. */
export const JOB_STATES: Readonly<Record<string, JobStatus>> = {
  success: 'passed',
  failed: 'failed',
  canceled: 'error',
  skipped: 'skipped',
  manual: 'skipped',
  created: 'waiting',
  waiting_for_resource: 'waiting',
  preparing: 'waiting',
  pending: 'waiting',
  scheduled: 'waiting',
  running: 'running',
};

/** Space, DEL, control characters and what git gives a meaning in revisions: never in a ref's name. */
// eslint-disable-next-line no-control-regex
export const NOT_IN_REFS = /[\x00-\x20\x7f~^:?*[\\]/;
/** A namespace or project path segment as GitLab allows it. */
export const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
/** Jobs read per page, and pages read of one pipeline's jobs at most (1,000 jobs). */
export const JOBS_PER_PAGE = 100;
export const MAX_JOB_PAGES = 10;

/** What an instance's `resource` names on a GitLab instance. */
export interface GitlabResource {
  /** The project's path (`group/sub/project`) or numeric id. */
  project: string;
  /** `?ref=`: the only ref whose pipelines count. */
  ref?: string;
  /** `#job=<glob>`: the jobs that make the instance's status (API.md 16). */
  jobGlob?: string;
}

/** One job of a pipeline, as GitLab reports it: what job selection and failure classes read. */
export interface GitlabJob {
  id: number;
  name: string;
  stage: string;
  /** GitLab's job status (`success`, `failed`, `canceled`, …). */
  status: string;
  /** Why GitLab says it failed (`script_failure`, `runner_system_failure`, `stuck_or_timeout_failure`, …). */
  failureReason?: string;
  /** Its page. */
  url?: string;
  startedAt?: Date;
  finishedAt?: Date;
  /** The commit the pipeline ran (the job's `pipeline.sha`, else its `commit.id`). */
  sha?: string;
  /** The `description` of the runner that took it; undefined before one did. */
  runner?: string;
  /** Its `tags` (`tag_list`): what runners it asked for. */
  tags: string[];
}

/**
 * A GitLab job as a build's job (API.md 16): GitLab's status its conclusion; its `status` and
 * `failure_reason` fields for the classifier, whose rows read GitLab's reasons as gitlabhq lists
 * them (app/models/concerns/enums/ci/commit_status.rb, `failure_reasons`: `script_failure`,
 * `runner_system_failure`, `stuck_or_timeout_failure`, `scheduler_failure`, …).
 */
export function buildJobOf(job: GitlabJob): BuildJob {
  const status = JOB_STATES[job.status] ?? (job.finishedAt ? 'error' : 'running');
  return {
    id: job.id,
    name: job.name,
    status,
    conclusion: job.status === '' ? null : job.status,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    url: job.url,
    // GitLab's jobs have no steps: a trace's sections are the script's, not reported apart.
    steps: [],
    runner:
      job.runner === undefined && job.tags.length === 0
        ? undefined
        : { os: null, image: job.runner ?? null, version: null, labels: job.tags },
    ciFields: [
      `status: ${job.status}`,
      ...(job.failureReason === undefined ? [] : [`failure_reason: ${job.failureReason}`]),
    ],
  };
}

/**
 * Reads a `resource`: a project path (`group/sub/project`, or URL-encoded as one segment,
 * `group%2Fsub%2Fproject`) or id, then optionally `?ref=<ref>` and `#job=<glob>`. Undefined for
 * anything else: `.`/`..` segments, an encoded slash inside a path written with slashes, other
 * query members or fragments, an empty glob, a ref git would refuse.
 */
export function parseGitlabResource(resource: string): GitlabResource | undefined {
  const trimmed = resource.trim();
  const hash = trimmed.indexOf('#');
  const fragment = hash < 0 ? undefined : trimmed.slice(hash + 1);
  const beforeHash = hash < 0 ? trimmed : trimmed.slice(0, hash);
  const question = beforeHash.indexOf('?');
  const query = question < 0 ? undefined : beforeHash.slice(question + 1);
  const rawPath = (question < 0 ? beforeHash : beforeHash.slice(0, question)).replace(/^\/+|\/+$/g, '');
  let jobGlob: string | undefined;
  if (fragment !== undefined) {
    const match = /^job=(.+)$/.exec(fragment);
    if (!match) {
      return undefined;
    }
    try {
      jobGlob = decodeURIComponent(match[1]);
    } catch {
      return undefined;
    }
  }
  let ref: string | undefined;
  if (query !== undefined) {
    const params = new URLSearchParams(query);
    const keys = [...params.keys()];
    ref = params.get('ref') ?? undefined;
    if (keys.length !== 1 || keys[0] !== 'ref' || !ref || ref.includes('..') || NOT_IN_REFS.test(ref)) {
      return undefined;
    }
  }
  if (rawPath === '' || /\\|%5c/i.test(rawPath)) {
    return undefined;
  }
  let segments: string[];
  try {
    // One segment is the whole path encoded; written with slashes, no segment may hide another.
    segments = rawPath.includes('/')
      ? rawPath.split('/').map((segment) => {
          if (/%2f/i.test(segment)) {
            throw new Error('encoded slash');
          }
          return decodeURIComponent(segment);
        })
      : decodeURIComponent(rawPath).split('/');
  } catch {
    return undefined;
  }
  if (segments.length === 1 && /^\d+$/.test(segments[0])) {
    return { project: segments[0], ref, jobGlob };
  }
  if (segments.length < 2 || !segments.every((segment) => SEGMENT.test(segment))) {
    return undefined;
  }
  return { project: segments.join('/'), ref, jobGlob };
}

/**
 * A pipeline's jobs in stage order, as its log reads them: stages in the order their first job was
 * created (GitLab creates a pipeline's jobs stage by stage), jobs in creation order within one.
 */
export function jobsInStageOrder<T extends { id: number; stage: string }>(jobs: readonly T[]): T[] {
  const firstOfStage = new Map<string, number>();
  for (const job of jobs) {
    firstOfStage.set(job.stage, Math.min(firstOfStage.get(job.stage) ?? Infinity, job.id));
  }
  return [...jobs].sort(
    (a, b) => (firstOfStage.get(a.stage) ?? 0) - (firstOfStage.get(b.stage) ?? 0) || a.id - b.id,
  );
}

export function toBuild(
  raw: unknown,
  serviceUrl: string,
  project: string,
): (Build & { ref?: string }) | undefined {
  if (!isRecord(raw) || typeof raw.id !== 'number') {
    return undefined;
  }
  const native = typeof raw.status === 'string' ? raw.status : '';
  const finishedAt = toDate(raw.finished_at);
  // A status GitLab adds later is final once the pipeline has finished, running before.
  const mapped = STATES[native] ?? (finishedAt ? 'error' : 'running');
  if (mapped === 'skip') {
    return undefined;
  }
  const createdAt = toDate(raw.created_at) ?? toDate(raw.updated_at);
  const startedAt = toDate(raw.started_at) ?? createdAt ?? new Date(0);
  const endedAt = finishedAt ?? toDate(raw.updated_at);
  const duration =
    typeof raw.duration === 'number'
      ? raw.duration
      : endedAt
        ? (endedAt.getTime() - startedAt.getTime()) / 1000
        : 0;
  const web = typeof raw.web_url === 'string' && /^https?:\/\//.test(raw.web_url) ? raw.web_url : undefined;
  return {
    buildId: String(raw.id),
    status: mapped,
    startedAt,
    durationSeconds: isFinishedStatus(mapped) ? Math.max(0, Math.round(duration)) : 0,
    url: web ?? `${serviceUrl.replace(/\/+$/, '')}/${project}/-/pipelines/${raw.id}`,
    ref: typeof raw.ref === 'string' ? raw.ref : undefined,
    headSha: typeof raw.sha === 'string' && raw.sha !== '' ? raw.sha : undefined,
    ...(isFailingStatus(mapped) && native !== '' ? { ciFields: [`status: ${native}`] } : {}),
  };
}

export function toJob(raw: unknown): GitlabJob[] {
  if (!isRecord(raw) || typeof raw.id !== 'number') {
    return [];
  }
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const pipeline = isRecord(raw.pipeline) ? raw.pipeline : {};
  const commit = isRecord(raw.commit) ? raw.commit : {};
  return [
    {
      id: raw.id,
      name: text(raw.name) ?? '',
      stage: text(raw.stage) ?? '',
      status: text(raw.status) ?? '',
      failureReason: text(raw.failure_reason),
      url: text(raw.web_url),
      startedAt: toDate(raw.started_at),
      finishedAt: toDate(raw.finished_at),
      sha: text(pipeline.sha) ?? text(commit.id),
      runner: isRecord(raw.runner) ? text(raw.runner.description) : undefined,
      tags: Array.isArray(raw.tag_list)
        ? raw.tag_list.filter((tag): tag is string => typeof tag === 'string')
        : [],
    },
  ];
}

export function notAProject(resource: string): string {
  return `'${resource.slice(0, 200)}' is not a GitLab project (a path such as group/project or its id, optionally ?ref= and #job=)`;
}
