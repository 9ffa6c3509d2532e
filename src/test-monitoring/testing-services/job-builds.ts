import { jobMatcher } from '../../common/job-selector.js';
import {
  isFailingStatus,
  isFinishedStatus,
  type Build,
  type BuildCheckRequest,
  type BuildCheckResult,
  type BuildJob,
  type BuildStatus,
} from './testing-service.js';
import type { UpstreamTrouble } from './upstream.js';

/** Job listings read per check for a job selection: new builds beyond it are read by the next checks. */
export const MAX_JOB_REQUESTS = 10;

/*
 * API.md 16: a build of an instance that selects jobs (`#job=<glob>`) is what its matching jobs
 * say, whatever the rest of the CI workflow did. Pure functions, shared by the clients.
 */

/** Of failing outcomes, the one a build made of several jobs reports: a test failure first. */
const PRECEDENCE: readonly BuildStatus[] = ['failed', 'error', 'aborted', 'passed'];

/** The jobs whose names match the glob, in the CI's order. */
export function selectJobs(jobs: readonly BuildJob[], glob: string): BuildJob[] {
  const matches = jobMatcher(glob);
  return jobs.filter((job) => matches(job.name));
}

/**
 * The build as its selected jobs make it: its status from theirs (skipped ones do not count; any
 * unfinished: running or waiting; else the first of failed, error, aborted, passed that one of
 * them has), its duration from the first start to the last finish among them. Undefined when no
 * selected job ran in a finished build: that run did not test this instance. An unfinished build
 * whose matching jobs have not started yet keeps its own status.
 */
export function buildOfJobs(build: Build, selected: readonly BuildJob[]): Build | undefined {
  const ran = selected.filter((job) => job.status !== 'skipped');
  if (ran.length === 0) {
    return isFinishedStatus(build.status) ? undefined : { ...build, jobs: [...selected] };
  }
  const statuses = ran.map((job) => job.status as BuildStatus);
  const unfinished = statuses.filter((status) => !isFinishedStatus(status));
  const status: BuildStatus =
    unfinished.length > 0
      ? unfinished.includes('running')
        ? 'running'
        : 'waiting'
      : (PRECEDENCE.find((candidate) => statuses.includes(candidate)) ?? 'error');
  return {
    ...build,
    status,
    durationSeconds: isFinishedStatus(status) ? (spanSeconds(ran) ?? build.durationSeconds) : 0,
    jobs: [...selected],
    ...ciFieldsOfJobs(build, ran, status),
  };
}

/**
 * What the classifier reads first for a build made of jobs: the failing selected jobs' own words
 * under the field name the client gives the whole build (`conclusion` on GitHub, `state` on
 * Travis), or their own fields when the client gives them, not the whole run's, which
 * other jobs may have decided.
 */
function ciFieldsOfJobs(
  build: Build,
  ran: readonly BuildJob[],
  status: BuildStatus,
): Pick<Build, 'ciFields'> {
  if (!isFailingStatus(status)) {
    return { ciFields: undefined };
  }
  const field = build.ciFields?.[0]?.split(':')[0] ?? 'conclusion';
  const words = ran
    .filter((job) => isFailingStatus(job.status as BuildStatus))
    .flatMap((job) => job.ciFields ?? (job.conclusion === null ? [] : [`${field}: ${job.conclusion}`]));
  return { ciFields: words.length > 0 ? [...new Set(words)] : build.ciFields };
}

/** Whole seconds from the first start to the last finish of the jobs; undefined when one lacks either. */
function spanSeconds(jobs: readonly BuildJob[]): number | undefined {
  const starts = jobs.map((job) => job.startedAt?.getTime());
  const ends = jobs.map((job) => job.finishedAt?.getTime());
  if (starts.some((at) => at === undefined) || ends.some((at) => at === undefined)) {
    return undefined;
  }
  const first = Math.min(...(starts as number[]));
  const last = Math.max(...(ends as number[]));
  return Math.max(0, Math.round((last - first) / 1000));
}

/**
 * A listing's builds as their selected jobs make them, one `jobsOf` request per build not stored
 * finished (`request.finishedBuildIds`: their jobs do not change, and they are left out so that
 * the stored job-made status stays). Past MAX_JOB_REQUESTS the rest waits for the next check,
 * which then lists again (no ETag). Trouble reading jobs ends the check with it.
 */
export async function withSelectedJobs(
  listed: Extract<BuildCheckResult, { kind: 'builds' }>,
  request: Pick<BuildCheckRequest, 'finishedBuildIds'>,
  glob: string,
  jobsOf: (buildId: string) => Promise<{ kind: 'jobs'; jobs: BuildJob[] } | UpstreamTrouble>,
): Promise<BuildCheckResult> {
  const finished = request.finishedBuildIds ?? new Set<string>();
  const builds: Build[] = [];
  let asked = 0;
  for (const build of listed.builds) {
    if (finished.has(build.buildId)) {
      continue;
    }
    if (asked === MAX_JOB_REQUESTS) {
      return { kind: 'builds', builds };
    }
    asked++;
    const jobs = await jobsOf(build.buildId);
    if (jobs.kind !== 'jobs') {
      return jobs;
    }
    const selected = buildOfJobs(build, selectJobs(jobs.jobs, glob));
    if (selected !== undefined) {
      builds.push(selected);
    }
  }
  return { kind: 'builds', builds, etag: listed.etag };
}
