import type { DataSource } from 'typeorm';
import { BuildsRepository } from '../../src/test-monitoring/builds.repository.js';
import { CheckResults } from '../../src/test-monitoring/check-results.js';
import { CheckStateRepository } from '../../src/test-monitoring/check-state.repository.js';
import { BuildEntity } from '../../src/test-monitoring/entities/build.entity.js';
import { CheckStateEntity } from '../../src/test-monitoring/entities/check-state.entity.js';
import { ServicePauseEntity } from '../../src/test-monitoring/entities/service-pause.entity.js';
import {
  TestInstanceEntity,
  TestSuiteEntity,
  WorkflowEntity,
  WorkflowVersionEntity,
} from '../../src/workflows/entities/registry.entities.js';
import { RegisteredInstances } from '../../src/workflows/registered-instances.js';
import { RegistryEvents } from '../../src/workflows/registry-events.js';
import { StoredTestStatuses } from '../../src/workflows/stored-test-statuses.js';
import { VersionStatuses } from '../../src/test-monitoring/version-statuses.js';
import { WorkflowsRepository } from '../../src/workflows/workflows.repository.js';
import { FollowedRefEntity } from '../../src/repositories/follow/entities/followed-ref.entity.js';
import { FollowedRepositoryEntity } from '../../src/repositories/follow/entities/followed-repository.entity.js';
import { GithubApiPauseEntity } from '../../src/repositories/follow/entities/github-api-pause.entity.js';
import { FollowsRepository } from '../../src/repositories/follow/follows.repository.js';

export interface MonitoringRepositories {
  builds: BuildsRepository;
  checkStates: CheckStateRepository;
  registered: RegisteredInstances;
  events: RegistryEvents;
}

/** Monitoring's repositories on a database, wired as the modules wire them (the registry's read port included). */
export function monitoringRepositories(dataSource: DataSource): MonitoringRepositories {
  const events = new RegistryEvents();
  const workflows = new WorkflowsRepository(
    dataSource,
    dataSource.getRepository(WorkflowEntity),
    dataSource.getRepository(WorkflowVersionEntity),
    dataSource.getRepository(TestSuiteEntity),
    dataSource.getRepository(TestInstanceEntity),
    events,
    new FollowsRepository(
      dataSource,
      dataSource.getRepository(FollowedRepositoryEntity),
      dataSource.getRepository(FollowedRefEntity),
      dataSource.getRepository(GithubApiPauseEntity),
      events,
    ),
  );
  const registered = new RegisteredInstances(workflows);
  const builds = new BuildsRepository(dataSource.getRepository(BuildEntity));
  const statuses = new VersionStatuses(builds, new StoredTestStatuses(dataSource), events);
  statuses.onModuleInit();
  const checkStates = new CheckStateRepository(
    dataSource.getRepository(CheckStateEntity),
    dataSource.getRepository(ServicePauseEntity),
    builds,
    registered,
    events,
    new CheckResults(),
    statuses,
  );
  checkStates.onModuleInit();
  return { builds, checkStates, registered, events };
}

/** An instance's check state, with `id` the instance's id (as specs compare it). */
export type CheckStateRow = CheckStateEntity & { id: number };

export async function checkStateRows(dataSource: DataSource): Promise<CheckStateRow[]> {
  const rows = await dataSource.getRepository(CheckStateEntity).find({ order: { instanceId: 'ASC' } });
  return rows.map((row) => Object.assign(row, { id: row.instanceId }));
}

export async function checkStateRow(dataSource: DataSource, instanceId: number): Promise<CheckStateRow> {
  const row = await dataSource.getRepository(CheckStateEntity).findOneByOrFail({ instanceId });
  return Object.assign(row, { id: row.instanceId });
}

/** When a service's pause ends, or null when it is not paused. */
export async function pausedUntil(dataSource: DataSource, serviceId: number): Promise<Date | null> {
  const row = await dataSource.getRepository(ServicePauseEntity).findOneBy({ serviceId });
  return row?.pausedUntil ?? null;
}
