/**
 * What managed-runs/ offers the other features; the lint rule in eslint.config.js lets them import
 * from `managed-runs/` only through this file.
 */
export { ManagedRunsModule } from './managed-runs.module.js';
export { ExecutorRegistry } from './executors/executor.registry.js';
export {
  ENGINES,
  EXECUTOR_FACTORIES,
  isEngineName,
  runLimitsOf,
  type EngineAvailability,
  type EngineName,
  type Executor,
  type ExecutorFactory,
  type RunLimits,
  type RunOutcome,
  type RunSpec,
  type RunState,
} from './executors/executor.js';
