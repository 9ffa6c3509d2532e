import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { BuildFailure } from './failures/failure-classifier.js';
import type { BuildStatus } from './testing-services/testing-service.js';

/** A finished build as a recorded check left it. */
export interface RecordedBuild {
  buildId: string;
  status: BuildStatus;
  startedAt: Date;
  durationSeconds: number;
  url: string;
  /** Why it failed (API.md 16); absent on passed builds. */
  failure?: BuildFailure;
}

/** What one successful check of an instance recorded, as seen inside the recording's transaction. */
export interface RecordedCheck {
  instanceId: number;
  checkedAt: Date;
  /** The instance's latest finished build after the check, and the finished one before it. */
  latestFinished?: RecordedBuild;
  previousFinished?: RecordedBuild;
  /** The latest finished build before the check (absent when the instance had none). */
  latestFinishedBefore?: RecordedBuild;
  /** The CI reported the instance's workflow as disabled. */
  workflowDisabled: boolean;
}

/**
 * Told about successful checks inside the transaction that records them: what a listener writes
 * commits or rolls back with the check's builds.
 */
export type CheckResultsListener = (tx: EntityManager, checks: readonly RecordedCheck[]) => Promise<void>;

/**
 * The port where check results are recorded, for features that react to them (notifications)
 * without test monitoring knowing them.
 */
@Injectable()
export class CheckResults {
  private readonly listeners: CheckResultsListener[] = [];

  onRecorded(listener: CheckResultsListener): void {
    this.listeners.push(listener);
  }

  get listened(): boolean {
    return this.listeners.length > 0;
  }

  /** Called by CheckStateRepository.recordChecks in its transaction. */
  async recorded(tx: EntityManager, checks: readonly RecordedCheck[]): Promise<void> {
    if (checks.length === 0) {
      return;
    }
    for (const listener of this.listeners) {
      await listener(tx, checks);
    }
  }
}
