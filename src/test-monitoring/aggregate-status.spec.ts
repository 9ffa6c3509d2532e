import { badgeOf, statusMessage } from './badge.js';
import {
  AGGREGATE_TEST_STATUSES,
  aggregateStatus,
  failingForInfrastructure,
  type AggregateTestStatus,
} from './aggregate-status.js';
import { BUILD_STATUSES, isFinishedStatus, type BuildStatus } from './testing-services/testing-service.js';

type Latest = BuildStatus | undefined;

const STATES: readonly Latest[] = [undefined, ...BUILD_STATUSES];

/** Every sequence of `length` states, order included. */
function combinations(length: number): Latest[][] {
  if (length === 0) {
    return [[]];
  }
  return combinations(length - 1).flatMap((rest) => STATES.map((state) => [...rest, state]));
}

/** API.md 2.6 read literally, as sets: which verdicts the finished builds allow. */
function expected(latest: readonly Latest[]): AggregateTestStatus {
  const finished = latest.filter(
    (status): status is BuildStatus => status !== undefined && isFinishedStatus(status),
  );
  const passing = finished.some((status) => status === 'passed');
  const failing = finished.some((status) => ['failed', 'error', 'aborted'].includes(status));
  if (!passing && !failing) {
    return 'not_available';
  }
  if (passing && failing) {
    return 'some_passing';
  }
  return passing ? 'all_passing' : 'all_failing';
}

describe('aggregateStatus', () => {
  const all = [0, 1, 2, 3, 4].flatMap((length) => combinations(length));

  it('covers every combination of up to four instances', () => {
    expect(all).toHaveLength(1 + 7 + 49 + 343 + 2401);
  });

  it('agrees with API.md 2.6 on every combination', () => {
    const wrong = all.filter((latest) => aggregateStatus(latest) !== expected(latest));
    expect(wrong).toEqual([]);
  });

  it('reaches every verdict', () => {
    expect(new Set(all.map((latest) => aggregateStatus(latest)))).toEqual(new Set(AGGREGATE_TEST_STATUSES));
  });

  it('does not depend on the order of the instances', () => {
    for (const latest of combinations(3)) {
      expect(aggregateStatus([...latest].reverse())).toBe(aggregateStatus(latest));
    }
  });

  it('is not_available without instances or without a finished build', () => {
    expect(aggregateStatus([])).toBe('not_available');
    expect(aggregateStatus([undefined, undefined])).toBe('not_available');
    expect(aggregateStatus(['running', 'waiting', undefined])).toBe('not_available');
  });

  it('is all_passing when every counted instance passed', () => {
    expect(aggregateStatus(['passed'])).toBe('all_passing');
    expect(aggregateStatus(['passed', undefined, 'running'])).toBe('all_passing');
  });

  it('is all_failing when every counted instance failed, errored or was aborted', () => {
    expect(aggregateStatus(['failed', 'error', 'aborted'])).toBe('all_failing');
    expect(aggregateStatus(['aborted', undefined])).toBe('all_failing');
  });

  it('is some_passing with passing and failing instances', () => {
    expect(aggregateStatus(['passed', 'failed'])).toBe('some_passing');
    expect(aggregateStatus(['error', 'waiting', 'passed'])).toBe('some_passing');
  });
});

describe('failingForInfrastructure (API.md 16)', () => {
  const infra = { status: 'failed' as const, failure: { class: 'infrastructure' as const } };
  const test = { status: 'error' as const, failure: { class: 'test' as const } };

  it('holds when every failing latest build failed for infrastructure', () => {
    expect(
      failingForInfrastructure([infra, { status: 'aborted', failure: { class: 'infrastructure' } }]),
    ).toBe(true);
    expect(failingForInfrastructure([infra, { status: 'passed' }, undefined])).toBe(true);
  });

  it('does not hold with a test or unknown failure among them, or with no failure at all', () => {
    expect(failingForInfrastructure([infra, test])).toBe(false);
    expect(failingForInfrastructure([infra, { status: 'failed', failure: { class: 'unknown' } }])).toBe(
      false,
    );
    expect(failingForInfrastructure([infra, { status: 'failed' }])).toBe(false);
    expect(failingForInfrastructure([{ status: 'passed' }, undefined])).toBe(false);
  });
});

describe('statusMessage and badgeOf', () => {
  it('say failing (infrastructure) for all_failing when the CI failed, and keep the colour', () => {
    expect(statusMessage('all_failing', undefined, true)).toBe('failing (infrastructure)');
    expect(statusMessage('all_failing', undefined, false)).toBe('failing');
    expect(badgeOf('all_failing', true, 'tests', undefined, true)).toMatchObject({
      message: 'failing (infrastructure) (stale)',
      shieldsColor: 'red',
    });
  });

  it('leave the other verdicts as they are', () => {
    expect(statusMessage('some_passing', undefined, true)).toBe('some passing');
  });
});
