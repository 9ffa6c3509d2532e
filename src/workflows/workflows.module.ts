import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TestInstanceEntity } from './entities/test-instance.entity.js';
import { TestServiceEntity } from './entities/test-service.entity.js';
import { TestSuiteEntity } from './entities/test-suite.entity.js';
import { WorkflowVersionEntity } from './entities/workflow-version.entity.js';
import { WorkflowEntity } from './entities/workflow.entity.js';

const ENTITIES = [
  WorkflowEntity,
  WorkflowVersionEntity,
  TestSuiteEntity,
  TestServiceEntity,
  TestInstanceEntity,
];

@Module({
  imports: [TypeOrmModule.forFeature(ENTITIES)],
  exports: [TypeOrmModule],
})
export class WorkflowsModule {}
