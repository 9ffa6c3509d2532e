import { FAILURE_REASON_LENGTH } from '../entities/build.entity.js';
import { isFailingStatus, type Build } from '../testing-services/testing-service.js';
import type { BuildFailure } from './failure-classifier.js';
import { FAILURE_CLASSES, type FailureClass } from './failure-patterns.js';

/*
 * A build's failure (API.md 16) in the columns of `builds`: class, reason, and the evidence as a
 * JSON array. BuildsRepository writes and reads them through these.
 */

export interface FailureRow {
  failureClass: string | null;
  failureReason: string | null;
  failureEvidence: string | null;
}

/** The failure columns of a raw read, under the names failureOfRow reads. */
export function FAILURE_COLUMNS(alias: string): string {
  return `${alias}.failure_class AS failure_class, ${alias}.failure_reason AS failure_reason, ${alias}.failure_evidence AS failure_evidence`;
}

/**
 * What an upsert writes of a build's failure: its classification when the check made one, none
 * for a build that is not failing (a restarted Travis or Jenkins build keeps its id), and nothing
 * (the stored one stays) for a failing build the check did not classify again.
 */
export function failureColumns(build: Build): Partial<FailureRow> {
  if (!isFailingStatus(build.status)) {
    return { failureClass: null, failureReason: null, failureEvidence: null };
  }
  if (build.failure === undefined) {
    return {};
  }
  return {
    failureClass: build.failure.class,
    failureReason: build.failure.reason.slice(0, FAILURE_REASON_LENGTH),
    failureEvidence: JSON.stringify(build.failure.evidence),
  };
}

/** A stored failure, when the row has one. */
export function failureOfRow(row: {
  failure_class?: string | null;
  failure_reason?: string | null;
  failure_evidence?: string | null;
}): { failure?: BuildFailure } {
  if (row.failure_class === null || row.failure_class === undefined) {
    return {};
  }
  const known = (FAILURE_CLASSES as readonly string[]).includes(row.failure_class);
  return {
    failure: {
      class: known ? (row.failure_class as FailureClass) : 'unknown',
      reason: row.failure_reason ?? '',
      evidence: evidenceOf(row.failure_evidence ?? null),
    },
  };
}

function evidenceOf(stored: string | null): string[] {
  if (stored === null) {
    return [];
  }
  try {
    const parsed: unknown = JSON.parse(stored);
    return Array.isArray(parsed) ? parsed.filter((line): line is string => typeof line === 'string') : [];
  } catch {
    return [];
  }
}
