import { rawDate } from '../database/raw-date.js';
import type { BuildEntity } from './entities/build.entity.js';
import type { BuildFailure } from './failures/failure-classifier.js';
import { failureOfRow, type FailureRow } from './failures/stored-failure.js';
import { BUILD_STATUSES, type BuildStatus } from './testing-services/testing-service.js';

// The rows of `builds` as the repository reads and compares them: kept apart from its queries.

/** A build of a status read, with the instance it belongs to. */
export interface StoredBuild {
  id: number;
  instanceId: number;
  buildId: string;
  status: BuildStatus;
  startedAt: Date;
  durationSeconds: number;
  url: string;
  /** The commit it ran on, where the CI's listing named one (read by the entity reads only). */
  headSha?: string | null;
  /** Why it failed (API.md 16); absent on builds that did not fail. */
  failure?: BuildFailure;
}

/** The build of a raw row that joined one (the columns of `builds` under their own names). */
/** An instance's latest build of any state and its latest finished one (absent when it has none). */
export interface LatestOfInstance {
  versionId: number;
  instanceId: number;
  latest?: StoredBuild;
  latestFinished?: StoredBuild;
}

/** A build's columns as raw reads return them, under their column names. */
export interface RawBuildColumns {
  id: number | string;
  build_id: string;
  status: string;
  started_at: Date | string;
  duration_seconds: number | string;
  url: string;
  failure_class: string | null;
  failure_reason: string | null;
  failure_evidence: string | null;
}

/** The same columns from a LEFT JOIN that may have found no build. */
export type RawJoinedBuildColumns = { [K in keyof RawBuildColumns]: RawBuildColumns[K] | null };

export function buildOfRow(
  row: {
    id: number | string;
    build_id: string | null;
    status: string | null;
    started_at: Date | string;
    duration_seconds: number | string | null;
    url: string | null;
    failure_class?: string | null;
    failure_reason?: string | null;
    failure_evidence?: string | null;
  },
  instanceId: number,
): StoredBuild {
  return {
    id: Number(row.id),
    instanceId,
    buildId: String(row.build_id),
    status: toStatus(String(row.status)),
    startedAt: rawDate(row.started_at),
    durationSeconds: Number(row.duration_seconds),
    url: String(row.url),
    ...failureOfRow(row),
  };
}

/** A DATE of a raw row: mysql2 gives a Date at midnight UTC (the connection's timezone is Z), SQLite a string. */
export function dayOf(value: Date | string): string {
  return value instanceof Date ? value.toISOString().slice(0, 10) : String(value);
}

export function toStoredBuild(row: BuildEntity): StoredBuild {
  return {
    id: row.id,
    instanceId: row.instanceId,
    buildId: row.buildId,
    status: toStatus(row.status),
    startedAt: row.startedAt,
    durationSeconds: row.durationSeconds,
    url: row.url,
    headSha: row.headSha,
    ...failureOfRow({
      failure_class: row.failureClass,
      failure_reason: row.failureReason,
      failure_evidence: row.failureEvidence,
    }),
  };
}

export function toStatus(value: string): BuildStatus {
  return (BUILD_STATUSES as readonly string[]).includes(value) ? (value as BuildStatus) : 'error';
}

/** Whole seconds: MariaDB keeps DATETIME to the second, so milliseconds must not count as a change. */
export function sameBuild(
  row: BuildEntity,
  values: {
    status: string;
    startedAt: Date;
    durationSeconds: number;
    url: string;
    headSha: string | null;
  } & Partial<FailureRow>,
): boolean {
  return (
    row.status === values.status &&
    row.headSha === values.headSha &&
    (values.failureClass === undefined ||
      (row.failureClass === values.failureClass &&
        row.failureReason === values.failureReason &&
        row.failureEvidence === values.failureEvidence)) &&
    Math.floor(row.startedAt.getTime() / 1000) === Math.floor(values.startedAt.getTime() / 1000) &&
    row.durationSeconds === values.durationSeconds &&
    row.url === values.url
  );
}
