import type { LastCheck } from '../workflows/index.js';
import { rawDate } from '../database/raw-date.js';

/*
 * The check state as status reads see it (API.md 2.6, 11, 16): the rows CheckStateRepository's
 * fixed SQL reads, as the drivers return them, and what replies are built from.
 */

/** A row of viewsOf as the driver returns it (SQLite: 0/1 and text dates; MariaDB: numbers and Dates). */
export interface RawCheckStateView {
  instance_id: number | string;
  last_checked_at: Date | string | null;
  last_check_failed: number | string | boolean;
  last_check_at: Date | string | null;
  last_error: string | null;
  workflow_disabled: number | string | boolean;
}

/** An instance's check state as status reads show it. */
export interface CheckStateView {
  /** The last successful check. */
  lastCheckedAt: Date | null;
  lastCheckFailed: boolean;
  /** The last check, `ok` or not, and what went wrong (API.md 11); null before the first check. */
  lastCheck: LastCheck | null;
  /** The CI no longer runs the instance's workflow, as last read (API.md 16). */
  workflowDisabled: boolean;
}

/** An instance's check state as a status page's rows read it, with its newest build's start. */
export interface VersionCheckState {
  versionId: number;
  serviceId: number;
  lastCheckedAt: Date | null;
  lastCheckFailed: boolean;
  workflowDisabled: boolean;
  /** Undefined without builds. */
  newestBuildAt?: Date;
}

/** A row of statesOfVersions as the driver returns it. */
export interface RawVersionCheckState {
  version_id: number | string;
  service_id: number | string;
  last_checked_at: Date | string | null;
  last_check_failed: number | string | boolean;
  workflow_disabled: number | string | boolean;
  newest_build_at: Date | string | null;
}

/** A row of viewsOf as replies use it. */
export function toCheckStateView(row: RawCheckStateView): CheckStateView {
  const failed = Number(row.last_check_failed) === 1;
  return {
    lastCheckedAt: row.last_checked_at === null ? null : rawDate(row.last_checked_at),
    lastCheckFailed: failed,
    workflowDisabled: Number(row.workflow_disabled) === 1,
    lastCheck: lastCheckOfRow(row),
  };
}

/** The check state columns a last check is read from, as the driver returns them. */
export type RawLastCheck = Pick<RawCheckStateView, 'last_check_at' | 'last_check_failed' | 'last_error'>;

/** The last check a check state row records (API.md 11); null before the first check. */
export function lastCheckOfRow(row: RawLastCheck): LastCheck | null {
  if (row.last_check_at === null) {
    return null;
  }
  const failed = Number(row.last_check_failed) === 1;
  return {
    at: rawDate(row.last_check_at),
    ok: !failed,
    error: failed ? (row.last_error ?? 'the check failed') : null,
  };
}

/** A row of statesOfVersions as a status page's rows use it. */
export function toVersionCheckState(row: RawVersionCheckState): VersionCheckState {
  return {
    versionId: Number(row.version_id),
    serviceId: Number(row.service_id),
    lastCheckedAt: row.last_checked_at === null ? null : rawDate(row.last_checked_at),
    lastCheckFailed: Number(row.last_check_failed) === 1,
    workflowDisabled: Number(row.workflow_disabled) === 1,
    newestBuildAt: row.newest_build_at === null ? undefined : rawDate(row.newest_build_at),
  };
}
