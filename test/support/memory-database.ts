import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { UserEntity } from '../../src/auth/entities/user.entity.js';
import { loadConfig } from '../../src/config/app-config.js';
import { dataSourceOptions, openDataSource } from '../../src/database/data-source.js';
import { VmAddressEntity } from '../../src/orchestration/entities/vm-address.entity.js';
import { VmJobEntity } from '../../src/orchestration/entities/vm-job.entity.js';
import { VmLeaseEntity } from '../../src/orchestration/entities/vm-lease.entity.js';
import { BuildEntity } from '../../src/test-monitoring/entities/build.entity.js';
import { CheckStateEntity } from '../../src/test-monitoring/entities/check-state.entity.js';
import { ServicePauseEntity } from '../../src/test-monitoring/entities/service-pause.entity.js';
import {
  TestInstanceEntity,
  TestSuiteEntity,
  VersionIssueEntity,
  WorkflowEntity,
  WorkflowVersionEntity,
} from '../../src/workflows/entities/registry.entities.js';
import { TestServiceEntity } from '../../src/workflows/entities/test-service.entity.js';
import { FollowedRefEntity } from '../../src/repositories/follow/entities/followed-ref.entity.js';
import { FollowedRepositoryEntity } from '../../src/repositories/follow/entities/followed-repository.entity.js';
import { GithubApiPauseEntity } from '../../src/repositories/follow/entities/github-api-pause.entity.js';

/**
 * An in-memory SQLite database with every migration applied and the registry, monitoring and
 * area C entities, for unit specs of repositories (STYLE.md 10: a real database over a mock).
 */
export function openMemoryDatabase(): Promise<DataSource> {
  const config = loadConfig({
    DATABASE_URL: 'sqlite::memory:',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'memory-db-')),
    JWT_SECRET: 'x'.repeat(40),
  });
  return openDataSource({
    ...dataSourceOptions(config),
    entities: [
      UserEntity,
      WorkflowEntity,
      WorkflowVersionEntity,
      TestSuiteEntity,
      TestServiceEntity,
      TestInstanceEntity,
      VersionIssueEntity,
      FollowedRepositoryEntity,
      FollowedRefEntity,
      GithubApiPauseEntity,
      BuildEntity,
      VmLeaseEntity,
      VmJobEntity,
      VmAddressEntity,
      CheckStateEntity,
      ServicePauseEntity,
    ],
  });
}
