import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module.js';
import { AddressesRepository } from './addresses.repository.js';
import { KeyPairsController } from './key-pairs.controller.js';
import { KeyPairsService } from './key-pairs.service.js';
import { QuotasController } from './quotas.controller.js';
import { QuotasRepository } from './quotas.repository.js';
import { QuotasService } from './quotas.service.js';
import { StartsService } from './starts.service.js';
import { UsageController } from './usage.controller.js';
import { AppConfig } from '../config/app-config.js';
import { ASSIGNMENT_FACILITY, type AssignmentFacility } from './assignment/assignment-facility.js';
import { DatabaseAssignmentFacility } from './assignment/database-assignment.facility.js';
import { HttpAssignmentFacility } from './assignment/http-assignment.facility.js';
import { AuthTokenMiddleware } from './auth-token.middleware.js';
import { CLOUD_PROVIDER_FACTORIES_PROVIDER, CloudRegistry } from './cloud.registry.js';
import { DummyCloudRepository } from './dummy-cloud.repository.js';
import { DummyCloudEntity } from './entities/dummy-cloud.entity.js';
import { DummyKeyPairEntity } from './entities/dummy-key-pair.entity.js';
import { DummyNodeEntity } from './entities/dummy-node.entity.js';
import { UserQuotaEntity } from './entities/user-quota.entity.js';
import { VmAddressEntity } from './entities/vm-address.entity.js';
import { VmAssignmentEntity } from './entities/vm-assignment.entity.js';
import { VmLeaseEntity } from './entities/vm-lease.entity.js';
import { VmJobEntity } from './entities/vm-job.entity.js';
import { JobPoller } from './job.poller.js';
import { JobsRepository } from './jobs.repository.js';
import { JobsService } from './jobs.service.js';
import { LeaseScheduler } from './lease.scheduler.js';
import { LeasesRepository } from './leases.repository.js';
import { Clock } from '../common/clock.js';
import { JsonSuffixMiddleware } from './json-suffix.middleware.js';
import { PathSegmentMiddleware } from './path-segment.middleware.js';
import { OrchestrationController } from './orchestration.controller.js';
import { OrchestrationService } from './orchestration.service.js';
import { DUMMY_CLOUD_STORE, DummyProviderFactory } from './providers/dummy.provider.js';
import { OpenStackProviderFactory } from './providers/openstack.provider.js';
import { Ec2ProviderFactory } from './providers/ec2.provider.js';

@Module({
  imports: [
    DiscoveryModule,
    // UsersService: a quota is set for a user that exists.
    AuthModule,
    TypeOrmModule.forFeature([
      DummyCloudEntity,
      DummyNodeEntity,
      DummyKeyPairEntity,
      UserQuotaEntity,
      VmAddressEntity,
      VmAssignmentEntity,
      VmLeaseEntity,
      VmJobEntity,
    ]),
  ],
  providers: [
    DummyCloudRepository,
    { provide: DUMMY_CLOUD_STORE, useExisting: DummyCloudRepository },
    // Cloud providers: a class marked @RegisterCloudProvider() and one line here (docs/extending.md).
    DummyProviderFactory,
    OpenStackProviderFactory,
    Ec2ProviderFactory,
    CLOUD_PROVIDER_FACTORIES_PROVIDER,
    CloudRegistry,
    DatabaseAssignmentFacility,
    {
      // The external facility when ASSIGNMENT_FACILITY_URL is set, the built-in one otherwise.
      provide: ASSIGNMENT_FACILITY,
      useFactory: (
        config: AppConfig,
        database: DatabaseAssignmentFacility,
        clock: Clock,
      ): AssignmentFacility => {
        const url = config.orchestration.assignmentFacilityUrl;
        return url === undefined
          ? database
          : new HttpAssignmentFacility(url, {
              timeoutMs: config.orchestration.upstreamTimeoutMs,
              now: () => new Date(clock.nowMs()),
            });
      },
      inject: [AppConfig, DatabaseAssignmentFacility, Clock],
    },
    OrchestrationService,
    Clock,
    LeasesRepository,
    LeaseScheduler,
    JobsRepository,
    JobsService,
    JobPoller,
    StartsService,
    KeyPairsService,
    AddressesRepository,
    QuotasRepository,
    QuotasService,
  ],
  controllers: [OrchestrationController, KeyPairsController, UsageController, QuotasController],
})
export class OrchestrationModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // Area C's paths only (`/api/v1`, `/api/v1.json`, `/api/v1/…`): other requests skip the three.
    // Each middleware still decides by the path's area.
    consumer
      .apply(JsonSuffixMiddleware, PathSegmentMiddleware, AuthTokenMiddleware)
      .forRoutes({ path: 'api/v1{*path}', method: RequestMethod.ALL });
  }
}
