import type { RecordedBuild, RecordedCheck } from '../test-monitoring/index.js';
import { dueEvents, eventsColumn, wants } from './events.js';

const DAY = 24 * 3600_000;
const NOW = new Date(Date.UTC(2026, 0, 31));

function build(buildId: string, status: RecordedBuild['status'], endedDaysAgo = 1): RecordedBuild {
  return {
    buildId,
    status,
    startedAt: new Date(NOW.getTime() - endedDaysAgo * DAY - 60_000),
    durationSeconds: 60,
    url: '',
  };
}

function check(partial: Partial<RecordedCheck>): RecordedCheck {
  return { instanceId: 7, checkedAt: NOW, workflowDisabled: false, ...partial };
}

describe('dueEvents', () => {
  it('raises BUILD_FAILED when a new failing build follows a passed one', () => {
    const due = dueEvents(
      check({
        latestFinished: build('2', 'failed'),
        previousFinished: build('1', 'passed'),
        latestFinishedBefore: build('1', 'passed'),
      }),
      30 * DAY,
    );
    expect(due.map((event) => [event.event, event.buildId])).toEqual([['BUILD_FAILED', '2']]);
  });

  it.each(['error', 'aborted'] as const)('counts %s as failing', (status) => {
    const due = dueEvents(
      check({
        latestFinished: build('2', status),
        previousFinished: build('1', 'passed'),
        latestFinishedBefore: build('1', 'passed'),
      }),
      30 * DAY,
    );
    expect(due.map((event) => event.event)).toEqual(['BUILD_FAILED']);
  });

  it('raises BUILD_RECOVERED when a passed build follows a failing one', () => {
    const due = dueEvents(
      check({
        latestFinished: build('3', 'passed'),
        previousFinished: build('2', 'error'),
        latestFinishedBefore: build('2', 'error'),
      }),
      30 * DAY,
    );
    expect(due.map((event) => [event.event, event.buildId])).toEqual([['BUILD_RECOVERED', '3']]);
  });

  it('raises nothing for the first build ever seen, even when its history flips', () => {
    expect(
      dueEvents(
        check({ latestFinished: build('2', 'failed'), previousFinished: build('1', 'passed') }),
        30 * DAY,
      ),
    ).toEqual([]);
  });

  it('raises nothing when the latest finished build did not change, or the state stays', () => {
    const same = build('2', 'failed');
    expect(
      dueEvents(
        check({ latestFinished: same, previousFinished: build('1', 'passed'), latestFinishedBefore: same }),
        30 * DAY,
      ),
    ).toEqual([]);
    expect(
      dueEvents(
        check({ latestFinished: build('3', 'failed'), previousFinished: same, latestFinishedBefore: same }),
        30 * DAY,
      ),
    ).toEqual([]);
  });

  it('raises TESTS_STOPPED keyed on the latest finished build once it is older than the limit', () => {
    const old = build('9', 'passed', 31);
    expect(
      dueEvents(check({ latestFinished: old, latestFinishedBefore: old }), 30 * DAY).map((e) => [
        e.event,
        e.buildId,
      ]),
    ).toEqual([['TESTS_STOPPED', '9']]);
    const recent = build('9', 'passed', 29);
    expect(dueEvents(check({ latestFinished: recent, latestFinishedBefore: recent }), 30 * DAY)).toEqual([]);
  });

  it('raises TESTS_STOPPED and SCHEDULE_DISABLED for a disabled workflow, with an empty build key when it never finished one', () => {
    expect(dueEvents(check({ workflowDisabled: true }), 30 * DAY).map((e) => [e.event, e.buildId])).toEqual([
      ['TESTS_STOPPED', ''],
      ['SCHEDULE_DISABLED', ''],
    ]);
  });

  it('keys SCHEDULE_DISABLED on the latest finished build, so that it is raised once until the workflow runs again', () => {
    const recent = build('12', 'passed', 2);
    expect(
      dueEvents(
        check({ workflowDisabled: true, latestFinished: recent, latestFinishedBefore: recent }),
        30 * DAY,
      )
        .filter((event) => event.event === 'SCHEDULE_DISABLED')
        .map((event) => [event.buildId, event.build?.buildId]),
    ).toEqual([['12', '12']]);
    expect(
      dueEvents(check({ latestFinished: recent, latestFinishedBefore: recent }), 30 * DAY).map(
        (e) => e.event,
      ),
    ).toEqual([]);
  });
});

describe('event lists', () => {
  it('stores events in a fixed order without duplicates and reads back only known names', () => {
    expect(eventsColumn.to(['TESTS_STOPPED', 'ALL', 'TESTS_STOPPED'])).toBe('ALL,TESTS_STOPPED');
    expect(eventsColumn.from('ALL,NOPE,BUILD_FAILED')).toEqual(['ALL', 'BUILD_FAILED']);
  });

  it('lets ALL want every event', () => {
    expect(wants(['ALL'], 'TESTS_STOPPED')).toBe(true);
    expect(wants(['BUILD_FAILED'], 'BUILD_RECOVERED')).toBe(false);
  });
});
