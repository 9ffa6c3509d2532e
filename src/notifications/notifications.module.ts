import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Clock } from '../common/clock.js';
import { WorkflowsModule } from '../workflows/index.js';
import { ChannelsController } from './channels.controller.js';
import { ChannelsService } from './channels.service.js';
import { DeliveriesRepository } from './deliveries.repository.js';
import { DeliveryWorker } from './delivery.worker.js';
import { ChannelEntity } from './entities/channel.entity.js';
import { DeliveryAttemptEntity } from './entities/delivery-attempt.entity.js';
import { DeliveryEntity } from './entities/delivery.entity.js';
import { GithubWorkflowInstanceEntity } from './entities/github-workflow-instance.entity.js';
import { GitlabProjectInstanceEntity } from './entities/gitlab-project-instance.entity.js';
import { NotificationEventEntity } from './entities/notification-event.entity.js';
import { NotificationEntity } from './entities/notification.entity.js';
import { SubscriptionEntity } from './entities/subscription.entity.js';
import { EventRaiser } from './event-raiser.js';
import { GithubWebhooksController } from './github-webhooks.controller.js';
import { GithubWebhooksService } from './github-webhooks.service.js';
import { GitlabTokenScheme, GitlabWebhooksController } from './gitlab-webhooks.controller.js';
import { GitlabWebhooksService } from './gitlab-webhooks.service.js';
import { NotificationsController } from './notifications.controller.js';
import { NotificationsRepository } from './notifications.repository.js';
import { NotificationsService } from './notifications.service.js';
import { CHANNEL_SENDERS, type ChannelSender } from './senders/channel-sender.js';
import { EmailSender } from './senders/email-sender.js';
import { SlackSender, WebhookSender } from './senders/http-sender.js';
import { SubscriptionsController } from './subscriptions.controller.js';
import { SubscriptionsService } from './subscriptions.service.js';
import { MailUnsubscribeService } from './mail-unsubscribe.service.js';
import { UnsubscribeLinks } from './unsubscribe-links.js';

const SENDERS = [WebhookSender, SlackSender, EmailSender];

/**
 * Telling people (API.md 6): subscriptions, events raised where test monitoring records check
 * results (its CheckResults port, from the global TestMonitoringModule), notifications, channels
 * and the outbox, and GitHub webhooks in (through monitoring's Rechecks). Other features' tables
 * are reached only through what they export.
 */
@Module({
  imports: [
    WorkflowsModule,
    TypeOrmModule.forFeature([
      SubscriptionEntity,
      NotificationEventEntity,
      NotificationEntity,
      ChannelEntity,
      DeliveryEntity,
      DeliveryAttemptEntity,
      GithubWorkflowInstanceEntity,
      GitlabProjectInstanceEntity,
    ]),
  ],
  controllers: [
    SubscriptionsController,
    NotificationsController,
    ChannelsController,
    GithubWebhooksController,
    GitlabWebhooksController,
  ],
  providers: [
    Clock,
    NotificationsRepository,
    DeliveriesRepository,
    SubscriptionsService,
    NotificationsService,
    ChannelsService,
    EventRaiser,
    UnsubscribeLinks,
    MailUnsubscribeService,
    ...SENDERS,
    { provide: CHANNEL_SENDERS, useFactory: (...senders: ChannelSender[]) => senders, inject: SENDERS },
    DeliveryWorker,
    GithubWebhooksService,
    GitlabWebhooksService,
    GitlabTokenScheme,
  ],
  exports: [MailUnsubscribeService],
})
export class NotificationsModule {}
