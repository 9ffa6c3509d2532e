import { Global, Module } from '@nestjs/common';
import { MetricsAccess } from './metrics-access.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsService } from './metrics.service.js';

/** Global: every feature module may inject MetricsService to count what it does. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [MetricsService, MetricsAccess],
  exports: [MetricsService],
})
export class MetricsModule {}
