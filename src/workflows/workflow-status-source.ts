import type { BuildStatus, FailureClass } from './build-status.js';

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
  /** On a failing build (API.md 16). */
  failure?: { class: FailureClass; reason: string; evidence: readonly string[] };
}

export interface VersionStatusSummary {
  aggregate: AggregateTestStatus;
  /** The most recent build over all instances of the version, or null. */
  latestBuild: LatestBuildSummary | null;
}

/**
 * The last check of a test instance (API.md 11): when, whether it succeeded, and what the CI
 * service answered when it did not (status and message, never a credential).
 */
export interface LastCheck {
  at: Date;
  ok: boolean;
  /** Null when `ok`. */
  error: string | null;
}

/**
 * A summary as a list's item shows it: with the last check of the instance of its latest build
 * (null when it has none, or without a latest build).
 */
export interface ListedStatusSummary extends VersionStatusSummary {
  latestBuildCheck: LastCheck | null;
}

/** Last checks by instance id; an instance without one (never checked yet) is absent. */
export type LastChecks = ReadonlyMap<number, LastCheck>;

export interface WorkflowStatusSource {
  /** Summaries for many versions at once (one query, not one per version); absent ids are `not_available`. */
  summaries(versionIds: readonly number[]): Promise<Map<number, VersionStatusSummary>>;
  /** The last check of each instance that had one, in one query. */
  lastChecks(instanceIds: readonly number[]): Promise<Map<number, LastCheck>>;
  /** `summaries` with their latest builds' last checks, in one query (a list's batch). */
  listedSummaries(versionIds: readonly number[]): Promise<Map<number, ListedStatusSummary>>;
}

export const NOT_AVAILABLE: VersionStatusSummary = { aggregate: 'not_available', latestBuild: null };

export const NOT_AVAILABLE_LISTED: ListedStatusSummary = { ...NOT_AVAILABLE, latestBuildCheck: null };
