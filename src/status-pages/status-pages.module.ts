import { Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { formPageHeaders } from '../common/same-origin-form.js';
import { AuthModule } from '../auth/auth.module.js';
import { IdentityModule } from '../auth/identity/identity.module.js';
import { AuthorizationServerModule } from '../authorization-server/index.js';
import { Clock } from '../common/clock.js';
import { NotificationsModule } from '../notifications/index.js';
import { WorkflowsModule } from '../workflows/index.js';
import { AccountPageController } from './account-page.controller.js';
import { AccountPageService } from './account-page.service.js';
import { AuthorizePageController } from './authorize-page.controller.js';
import { IssueTypesPageController } from './issue-types-page.controller.js';
import { FaviconController, StatusPagesController } from './status-pages.controller.js';
import { StatusPagesService } from './status-pages.service.js';
import { UnsubscribePageController } from './unsubscribe-page.controller.js';

/**
 * The HTML status pages (API.md 5.4), the page of issue types (API.md 12), the page of a mail's
 * unsubscribe link (API.md 6.4), the account page and the consent page (API.md 15), over the
 * registry's, test monitoring's (its module is global), notifications' and the authorization
 * server's reads; no tables of their own.
 */
@Module({
  imports: [WorkflowsModule, AuthModule, IdentityModule, NotificationsModule, AuthorizationServerModule],
  controllers: [
    // Before StatusPagesController, whose /status/{uuid} would take /status/account.
    AccountPageController,
    StatusPagesController,
    FaviconController,
    IssueTypesPageController,
    UnsubscribePageController,
    AuthorizePageController,
  ],
  providers: [StatusPagesService, AccountPageService, Clock],
})
export class StatusPagesModule implements NestModule {
  /** Every page has a form (sign-in or sign-out in its header): see SameOriginForm. */
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(formPageHeaders)
      .forRoutes(
        StatusPagesController,
        IssueTypesPageController,
        AccountPageController,
        AuthorizePageController,
      );
  }
}
