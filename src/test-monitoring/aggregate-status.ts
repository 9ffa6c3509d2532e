import type { FailureClass } from './failures/failure-patterns.js';
import { isFailingStatus, isFinishedStatus, type BuildStatus } from './testing-services/testing-service.js';

export type AggregateTestStatus = 'all_passing' | 'some_passing' | 'all_failing' | 'not_available';

export const AGGREGATE_TEST_STATUSES: readonly AggregateTestStatus[] = [
  'all_passing',
  'some_passing',
  'all_failing',
  'not_available',
];

/**
 * The `aggregate_test_status` of API.md 2.6, from each instance's latest *finished* build
 * (`undefined` for an instance that has none). `passed` is passing; `failed`, `error` and
 * `aborted` are failing; instances without a finished build do not count, and when none
 * counts the answer is `not_available`. A `running` or `waiting` status is not finished and
 * counts like `undefined`, so a caller that passes the latest build of any state cannot turn
 * an unfinished build into a verdict.
 */
export function aggregateStatus(
  latestBuildPerInstance: readonly (BuildStatus | undefined)[],
): AggregateTestStatus {
  let passing = 0;
  let failing = 0;
  for (const status of latestBuildPerInstance) {
    if (status === undefined || !isFinishedStatus(status)) {
      continue;
    }
    if (status === 'passed') {
      passing++;
    } else {
      failing++;
    }
  }
  if (passing === 0 && failing === 0) {
    return 'not_available';
  }
  if (failing === 0) {
    return 'all_passing';
  }
  return passing === 0 ? 'all_failing' : 'some_passing';
}

/**
 * API.md 16: whether every failing one of the instances' latest finished builds failed for
 * infrastructure (and one does), so that badge and page say `failing (infrastructure)`; the
 * aggregate itself keeps LifeMonitor's values.
 */
export function failingForInfrastructure(
  latestFinishedPerInstance: readonly (
    { status: BuildStatus; failure?: { class: FailureClass } } | undefined
  )[],
): boolean {
  const failing = latestFinishedPerInstance.filter(
    (build): build is { status: BuildStatus; failure?: { class: FailureClass } } =>
      build !== undefined && isFailingStatus(build.status),
  );
  return failing.length > 0 && failing.every((build) => build.failure?.class === 'infrastructure');
}
