import type { StoredBuild } from '../test-monitoring/index.js';
import { verificationOf } from './trs.service.js';

const build = (status: StoredBuild['status'], url: string): StoredBuild => ({
  id: 1,
  instanceId: 1,
  buildId: '1',
  status,
  startedAt: new Date(0),
  durationSeconds: 1,
  url,
});

describe('verificationOf (API.md 10.2)', () => {
  it("is verified when every instance's latest finished build passed, with their runs as sources", () => {
    expect(verificationOf([build('passed', 'https://ci/1'), build('passed', 'https://ci/2')])).toEqual({
      verified: true,
      sources: ['https://ci/1', 'https://ci/2'],
    });
  });

  it('is not verified without instances, while one has no finished build, or when one failed', () => {
    expect(verificationOf([])).toEqual({ verified: false, sources: [] });
    expect(verificationOf([build('passed', 'https://ci/1'), undefined])).toEqual({
      verified: false,
      sources: ['https://ci/1'],
    });
    expect(verificationOf([build('passed', 'https://ci/1'), build('aborted', 'https://ci/2')])).toEqual({
      verified: false,
      sources: ['https://ci/1', 'https://ci/2'],
    });
  });
});
