// First: sizes libuv's thread pool before any import can start it.
import './thread-pool.js';
import 'reflect-metadata';
import { Logger, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppLogger, createRootLogger } from './common/logging.js';
import { loadConfig, loadDotEnv } from './config/app-config.js';
import { ConfigError } from './config/config-error.js';
import { DatabaseUnreachableError } from './database/startup.js';
import { ExecutorRegistry, RunnerAppModule } from './managed-runs/runner/index.js';

/*
 * A runner process (API.md 17, `npm run runner`): claims queued managed runs from the database
 * and runs them on the executors of EXECUTORS_FILE; it serves no HTTP. Start as many as the
 * machines allow, beside one or more copies of the service, with the same settings (database,
 * DATA_DIR with the crate store on a shared volume).
 */
async function start(): Promise<void> {
  const envFile = loadDotEnv();
  const config = loadConfig();
  const app: INestApplicationContext = await NestFactory.createApplicationContext(
    RunnerAppModule.register(config),
    { logger: false, abortOnError: false, bufferLogs: true },
  );
  app.useLogger(new AppLogger(createRootLogger(config)));
  app.flushLogs();
  // Every executor made now: a bad RUNNER_USER or executor setting stops start-up, not the first run.
  const executors = app.get(ExecutorRegistry);
  for (const name of executors.names()) {
    executors.get(name);
  }
  await app.init();
  const logger = new Logger('Runner');
  logger.log(
    `runner started: executors ${executors.names().join(', ')}, ${config.managedRuns.concurrency} run(s) at a time; ` +
      `settings from ${envFile ?? 'the environment'}`,
  );

  // Stop claiming, hand the runs in flight back to the queue, close the database, then exit 0.
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) {
      return;
    }
    stopping = true;
    logger.log(`${signal} received, handing the runs in flight back and stopping`);
    setTimeout(() => process.exit(1), config.shutdownTimeoutMs).unref();
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

start().catch((error: unknown) => {
  const line =
    error instanceof ConfigError || error instanceof DatabaseUnreachableError
      ? error.message
      : `runner start-up failed: ${String(error)}`;
  process.stderr.write(`${line}\n`);
  process.exit(1);
});
