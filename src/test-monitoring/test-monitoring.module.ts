import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TESTING_SERVICE_CATALOG } from '../crates/index.js';
import { WORKFLOW_STATUS_SOURCE, WorkflowsModule } from '../workflows/index.js';
import { BadgesController } from './badges.controller.js';
import { BuildsRepository } from './builds.repository.js';
import { CheckResults } from './check-results.js';
import { Rechecks } from './rechecks.js';
import { CheckStateRepository } from './check-state.repository.js';
import { BuildEntity } from './entities/build.entity.js';
import { CheckStateEntity } from './entities/check-state.entity.js';
import { ServicePauseEntity } from './entities/service-pause.entity.js';
import { AppConfig } from '../config/app-config.js';
import { InstanceChecker } from './instance-checker.js';
import { FailureClassifier } from './failures/failure-classifier.js';
import { RefreshMetrics } from './refresh-metrics.js';
import { RefreshScheduler } from './refresh.scheduler.js';
import { RefreshService } from './refresh.service.js';
import { TestStatusController } from './test-status.controller.js';
import { TestRunsController } from './test-runs.controller.js';
import { TestRunsService } from './test-runs.service.js';
import { BuildChangesService } from './build-changes.service.js';
import { BuildTriggers } from './build-triggers.js';
import { PeriodicReruns } from './periodic-reruns.js';
import { TestStatusService } from './test-status.service.js';
import { VersionStatuses } from './version-statuses.js';
import { StatusSubscriptions } from './status-subscriptions.js';
import { GithubActionsService } from './testing-services/github-actions.service.js';
import { GitlabService } from './testing-services/gitlab.service.js';
import { JenkinsService } from './testing-services/jenkins.service.js';
import { TESTING_SERVICES_PROVIDER, TestingServiceRegistry } from './testing-services/testing-service.js';
import { TravisService } from './testing-services/travis.service.js';
import { Clock } from '../common/clock.js';

/**
 * Global so that the registry can inject WORKFLOW_STATUS_SOURCE without importing this module
 * (which imports the registry): the dependency runs one way, the status flows back by token.
 */
@Global()
@Module({
  imports: [
    DiscoveryModule,
    WorkflowsModule,
    TypeOrmModule.forFeature([BuildEntity, CheckStateEntity, ServicePauseEntity]),
  ],
  providers: [
    // CI services: a class marked @RegisterTestingService() and one line here (docs/extending.md).
    GithubActionsService,
    TravisService,
    JenkinsService,
    GitlabService,
    TESTING_SERVICES_PROVIDER,
    TestingServiceRegistry,
    // The registry injects this token (optionally) to know the services a crate may name.
    { provide: TESTING_SERVICE_CATALOG, useExisting: TestingServiceRegistry },
    RefreshMetrics,
    CheckResults,
    Rechecks,
    BuildsRepository,
    VersionStatuses,
    CheckStateRepository,
    {
      provide: FailureClassifier,
      useFactory: (config: AppConfig) => new FailureClassifier(config.monitoring.failurePatterns),
      inject: [AppConfig],
    },
    InstanceChecker,
    RefreshService,
    RefreshScheduler,
    TestStatusService,
    StatusSubscriptions,
    BuildTriggers,
    PeriodicReruns,
    TestRunsService,
    BuildChangesService,
    Clock,
    // The registry injects this token (optionally) to fill the status of its workflow list.
    { provide: WORKFLOW_STATUS_SOURCE, useExisting: TestStatusService },
  ],
  controllers: [TestStatusController, TestRunsController, BadgesController],
  exports: [
    BuildChangesService,
    RefreshMetrics,
    TestingServiceRegistry,
    TestRunsService,
    WORKFLOW_STATUS_SOURCE,
    TESTING_SERVICE_CATALOG,
    CheckResults,
    Rechecks,
    TestStatusService,
    StatusSubscriptions,
  ],
})
export class TestMonitoringModule {}
