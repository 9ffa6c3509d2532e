import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { RegistryEvents, StoredTestStatuses } from '../workflows/index.js';
import { aggregateStatus } from './aggregate-status.js';
import { BuildsRepository } from './builds.repository.js';

/**
 * Keeps the registry's stored status of versions (StoredTestStatuses, what the wall orders by)
 * in step with their builds, inside each transaction that changes them: builds recorded by a
 * check, an instance started over on another resource (its builds forgotten), an instance
 * deleted. The status is the one the status reads compute (aggregateStatus over each instance's
 * latest finished build), from the rows the transaction sees.
 */
@Injectable()
export class VersionStatuses implements OnModuleInit {
  constructor(
    private readonly builds: BuildsRepository,
    private readonly stored: StoredTestStatuses,
    private readonly events: RegistryEvents,
  ) {}

  onModuleInit(): void {
    this.events.onInstanceDeleted((tx, instance) => this.restate(tx, [instance.versionId]));
  }

  /** The builds of these instances changed in `tx`: their versions' statuses are computed again. */
  async buildsChanged(tx: EntityManager, instanceIds: readonly number[]): Promise<void> {
    await this.restate(tx, await this.builds.versionsOfInstances(tx, instanceIds));
  }

  private async restate(tx: EntityManager, versionIds: readonly number[]): Promise<void> {
    if (versionIds.length === 0) {
      return;
    }
    const latest = await this.builds.latestFinishedOfVersions(versionIds, tx);
    await this.stored.record(
      tx,
      new Map(
        [...latest].map(([versionId, builds]) => [
          versionId,
          aggregateStatus(builds.map((build) => build?.status)),
        ]),
      ),
    );
  }
}
