// First: sizes libuv's thread pool before any import can start it.
import './thread-pool.js';
// Then: V8's pretenuring off, before the code it would track is compiled.
import './v8-flags.js';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { configureApp } from './bootstrap.js';
import { ConfigError } from './config/config-error.js';
import { loadConfig, loadDotEnv, type AppConfig } from './config/app-config.js';
import { DatabaseUnreachableError } from './database/startup.js';
import { ExpressHttpAdapter } from './http-adapter.js';

async function bootstrap(): Promise<void> {
  const envFile = loadDotEnv();
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  // No logger until configureApp installs ours, and its start-up lines held back until the app
  // listens: a module that refuses its settings while the app is built or initialised (a bad
  // cloud in CLOUDS_FILE) then stops start-up with one line, not a stack or half a route table.
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.register(config),
    new ExpressHttpAdapter({ drainOnClose: true }),
    {
      bodyParser: false,
      rawBody: true,
      logger: false,
      abortOnError: false,
      bufferLogs: true,
      autoFlushLogs: false,
    },
  );
  configureApp(app, config);
  await app.listen(config.port).catch((error: unknown) => {
    throw listenError(error, config.port);
  });
  app.flushLogs();
  const logger = new Logger('Main');
  logger.log(
    `listening on port ${config.port}; Swagger UI at /docs; settings from ${envFile ?? 'the environment'}`,
  );

  // Stop accepting, let requests (those whose client left too) and scheduler checks in flight
  // finish, close the database, then exit 0; a shutdown that hangs is cut at SHUTDOWN_TIMEOUT_SECONDS.
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) {
      return;
    }
    stopping = true;
    logger.log(`${signal} received, shutting down`);
    setTimeout(() => process.exit(1), config.shutdownTimeoutMs).unref();
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

/** A port the service cannot listen on is a bad PORT: one line naming it, as for any bad setting. */
function listenError(error: unknown, port: number): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') {
    return new ConfigError('PORT', `${port} is in use by another process; stop it or choose another PORT`);
  }
  if (code === 'EACCES') {
    return new ConfigError(
      'PORT',
      `${port} needs privileges this process does not have; choose a PORT above 1023`,
    );
  }
  return error;
}

bootstrap().catch((error: unknown) => {
  const line =
    error instanceof ConfigError || error instanceof DatabaseUnreachableError
      ? error.message
      : `start-up failed: ${String(error)}`;
  process.stderr.write(`${line}\n`);
  process.exit(1);
});
