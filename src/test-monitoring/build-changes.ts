import type { StoredBuild } from './builds.repository.js';
import {
  isFinishedStatus,
  type BuildDetails,
  type BuildJob,
  type JobStatus,
  type RunnerInfo,
} from './testing-services/testing-service.js';

/*
 * API.md 16, "what changed since the last passing build", as pure functions over the stored builds
 * and what their CI told of them.
 */

/** A job that did not pass (its selected jobs only, for an instance that selects them). */
export interface FailedJob {
  name: string;
  conclusion: string | null;
  url: string | null;
}

/** A step that did not pass, in a job that did not pass. */
export interface FailedStep {
  job: string;
  name: string;
  conclusion: string | null;
}

/** What differs between a build and the instance's last passing build before it. */
export interface BuildChanges {
  build: StoredBuild;
  lastPassing: StoredBuild | null;
  commits: { from: string | null; to: string | null; compareUrl: string | null };
  runner: { before: RunnerInfo | null; after: RunnerInfo | null };
  durationSeconds: { before: number | null; after: number };
  failedJobs: FailedJob[];
  failedSteps: FailedStep[];
}

function failing(status: JobStatus): boolean {
  return status !== 'skipped' && status !== 'passed' && isFinishedStatus(status);
}

/**
 * The changes between `build` and `lastPassing` (null: none before it), from what is stored and
 * what the CI told of each (undefined: it told nothing). Commits come from the stored builds, else
 * from the CI; a comparison link needs both commits and the repository's page.
 */
export function buildChanges(
  build: StoredBuild,
  lastPassing: StoredBuild | null,
  after: BuildDetails | undefined,
  before: BuildDetails | undefined,
): BuildChanges {
  const from = lastPassing === null ? null : (lastPassing.headSha ?? before?.headSha ?? null);
  const to = build.headSha ?? after?.headSha ?? null;
  const page = after?.repositoryPage ?? before?.repositoryPage;
  const failedJobs = (after?.jobs ?? []).filter((job) => failing(job.status));
  return {
    build,
    lastPassing,
    commits: {
      from,
      to,
      compareUrl:
        page !== undefined && from !== null && to !== null
          ? `${page}/compare/${encodeURIComponent(from)}...${encodeURIComponent(to)}`
          : null,
    },
    runner: {
      before: lastPassing === null ? null : (before?.runner ?? null),
      after: after?.runner ?? null,
    },
    durationSeconds: { before: lastPassing?.durationSeconds ?? null, after: build.durationSeconds },
    failedJobs: failedJobs.map((job: BuildJob) => ({
      name: job.name,
      conclusion: job.conclusion,
      url: job.url ?? null,
    })),
    failedSteps: failedJobs.flatMap((job) =>
      job.steps
        .filter((step) => failing(step.status))
        .map((step) => ({ job: job.name, name: step.name, conclusion: step.conclusion })),
    ),
  };
}
