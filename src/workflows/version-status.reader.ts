import { Inject, Injectable, Optional } from '@nestjs/common';
import type { TestInstanceEntity } from './entities/registry.entities.js';
import {
  WORKFLOW_STATUS_SOURCE,
  type LastCheck,
  type ListedStatusSummary,
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

  /** `summaries` with their latest builds' last checks, as a list's batch shows them. */
  async listedSummaries(versionIds: readonly number[]): Promise<Map<number, ListedStatusSummary>> {
    if (!this.source || versionIds.length === 0) {
      return new Map();
    }
    return this.source.listedSummaries(versionIds);
  }

  /** The last check of each of the instances that had one (none without monitoring). */
  async lastChecks(instanceIds: readonly number[]): Promise<Map<number, LastCheck>> {
    if (!this.source || instanceIds.length === 0) {
      return new Map();
    }
    return this.source.lastChecks([...new Set(instanceIds)]);
  }

  /**
   * `lastChecks` of instances of one version, registered at `registeredAt`. An instance registered
   * as never checked (its crate gave it no resource its service can check, API.md 12) has no check;
   * its last check is its registration, which says why it is never checked.
   */
  async lastChecksOf(
    instances: readonly TestInstanceEntity[],
    registeredAt: Date,
  ): Promise<Map<number, LastCheck>> {
    const checks = await this.lastChecks(
      instances.filter((instance) => instance.uncheckedReason === null).map((instance) => instance.id),
    );
    for (const instance of instances) {
      if (instance.uncheckedReason !== null) {
        checks.set(instance.id, {
          at: registeredAt,
          ok: false,
          error: `never checked: ${instance.uncheckedReason}`,
        });
      }
    }
    return checks;
  }
}
