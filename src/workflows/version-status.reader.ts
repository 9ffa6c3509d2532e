import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  WORKFLOW_STATUS_SOURCE,
  type LastCheck,
  type VersionStatusSummary,
  type WorkflowStatusSource,
} from './workflow-status-source.js';

/**
 * The test status of versions, from test monitoring when the app has it. The source is
 * injected by token: monitoring's module is global and exports it, so that the registry
 * neither imports monitoring nor breaks without it (then the token is simply absent).
 */
@Injectable()
export class VersionStatusReader {
  constructor(
    @Optional()
    @Inject(WORKFLOW_STATUS_SOURCE)
    private readonly source: WorkflowStatusSource | null = null,
  ) {}

  /** Summaries by version id; a version without one is `not_available` (see NOT_AVAILABLE). */
  async summaries(versionIds: readonly number[]): Promise<Map<number, VersionStatusSummary>> {
    if (!this.source || versionIds.length === 0) {
      return new Map();
    }
    return this.source.summaries(versionIds);
  }

  /** The last check of each of the instances that had one (none without monitoring). */
  async lastChecks(instanceIds: readonly number[]): Promise<Map<number, LastCheck>> {
    if (!this.source || instanceIds.length === 0) {
      return new Map();
    }
    return this.source.lastChecks([...new Set(instanceIds)]);
  }
}
