import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CratesModule } from '../crates/index.js';
import { ManagedRunEntity } from './entities/managed-run.entity.js';
import { ManagedRunnerEntity } from './entities/managed-runner.entity.js';
import { EXECUTOR_FACTORIES, type ExecutorFactory } from './executors/executor.js';
import { ExecutorRegistry } from './executors/executor.registry.js';
import { LocalExecutorFactory } from './executors/local.executor.js';
import { WesExecutorFactory } from './executors/wes.executor.js';

/** Executor types: a class implementing ExecutorFactory and one line here (STYLE.md 6). */
const EXECUTOR_TYPES = [LocalExecutorFactory, WesExecutorFactory];

/**
 * Managed test instances (API.md 17): the runs queue, the executors of EXECUTORS_FILE. The API
 * process queues and reads runs; runner processes (runner.ts) claim and run them.
 */
@Module({
  imports: [CratesModule, TypeOrmModule.forFeature([ManagedRunEntity, ManagedRunnerEntity])],
  providers: [
    ...EXECUTOR_TYPES,
    {
      provide: EXECUTOR_FACTORIES,
      useFactory: (...factories: ExecutorFactory[]) => factories,
      inject: EXECUTOR_TYPES,
    },
    ExecutorRegistry,
  ],
  exports: [ExecutorRegistry],
})
export class ManagedRunsModule {}
