import { LoginAttempts } from './login-attempts.js';

describe('LoginAttempts', () => {
  let now = 0;
  const attempts = (): LoginAttempts => new LoginAttempts(2, 60_000, () => now);

  beforeEach(() => {
    now = 1_000;
  });

  it('admits checks up to the limit at once and holds the next until one ends', async () => {
    const limiter = attempts();
    const first = await limiter.enter(['a']);
    const second = await limiter.enter(['a']);
    let third: Awaited<ReturnType<LoginAttempts['enter']>> | undefined;
    const waiting = limiter.enter(['a']).then((admission) => (third = admission));
    await Promise.resolve();
    expect(third).toBeUndefined();
    if (!first.admitted || !second.admitted) {
      throw new Error('not admitted');
    }
    first.leave(false);
    await waiting;
    expect(third?.admitted).toBe(true);
    second.leave(false);
  });

  it('refuses once the failures alone reach the limit, until the window ends', async () => {
    const limiter = attempts();
    for (let i = 0; i < 2; i++) {
      const admission = await limiter.enter(['a', 'u']);
      if (!admission.admitted) {
        throw new Error('not admitted');
      }
      admission.leave(true);
    }
    now += 10_000;
    await expect(limiter.enter(['b', 'u'])).resolves.toEqual({ admitted: false, retryAfterMs: 50_000 });
    now += 50_000;
    await expect(limiter.enter(['b', 'u'])).resolves.toMatchObject({ admitted: true });
  });

  it('counts a leave once and successes never', async () => {
    const limiter = attempts();
    for (let i = 0; i < 5; i++) {
      const admission = await limiter.enter(['a']);
      if (!admission.admitted) {
        throw new Error('not admitted');
      }
      admission.leave(false);
      admission.leave(true);
    }
    await expect(limiter.enter(['a'])).resolves.toMatchObject({ admitted: true });
  });
});
