import { Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { formPageHeaders } from '../common/same-origin-form.js';
import { AuthModule } from '../auth/auth.module.js';
import { Clock } from '../common/clock.js';
import { WorkflowsModule } from '../workflows/index.js';
import { IssueTypesPageController } from './issue-types-page.controller.js';
import { FaviconController, StatusPagesController } from './status-pages.controller.js';
import { StatusPagesService } from './status-pages.service.js';

/**
 * The HTML status pages (API.md 5.4) and the page of issue types (API.md 12), over the registry's
 * and test monitoring's reads (the latter's module is global); no tables of their own.
 */
@Module({
  imports: [WorkflowsModule, AuthModule],
  controllers: [StatusPagesController, FaviconController, IssueTypesPageController],
  providers: [StatusPagesService, Clock],
})
export class StatusPagesModule implements NestModule {
  /** Every page has a form (sign-in or sign-out in its header): see SameOriginForm. */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(formPageHeaders).forRoutes(StatusPagesController, IssueTypesPageController);
  }
}
