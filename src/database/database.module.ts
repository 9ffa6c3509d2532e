import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions, openDataSource } from './data-source.js';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({ ...dataSourceOptions(config), autoLoadEntities: true }),
      dataSourceFactory: async (options) => {
        if (!options) {
          throw new Error('no database options');
        }
        return openDataSource(options);
      },
    }),
  ],
})
export class DatabaseModule {}
