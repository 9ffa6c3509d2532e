import { MAX_POLL_DELAY_MS, pollDelayMs } from './jobs.service.js';

describe('pollDelayMs', () => {
  it('doubles from 1 s and stays at 30 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 50].map(pollDelayMs)).toEqual([
      1000,
      2000,
      4000,
      8000,
      16000,
      30000,
      30000,
      MAX_POLL_DELAY_MS,
    ]);
  });
});
