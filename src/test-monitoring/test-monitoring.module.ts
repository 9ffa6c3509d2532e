import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WorkflowsModule } from '../workflows/workflows.module.js';
import { BuildEntity } from './entities/build.entity.js';

@Module({
  imports: [WorkflowsModule, TypeOrmModule.forFeature([BuildEntity])],
})
export class TestMonitoringModule {}
