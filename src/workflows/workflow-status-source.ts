import type { BuildStatus } from './build-status.js';

/**
 * How the registry learns the test status of versions without depending on test
 * monitoring: monitoring's (global) module exports this token (`useExisting` its status
 * service) and the registry injects it, optionally. Without monitoring, every status is
 * `not_available`.
 */
export const WORKFLOW_STATUS_SOURCE = Symbol('WORKFLOW_STATUS_SOURCE');

export type AggregateTestStatus = 'all_passing' | 'some_passing' | 'all_failing' | 'not_available';

export interface LatestBuildSummary {
  instanceId: number;
  buildId: string;
  status: BuildStatus;
  startedAt: Date;
  durationSeconds: number;
  url: string;
}

export interface VersionStatusSummary {
  aggregate: AggregateTestStatus;
  /** The most recent build over all instances of the version, or null. */
  latestBuild: LatestBuildSummary | null;
}

export interface WorkflowStatusSource {
  /** Summaries for many versions at once (one query, not one per version); absent ids are `not_available`. */
  summaries(versionIds: readonly number[]): Promise<Map<number, VersionStatusSummary>>;
}

export const NOT_AVAILABLE: VersionStatusSummary = { aggregate: 'not_available', latestBuild: null };
