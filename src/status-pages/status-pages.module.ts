import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { Clock } from '../common/clock.js';
import { WorkflowsModule } from '../workflows/index.js';
import { StatusPagesController } from './status-pages.controller.js';
import { StatusPagesService } from './status-pages.service.js';

/**
 * The HTML status pages (API.md 5.4), over the registry's and test monitoring's reads (the
 * latter's module is global); no tables of their own.
 */
@Module({
  imports: [WorkflowsModule, AuthModule],
  controllers: [StatusPagesController],
  providers: [StatusPagesService, Clock],
})
export class StatusPagesModule {}
