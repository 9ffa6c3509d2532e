import { Module, type DynamicModule } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { AdminBootstrap } from './auth/admin-bootstrap.js';
import { AuthModule } from './auth/auth.module.js';
import { IdentityModule } from './auth/identity/identity.module.js';
import { AuthorizationServerModule } from './authorization-server/index.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthModule } from './health/health.module.js';
import { ManagedRunsModule } from './managed-runs/index.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { NotificationsModule } from './notifications/index.js';
import { OrchestrationModule } from './orchestration/index.js';
import { RegistriesModule } from './registries/index.js';
import { StatusPagesModule } from './status-pages/status-pages.module.js';
import { TestMonitoringModule } from './test-monitoring/index.js';
import { TrsModule } from './trs/index.js';
import { WorkflowsModule } from './workflows/index.js';

@Module({})
export class AppModule {
  static register(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule,
        MetricsModule,
        ScheduleModule.forRoot(),
        HealthModule,
        AuthModule,
        IdentityModule,
        // Before WorkflowsModule: routes are tried in the order of the modules, and
        // GET /workflows/issues.html (a page) must come before GET /workflows/{wf_uuid}.
        StatusPagesModule,
        WorkflowsModule,
        RegistriesModule,
        AuthorizationServerModule,
        TestMonitoringModule,
        ManagedRunsModule.register(),
        OrchestrationModule,
        NotificationsModule,
        TrsModule,
      ],
      // Here, not in AuthModule: the CLI builds AuthModule and must not create an admin.
      providers: [AdminBootstrap],
    };
  }
}
