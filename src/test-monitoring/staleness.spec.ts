import {
  inReasonOrder,
  staleFindingsOf,
  staleReasonsOf,
  staleSentence,
  STALE_REASONS,
  type InstanceFreshness,
} from './staleness.js';

const NOW = new Date('2026-11-29T12:00:00.000Z');
const DAY = 24 * 3600 * 1000;
const FRESH: InstanceFreshness = {
  lastCheckFailed: false,
  servicePaused: false,
  newestBuildAt: new Date(NOW.getTime() - DAY),
  workflowDisabled: false,
};

describe('staleReasonsOf (API.md 16)', () => {
  it('finds none for a checked instance with a recent build', () => {
    expect(staleReasonsOf(FRESH, NOW, 30)).toEqual([]);
  });

  it('counts a newest build older than the days as no_recent_build, one exactly that old not', () => {
    expect(staleReasonsOf({ ...FRESH, newestBuildAt: new Date(NOW.getTime() - 30 * DAY) }, NOW, 30)).toEqual(
      [],
    );
    expect(
      staleReasonsOf({ ...FRESH, newestBuildAt: new Date(NOW.getTime() - 30 * DAY - 1000) }, NOW, 30),
    ).toEqual(['no_recent_build']);
    expect(staleReasonsOf({ ...FRESH, newestBuildAt: new Date(NOW.getTime() - 8 * DAY) }, NOW, 7)).toEqual([
      'no_recent_build',
    ]);
  });

  it('gives an instance without builds no reason for their age', () => {
    expect(staleReasonsOf({ ...FRESH, newestBuildAt: undefined }, NOW, 1)).toEqual([]);
  });

  it('lists every reason that holds, in the order of STALE_REASONS', () => {
    expect(
      staleReasonsOf(
        {
          lastCheckFailed: true,
          servicePaused: true,
          newestBuildAt: new Date(0),
          workflowDisabled: true,
        },
        NOW,
        30,
      ),
    ).toEqual([...STALE_REASONS]);
    expect(staleReasonsOf({ ...FRESH, workflowDisabled: true, lastCheckFailed: true }, NOW, 30)).toEqual([
      'check_failed',
      'schedule_disabled',
    ]);
  });
});

describe('staleFindingsOf and inReasonOrder', () => {
  it('groups the instances under each reason, reasons in order, instances as given', () => {
    expect(
      staleFindingsOf([
        { instance: 'a', reasons: ['schedule_disabled'] },
        { instance: 'b', reasons: [] },
        { instance: 'c', reasons: ['check_failed', 'schedule_disabled'] },
      ]),
    ).toEqual([
      { reason: 'check_failed', instances: ['c'] },
      { reason: 'schedule_disabled', instances: ['a', 'c'] },
    ]);
    expect(staleFindingsOf([{ instance: 'a', reasons: [] }])).toEqual([]);
  });

  it('orders and de-duplicates reasons', () => {
    expect(inReasonOrder(['schedule_disabled', 'check_failed', 'schedule_disabled'])).toEqual([
      'check_failed',
      'schedule_disabled',
    ]);
  });
});

describe('staleSentence', () => {
  it('names the instances and, for old builds, the days', () => {
    expect(staleSentence('no_recent_build', ['‘a’', '‘b’'], 30)).toBe(
      'the newest build of ‘a’, ‘b’ is more than 30 days old, it may no longer hold',
    );
    expect(staleSentence('schedule_disabled', ['‘a’'], 30)).toMatch(
      /^the CI has switched off the workflow of ‘a’/,
    );
    expect(staleSentence('check_failed', ['‘a’'], 30)).toMatch(/last check of ‘a’ failed/);
    expect(staleSentence('rate_limited', ['‘a’'], 30)).toMatch(/rate limit/);
  });
});
