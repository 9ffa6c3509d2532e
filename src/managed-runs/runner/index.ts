/**
 * What a runner process (src/runner.ts) takes from managed-runs/: its own entry beside index.ts,
 * so that a runner never loads the API's module and, with it, the registry (eslint.config.js
 * lets other code import this file too).
 */
export { RunnerAppModule } from './runner-app.module.js';
export { RunQueueRunner } from './run-queue.runner.js';
export { ExecutorRegistry } from '../executors/executor.registry.js';
