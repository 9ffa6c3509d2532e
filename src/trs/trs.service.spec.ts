import type { StoredBuild } from '../test-monitoring/index.js';
import { isVerified } from './trs.service.js';

const NOW = new Date('2026-11-29T12:00:00.000Z');
const DAY = 24 * 3600 * 1000;

const build = (status: StoredBuild['status'], daysAgo = 1): StoredBuild => ({
  id: 1,
  instanceId: 1,
  buildId: '1',
  status,
  startedAt: new Date(NOW.getTime() - daysAgo * DAY),
  durationSeconds: 1,
  url: 'https://ci/1',
});

describe('isVerified (API.md 10.2, 16)', () => {
  it("is true when every instance's latest finished build passed within the days", () => {
    expect(isVerified([build('passed'), build('passed', 30)], NOW, 30)).toBe(true);
  });

  it('is false without instances, while one has no finished build, or when one failed', () => {
    expect(isVerified([], NOW, 30)).toBe(false);
    expect(isVerified([build('passed'), undefined], NOW, 30)).toBe(false);
    expect(isVerified([build('passed'), build('aborted')], NOW, 30)).toBe(false);
  });

  it('is false once a passing build is older than the days', () => {
    expect(isVerified([build('passed'), build('passed', 30.01)], NOW, 30)).toBe(false);
    expect(isVerified([build('passed', 8)], NOW, 7)).toBe(false);
  });
});
