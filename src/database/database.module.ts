import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Clock } from '../common/clock.js';
import { createStartupLogger } from '../common/logging.js';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions, openDataSource } from './data-source.js';
import { openWithRetries, type StartingDataSourceOptions, type StartupAttempts } from './startup.js';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [AppConfig, Clock],
      extraProviders: [Clock],
      useFactory: (config: AppConfig, clock: Clock) => {
        // Made on the first failed attempt only: the app's own logger is not installed yet.
        let logger: { warn(line: string): void } | undefined;
        const startup: StartupAttempts = {
          timeoutMs: config.databaseStartupTimeoutMs,
          clock,
          warn: (line) => (logger ??= createStartupLogger(config, 'Database')).warn(line),
        };
        // Our own attempts (openWithRetries), not the module's: it retries 9 times, 3 s apart, silently.
        return { ...dataSourceOptions(config), startup, autoLoadEntities: true, toRetry: () => false };
      },
      dataSourceFactory: async (options) => {
        if (!options) {
          throw new Error('no database options');
        }
        const { startup, ...rest } = options as StartingDataSourceOptions;
        return startup ? openWithRetries(rest, openDataSource, startup) : openDataSource(rest);
      },
    }),
  ],
})
export class DatabaseModule {}
