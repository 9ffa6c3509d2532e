import { formatCycleReport, RefreshMetrics } from './refresh-metrics.js';

describe('RefreshMetrics', () => {
  it('reports a cycle as the growth of the counters, in total and per service type', () => {
    const metrics = new RefreshMetrics();
    metrics.countUpstreamRequest('github');
    metrics.countOutcome('github', 'builds');
    const before = metrics.snapshot();
    for (const kind of ['not_modified', 'not_modified', 'failed', 'rate_limited'] as const) {
      metrics.countUpstreamRequest('travis');
      metrics.countOutcome('travis', kind);
    }
    const report = metrics.endCycle(before, 1, 42);
    expect(report).toEqual({
      instancesChecked: 4,
      upstreamRequests: 4,
      notModified: 2,
      failures: 1,
      rateLimited: 1,
      pausedServices: 1,
      durationMs: 42,
    });
    expect(metrics.cycles).toBe(1);
    expect(metrics.pausedServices).toBe(1);
    expect(metrics.lastCycle).toEqual(report);
    expect(metrics.snapshot()).toMatchObject({ instancesChecked: 5, upstreamRequests: 5 });
    expect(metrics.byService().get('github')).toMatchObject({ instancesChecked: 1, upstreamRequests: 1 });
    expect(metrics.byService().get('travis')).toMatchObject({ notModified: 2, failures: 1, rateLimited: 1 });
  });

  it('formats the cycle as one log line', () => {
    expect(
      formatCycleReport({
        instancesChecked: 10,
        upstreamRequests: 11,
        notModified: 9,
        failures: 1,
        rateLimited: 0,
        pausedServices: 2,
        durationMs: 130,
      }),
    ).toBe(
      'refresh cycle: 10 instances checked, 11 upstream requests, 9 not modified (304), 1 failed, ' +
        '0 rate limited, 2 paused services, 130 ms',
    );
  });
});
