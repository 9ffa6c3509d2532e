import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { UnknownElementException } from '@nestjs/core/errors/exceptions/unknown-element.exception.js';
import {
  WORKFLOW_STATUS_SOURCE,
  type VersionStatusSummary,
  type WorkflowStatusSource,
} from './workflow-status-source.js';

/**
 * The test status of versions, from test monitoring when the app has it. Looked up by token
 * across modules, lazily, so that the registry neither imports monitoring nor breaks without it.
 */
@Injectable()
export class VersionStatusReader {
  /** Undefined until first asked; null when the app has no status source. */
  private source: WorkflowStatusSource | null | undefined;

  constructor(private readonly moduleRef: ModuleRef) {}

  /** Summaries by version id; a version without one is `not_available` (see NOT_AVAILABLE). */
  async summaries(versionIds: readonly number[]): Promise<Map<number, VersionStatusSummary>> {
    const source = this.resolve();
    if (source === null || versionIds.length === 0) {
      return new Map();
    }
    return source.summaries(versionIds);
  }

  private resolve(): WorkflowStatusSource | null {
    if (this.source === undefined) {
      try {
        this.source = this.moduleRef.get<WorkflowStatusSource>(WORKFLOW_STATUS_SOURCE, { strict: false });
      } catch (error) {
        if (!(error instanceof UnknownElementException)) {
          throw error;
        }
        this.source = null;
      }
    }
    return this.source;
  }
}
