import type { Provider } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { EXECUTOR_FACTORIES, type ExecutorFactory } from './executors/executor.js';
import { ExecutorRegistry } from './executors/executor.registry.js';
import { LocalExecutorFactory } from './executors/local.executor.js';
import { WesExecutorFactory } from './executors/wes.executor.js';
import { ManagedRunsRepository } from './managed-runs.repository.js';
import { RunLogs } from './run-logs.js';

/** Executor types: a class implementing ExecutorFactory and one line here (STYLE.md 6). */
const EXECUTOR_TYPES = [LocalExecutorFactory, WesExecutorFactory];

/** What the API's copies and the runners share: the executors of EXECUTORS_FILE, the queue, the logs. */
export const SHARED: Provider[] = [
  ...EXECUTOR_TYPES,
  {
    provide: EXECUTOR_FACTORIES,
    useFactory: (...factories: ExecutorFactory[]) => factories,
    inject: EXECUTOR_TYPES,
  },
  ExecutorRegistry,
  ManagedRunsRepository,
  RunLogs,
  Clock,
];
