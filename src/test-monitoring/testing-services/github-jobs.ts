import { splitJobSelector } from '../../common/job-selector.js';
import { githubWebBase, LOG_HEAD_BYTES, parseJob, runnerOfLogHead } from './github-runs.js';
import { selectJobs } from './job-builds.js';
import type { BuildDetailsRequest, BuildDetailsResult, BuildJob, RunnerInfo } from './testing-service.js';
import {
  faultOfTrouble,
  isRecord,
  joinUrl,
  type UpstreamGet,
  type UpstreamHttp,
  type UpstreamTrouble,
} from './upstream.js';

/*
 * GitHub's jobs (API.md 16): a run attempt's jobs for a job selection, and what a build ran for
 * the changes route. The calls of GithubActionsService that read jobs, apart from its runs.
 */

/** What every GitHub request of a client carries (headers, token, trust, timeout, time). */
export type GithubRequestBase = Omit<UpstreamGet, 'url' | 'notFound' | 'etag'>;

/** The not-found reason of a jobs listing: the run (or attempt) is not GitHub's. */
const NO_SUCH_RUN = 'run not found';

/**
 * Pages of a jobs listing read at most: GitHub runs at most 256 jobs of a matrix, so three pages of
 * 100 hold every job of a run attempt (a listing that claims more is cut there).
 */
const MAX_JOB_PAGES = 3;

/** The jobs of a run attempt and their commit, page after page (one request for up to 100 jobs). */
export async function githubJobsOf(
  http: UpstreamHttp,
  serviceUrl: string,
  owner: string,
  repo: string,
  buildId: string,
  base: GithubRequestBase,
): Promise<{ kind: 'jobs'; jobs: BuildJob[]; headSha?: string } | UpstreamTrouble> {
  const [runId, attempt] = buildId.split('_');
  const raw: unknown[] = [];
  for (let page = 1; page <= MAX_JOB_PAGES; page += 1) {
    const answer = await http.getJson({
      ...base,
      url: joinUrl(
        serviceUrl,
        ['repos', owner, repo, 'actions', 'runs', runId, 'attempts', attempt ?? '1', 'jobs'],
        `per_page=100&page=${page}`,
      ),
      notFound: NO_SUCH_RUN,
    });
    if (answer.kind !== 'json') {
      return answer;
    }
    const listed = isRecord(answer.body) ? answer.body.jobs : undefined;
    if (!Array.isArray(listed)) {
      return { kind: 'failed', reason: 'the GitHub answer has no jobs list' };
    }
    raw.push(...(listed as unknown[]));
    const total = isRecord(answer.body) ? answer.body.total_count : undefined;
    if (listed.length < 100 || typeof total !== 'number' || raw.length >= total) {
      break;
    }
  }
  const sha = raw.map((job) => (isRecord(job) ? job.head_sha : undefined)).find((v) => typeof v === 'string');
  return {
    kind: 'jobs',
    jobs: raw.map(parseJob).filter((job): job is BuildJob => job !== undefined),
    headSha: typeof sha === 'string' ? sha : undefined,
  };
}

/** See GithubActionsService.buildDetails; `named` is the resource's owner, repository and workflow. */
export async function githubBuildDetails(
  http: UpstreamHttp,
  request: BuildDetailsRequest,
  named: [string, string, string],
  base: GithubRequestBase,
): Promise<BuildDetailsResult> {
  const attempt = /^(\d+)_(\d+)$/.exec(request.buildId);
  if (attempt === null) {
    return { kind: 'none', reason: `'${request.buildId}' is not a GitHub run attempt (<run id>_<attempt>)` };
  }
  const [owner, repo] = named;
  const listed = await githubJobsOf(http, request.serviceUrl, owner, repo, request.buildId, base);
  if (listed.kind === 'failed' && listed.reason === `${NO_SUCH_RUN} (404)`) {
    return { kind: 'none', reason: `GitHub has no run ${attempt[1]} attempt ${attempt[2]}` };
  }
  if (listed.kind !== 'jobs') {
    return faultOfTrouble(listed);
  }
  const glob = splitJobSelector(request.resource).glob;
  const jobs = glob === undefined ? listed.jobs : selectJobs(listed.jobs, glob);
  const web = githubWebBase(request.serviceUrl);
  const first = jobs.find((job) => job.status !== 'skipped' && job.id !== undefined);
  const runner =
    first?.id === undefined
      ? undefined
      : {
          ...(await runnerOfLog(http, request.serviceUrl, owner, repo, first.id, base)),
          labels: first.runner?.labels ?? [],
        };
  return {
    kind: 'details',
    details: {
      headSha: listed.headSha,
      repositoryPage:
        web === undefined ? undefined : `${web}/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`,
      runner,
      jobs,
    },
  };
}

/**
 * The runner the head of a job's log names (`GET …/actions/jobs/{id}/logs`, which GitHub redirects
 * to its storage; LOG_HEAD_BYTES at most are read); null members when it cannot be read.
 */
async function runnerOfLog(
  http: UpstreamHttp,
  serviceUrl: string,
  owner: string,
  repo: string,
  jobId: number,
  base: GithubRequestBase,
): Promise<Omit<RunnerInfo, 'labels'>> {
  const unknown = { os: null, image: null, version: null };
  const answer = await http.open({
    ...base,
    method: 'GET',
    url: joinUrl(serviceUrl, ['repos', owner, repo, 'actions', 'jobs', String(jobId), 'logs']),
  });
  if (answer.kind !== 'answer') {
    return unknown;
  }
  if (answer.status < 200 || answer.status >= 300) {
    answer.done();
    return unknown;
  }
  const head: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of answer.chunks) {
      // Copied: the stream reuses its buffer for the next chunk.
      head.push(Buffer.from(chunk.subarray(0, LOG_HEAD_BYTES - size)));
      size += Math.min(chunk.length, LOG_HEAD_BYTES - size);
      if (size >= LOG_HEAD_BYTES) {
        break;
      }
    }
  } catch {
    // What came before the break-off is read all the same.
  } finally {
    answer.done();
  }
  return runnerOfLogHead(Buffer.concat(head).toString('utf8'));
}
