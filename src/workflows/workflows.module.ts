import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BadgeTokens } from './badge-tokens.js';
import { CrateJanitor } from './crate-janitor.js';
import { ArchiveLock } from './crate/archive-lock.js';
import { CrateDownloader } from './crate/crate-downloader.js';
import { CrateFetcher } from './crate/crate-fetcher.js';
import { GithubRepositories } from './crate/github-repository.js';
import { CrateReader } from './crate/crate-reader.js';
import { CrateStore } from './crate/crate-store.js';
import { TestInstanceEntity } from './entities/test-instance.entity.js';
import { TestServiceEntity } from './entities/test-service.entity.js';
import { TestSuiteEntity } from './entities/test-suite.entity.js';
import { WorkflowVersionEntity } from './entities/workflow-version.entity.js';
import { WorkflowEntity } from './entities/workflow.entity.js';
import { ServiceTypeSchema } from './dto/service-type.schema.js';
import { InstancesController } from './instances.controller.js';
import { InstancesService } from './instances.service.js';
import { RegisteredInstances } from './registered-instances.js';
import { RegistryEvents } from './registry-events.js';
import { SuitesController } from './suites.controller.js';
import { UserWorkflowsController } from './user-workflows.controller.js';
import { VersionStatusReader } from './version-status.reader.js';
import { WorkflowAccess } from './workflow-access.service.js';
import { WorkflowsController } from './workflows.controller.js';
import { WorkflowsRepository } from './workflows.repository.js';
import { WorkflowsService } from './workflows.service.js';
import { Clock } from '../common/clock.js';

const ENTITIES = [
  WorkflowEntity,
  WorkflowVersionEntity,
  TestSuiteEntity,
  TestServiceEntity,
  TestInstanceEntity,
];

/**
 * Area B's registry. Test monitoring uses what it exports (see index.ts): `WorkflowAccess`
 * (lookups by uuid with the visibility rule), the read port `RegisteredInstances`, and
 * `RegistryEvents`; its tables stay its own.
 */
@Module({
  imports: [TypeOrmModule.forFeature(ENTITIES)],
  controllers: [UserWorkflowsController, WorkflowsController, SuitesController, InstancesController],
  providers: [
    CrateDownloader,
    CrateFetcher,
    GithubRepositories,
    CrateReader,
    CrateStore,
    ArchiveLock,
    CrateJanitor,
    WorkflowsRepository,
    WorkflowAccess,
    BadgeTokens,
    VersionStatusReader,
    WorkflowsService,
    InstancesService,
    Clock,
    RegisteredInstances,
    RegistryEvents,
    ServiceTypeSchema,
  ],
  exports: [WorkflowAccess, RegisteredInstances, RegistryEvents, WorkflowsService],
})
export class WorkflowsModule {}
