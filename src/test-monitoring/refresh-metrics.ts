import { Injectable, Optional } from '@nestjs/common';
import { MetricsService } from '../metrics/metrics.service.js';

/** Running totals of the refresh work since start-up (monotonic, as Prometheus counters are). */
export interface RefreshCounters {
  /** Instances whose check reached an outcome (builds, not modified, failed or rate limited). */
  instancesChecked: number;
  /** HTTP requests sent to CI services (a check that fetches earlier re-run attempts sends several). */
  upstreamRequests: number;
  /** Checks answered 304 Not Modified. */
  notModified: number;
  /** Checks that failed (unreachable, timed out, 4xx/5xx, not the documented answer). */
  failures: number;
  /** Checks answered with an exhausted rate limit; each pauses its service. */
  rateLimited: number;
}

/** One cycle's figures: the counters' growth during it, plus the paused services at its end. */
export interface CycleReport extends RefreshCounters {
  pausedServices: number;
  durationMs: number;
}

export type CheckOutcomeKind = 'builds' | 'not_modified' | 'failed' | 'rate_limited';

/** The `result` label of a check in Prometheus, as the operators' dashboards name it. */
const RESULT_LABEL: Record<CheckOutcomeKind, string> = {
  builds: '200',
  not_modified: '304',
  failed: 'error',
  rate_limited: 'rate_limited',
};

function zero(): RefreshCounters {
  return { instancesChecked: 0, upstreamRequests: 0, notModified: 0, failures: 0, rateLimited: 0 };
}

/**
 * The refresh scheduler's counters, kept in one place so that a metrics endpoint can read
 * them without touching the scheduler: totals, the same per service type, the cycles run and
 * the paused services. The clients count their own requests here.
 */
@Injectable()
export class RefreshMetrics {
  private readonly totals = zero();
  private readonly perService = new Map<string, RefreshCounters>();
  /** Refresh cycles run (ticks that found due instances). */
  cycles = 0;
  /** Services paused by a rate limit at the end of the last cycle (a gauge). */
  pausedServices = 0;
  /** The last cycle's report, if any cycle ran. */
  lastCycle?: CycleReport;

  /** Prometheus is optional so that the clients and their specs can be built without the app. */
  constructor(@Optional() private readonly prometheus?: MetricsService) {}

  countUpstreamRequest(serviceType: string): void {
    this.totals.upstreamRequests++;
    this.service(serviceType).upstreamRequests++;
    this.prometheus?.upstreamHttpRequests.inc({ service: serviceType });
  }

  countOutcome(serviceType: string, kind: CheckOutcomeKind): void {
    this.prometheus?.upstreamRequests.inc({ service: serviceType, result: RESULT_LABEL[kind] });
    for (const counters of [this.totals, this.service(serviceType)]) {
      counters.instancesChecked++;
      switch (kind) {
        case 'not_modified':
          counters.notModified++;
          break;
        case 'failed':
          counters.failures++;
          break;
        case 'rate_limited':
          counters.rateLimited++;
          break;
        case 'builds':
          break;
      }
    }
  }

  /** The totals so far. */
  snapshot(): RefreshCounters {
    return { ...this.totals };
  }

  /** The totals so far per service type. */
  byService(): Map<string, RefreshCounters> {
    return new Map([...this.perService].map(([type, counters]) => [type, { ...counters }]));
  }

  /** Closes a cycle that started at `before`; returns (and keeps) its report. */
  endCycle(before: RefreshCounters, pausedServices: number, durationMs: number): CycleReport {
    this.cycles++;
    this.pausedServices = pausedServices;
    this.prometheus?.refreshCycles.inc();
    this.prometheus?.pausedServices.set(pausedServices);
    const report: CycleReport = {
      instancesChecked: this.totals.instancesChecked - before.instancesChecked,
      upstreamRequests: this.totals.upstreamRequests - before.upstreamRequests,
      notModified: this.totals.notModified - before.notModified,
      failures: this.totals.failures - before.failures,
      rateLimited: this.totals.rateLimited - before.rateLimited,
      pausedServices,
      durationMs,
    };
    this.lastCycle = report;
    this.prometheus?.instancesChecked.inc(report.instancesChecked);
    return report;
  }

  private service(serviceType: string): RefreshCounters {
    let counters = this.perService.get(serviceType);
    if (!counters) {
      counters = zero();
      this.perService.set(serviceType, counters);
    }
    return counters;
  }
}

/** The one log line per cycle. */
export function formatCycleReport(report: CycleReport): string {
  return (
    `refresh cycle: ${report.instancesChecked} instances checked, ` +
    `${report.upstreamRequests} upstream requests, ${report.notModified} not modified (304), ` +
    `${report.failures} failed, ${report.rateLimited} rate limited, ` +
    `${report.pausedServices} paused services, ${report.durationMs} ms`
  );
}
