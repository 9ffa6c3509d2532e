import { Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config.js';
import { ConfigModule } from '../../config/config.module.js';
import { DatabaseModule } from '../../database/database.module.js';
import { ManagedRunnerModule } from './managed-runner.module.js';

/** What a runner process (runner.ts) is made of: its settings, the database, the queue worker. No HTTP. */
@Module({})
export class RunnerAppModule {
  static register(config: AppConfig): DynamicModule {
    return {
      module: RunnerAppModule,
      imports: [ConfigModule.forRoot(config), DatabaseModule, ManagedRunnerModule.register()],
    };
  }
}
