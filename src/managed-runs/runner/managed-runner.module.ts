import { Module, type DynamicModule } from '@nestjs/common';
import { getRepositoryToken, TypeOrmModule } from '@nestjs/typeorm';
import { CratesModule } from '../../crates/index.js';
import { RunnerRunEntity } from '../entities/managed-run.entity.js';
import { ManagedRunnerEntity } from '../entities/managed-runner.entity.js';
import { RUN_ROWS } from '../managed-runs.repository.js';
import { SHARED } from '../shared-providers.js';
import { RunQueueRunner } from './run-queue.runner.js';

/**
 * A runner process's module (runner.ts): the queue worker and what it needs, the database and the
 * crate store only, managed_runs mapped without the registry's entities. Nothing here loads the
 * API's module (ManagedRunsModule), whose imports bring the registry's entities into the data
 * source as their files load.
 */
@Module({})
export class ManagedRunnerModule {
  static register(): DynamicModule {
    return {
      module: ManagedRunnerModule,
      imports: [CratesModule, TypeOrmModule.forFeature([RunnerRunEntity, ManagedRunnerEntity])],
      providers: [
        ...SHARED,
        { provide: RUN_ROWS, useExisting: getRepositoryToken(RunnerRunEntity) },
        RunQueueRunner,
      ],
      exports: [RunQueueRunner],
    };
  }
}
