import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ARCHIVE_REFERENCES, CrateJanitor, CratesModule } from '../crates/index.js';
import { BadgeTokens } from './badge-tokens.js';
import {
  ISSUE_CHECKS_PROVIDER,
  MissingLicenseCheck,
  MissingReadmeCheck,
  MissingTestDefinitionCheck,
  MissingTestSuiteCheck,
  MissingWorkflowFileCheck,
  TestSuiteWithoutInstancesCheck,
  UncheckableTestInstanceCheck,
  WorkflowTestingProfileCheck,
} from '../crates/index.js';
import { RepositoryChecks } from './checks/repository-checks.js';
import { MainWorkflowBackfill } from './main-workflow-backfill.js';
import { CrateFetcher } from './crate-fetcher.js';
import {
  GithubConfigController,
  InvalidConfigFileCheck,
  MissingFollowedBranchCheck,
  RepositoriesModule,
} from '../repositories/index.js';
import { FollowingConnection } from './following-connection.js';
import {
  TestInstanceEntity,
  TestSuiteEntity,
  VersionIssueEntity,
  WorkflowEntity,
  WorkflowVersionEntity,
} from './entities/registry.entities.js';
import { TestServiceEntity } from './entities/test-service.entity.js';
import { ServiceTypeSchema } from './dto/service-type.schema.js';
import { InstancesController } from './instances.controller.js';
import { InstancesRepository } from './instances.repository.js';
import { InstancesService } from './instances.service.js';
import { RegisteredInstances } from './registered-instances.js';
import { RegistryEvents } from './registry-events.js';
import { StoredTestStatuses } from './stored-test-statuses.js';
import { SuitesController } from './suites.controller.js';
import { UserWorkflowsController } from './user-workflows.controller.js';
import { VersionStatusReader } from './version-status.reader.js';
import { WorkflowAccess } from './workflow-access.service.js';
import { WorkflowsController } from './workflows.controller.js';
import { WorkflowsRepository } from './workflows.repository.js';
import { WorkflowsService } from './workflows.service.js';
import { RegistrationService } from './registration.service.js';
import { VersionArchives } from './version-archives.js';
import { WorkflowListsService } from './workflow-lists.service.js';
import { Clock } from '../common/clock.js';

const ENTITIES = [
  WorkflowEntity,
  WorkflowVersionEntity,
  TestSuiteEntity,
  TestServiceEntity,
  TestInstanceEntity,
  VersionIssueEntity,
];

/**
 * The repository checks of every registration (API.md 12), in the order `GET /workflows/issues`
 * lists their types. A new check is a class marked @RegisterIssueCheck() and a line here (or in
 * any module's providers: docs/extending.md).
 */
const ISSUE_CHECK_CLASSES = [
  WorkflowTestingProfileCheck,
  MissingTestSuiteCheck,
  TestSuiteWithoutInstancesCheck,
  MissingTestDefinitionCheck,
  UncheckableTestInstanceCheck,
  MissingWorkflowFileCheck,
  MissingLicenseCheck,
  MissingReadmeCheck,
  InvalidConfigFileCheck,
  MissingFollowedBranchCheck,
];

/**
 * Area B's registry. Test monitoring uses what it exports (see index.ts): `WorkflowAccess`
 * (lookups by uuid with the visibility rule), the read port `RegisteredInstances`, and
 * `RegistryEvents`; notifications hands GitHub's ref events to `FollowedRepositoriesService`
 * (API.md 12), of repositories/, which this module uses and exports on. Its tables stay its own.
 */
@Module({
  imports: [DiscoveryModule, TypeOrmModule.forFeature(ENTITIES), CratesModule, RepositoriesModule],
  controllers: [
    UserWorkflowsController,
    WorkflowsController,
    SuitesController,
    InstancesController,
    GithubConfigController,
  ],
  providers: [
    CrateFetcher,
    // The janitor is crates/', but only the registry knows which archives its versions use.
    { provide: ARCHIVE_REFERENCES, useExisting: WorkflowsRepository },
    CrateJanitor,
    MainWorkflowBackfill,
    WorkflowsRepository,
    WorkflowAccess,
    BadgeTokens,
    VersionStatusReader,
    VersionArchives,
    RegistrationService,
    WorkflowListsService,
    WorkflowsService,
    InstancesRepository,
    InstancesService,
    Clock,
    RegisteredInstances,
    RegistryEvents,
    StoredTestStatuses,
    ServiceTypeSchema,
    ...ISSUE_CHECK_CLASSES,
    ISSUE_CHECKS_PROVIDER,
    RepositoryChecks,
    FollowingConnection,
    StoredTestStatuses,
  ],
  exports: [
    WorkflowAccess,
    RegisteredInstances,
    RegistryEvents,
    StoredTestStatuses,
    WorkflowsService,
    RepositoriesModule,
  ],
})
export class WorkflowsModule {}
