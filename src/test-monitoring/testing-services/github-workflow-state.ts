import { createHash } from 'node:crypto';
import type { GithubRequestBase } from './github-jobs.js';
import { workflowOf } from './github-runs.js';
import type { BuildCheckRequest } from './testing-service.js';
import { isRecord, joinUrl, type UpstreamHttp } from './upstream.js';

/*
 * A GitHub workflow's state (API.md 6.2, 16): whether GitHub switched it off, read with its runs
 * and, while its runs listing stays unchanged, once a period.
 */

/**
 * A disabled workflow gets no runs, so its runs listing stays 304 for ever: on a 304 its state is
 * still read once per STATE_PERIOD_MS (in the check that falls first in the period, the instance's
 * phase spreading those reads), so that disabling it is seen within a period and an interval.
 */
export const STATE_PERIOD_MS = 6 * 3600 * 1000;

/**
 * Whether a check answered 304 reads the workflow's state: the first check in each
 * STATE_PERIOD_MS of the instance (checks come every refresh interval; none with the timer off).
 */
export function stateReadDue(resource: string, now: Date, intervalMs: number): boolean {
  if (intervalMs <= 0) {
    return false;
  }
  const phase = createHash('sha1').update(resource).digest().readUInt32BE(0) % STATE_PERIOD_MS;
  const at = now.getTime() - phase;
  return Math.floor(at / STATE_PERIOD_MS) !== Math.floor((at - intervalMs) / STATE_PERIOD_MS);
}

/**
 * `GET …/actions/workflows/{id}` after the runs were read (a valid resource): `workflowDisabled`
 * true when its `state` is `disabled_*` (`disabled_manually`, `disabled_inactivity`,
 * `disabled_fork`), false for any other state. An unreadable state changes nothing (no member):
 * the runs already answered, and a later read tries again.
 */
export async function githubWorkflowDisabled(
  http: UpstreamHttp,
  base: GithubRequestBase,
  request: Pick<BuildCheckRequest, 'serviceUrl' | 'resource'>,
): Promise<{ workflowDisabled?: boolean }> {
  const [owner, repo, workflow] = workflowOf(request.resource) ?? [];
  const answer = await http.getJson({
    ...base,
    url: joinUrl(request.serviceUrl, [
      'repos',
      owner ?? '',
      repo ?? '',
      'actions',
      'workflows',
      workflow ?? '',
    ]),
    notFound: 'workflow not found',
  });
  const state = answer.kind === 'json' && isRecord(answer.body) ? answer.body.state : undefined;
  return typeof state === 'string' ? { workflowDisabled: state.startsWith('disabled') } : {};
}
