import { Module, type DynamicModule } from '@nestjs/common';
import { getRepositoryToken, TypeOrmModule } from '@nestjs/typeorm';
import { CratesModule } from '../crates/index.js';
import { RegistryEvents, WorkflowsModule } from '../workflows/index.js';
import { ManagedRunEntity } from './entities/managed-run.entity.js';
import { ManagedRunnerEntity } from './entities/managed-runner.entity.js';
import { ExecutorRegistry } from './executors/executor.registry.js';
import { ExecutorsController } from './executors.controller.js';
import { ExecutorsService } from './executors.service.js';
import { ManagedRunWatcher } from './managed-run.watcher.js';
import { RUN_ROWS } from './managed-runs.repository.js';
import { SHARED } from './shared-providers.js';
import { ManagedTestingService } from './managed-testing.service.js';
import { RunLogs } from './run-logs.js';

/**
 * Managed test instances (API.md 17) in the API's copies: the `managed` testing service (it
 * queues runs and reads them as builds), GET /executors, and the watcher that checks an instance
 * as soon as its run changes. Runner processes (runner.ts) claim and run the queue with
 * ManagedRunnerModule (runner/); the API never runs workflow code.
 *
 * Both modules are made by `register()`: TypeOrmModule.forFeature adds its entities to the
 * data source when it is called, and each process must map managed_runs its own way (see
 * RunnerRunEntity).
 */
@Module({})
export class ManagedRunsModule {
  static register(): DynamicModule {
    return {
      module: ManagedRunsModule,
      imports: [
        CratesModule,
        WorkflowsModule,
        TypeOrmModule.forFeature([ManagedRunEntity, ManagedRunnerEntity]),
      ],
      providers: [
        ...SHARED,
        { provide: RUN_ROWS, useExisting: getRepositoryToken(ManagedRunEntity) },
        ManagedTestingService,
        ManagedRunWatcher,
        ExecutorsService,
      ],
      controllers: [ExecutorsController],
      exports: [ExecutorRegistry],
    };
  }

  constructor(events: RegistryEvents, logs: RunLogs) {
    // A deleted instance's runs go with it by cascade; their logs go here.
    events.onInstanceDeleted((_tx, instance) => logs.removeInstance(instance.instanceId));
  }
}
