import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { AuthUser } from '../auth/auth-user.js';
import { Clock } from '../common/clock.js';
import { StatusSubscriptions, type WorkflowSubscription } from '../test-monitoring/index.js';
import { RegistryEvents, WorkflowAccess } from '../workflows/index.js';
import { toSubscriptionResponse } from './dto/subscription.dto.js';
import type { SubscriptionEntity } from './entities/subscription.entity.js';
import type { EventName } from './events.js';
import { NotificationsRepository } from './notifications.repository.js';

/**
 * Subscriptions (API.md 6.1): to any workflow the caller can see; the submitter of a new workflow
 * is subscribed to ALL in the registration's transaction (RegistryEvents).
 */
@Injectable()
export class SubscriptionsService implements OnModuleInit {
  constructor(
    private readonly repo: NotificationsRepository,
    private readonly access: WorkflowAccess,
    private readonly registry: RegistryEvents,
    private readonly clock: Clock,
    private readonly statusSubscriptions: StatusSubscriptions,
  ) {}

  onModuleInit(): void {
    this.statusSubscriptions.readWith((user, workflowId) => this.ofWorkflow(user, workflowId));
    this.registry.onVersionAdded(async (tx, added, at) => {
      if (added.newWorkflow) {
        await this.repo.subscribe(
          {
            userId: added.submitterId,
            workflowId: added.workflowId,
            workflowUuid: added.workflowUuid,
            events: ['ALL'],
          },
          at,
          tx,
          true,
        );
      }
    });
  }

  /** Sets the caller's events for the workflow; `created` tells whether the subscription is new. */
  async subscribe(
    user: AuthUser,
    workflowUuid: string,
    events: EventName[],
  ): Promise<{ created: boolean; subscription: SubscriptionEntity }> {
    const workflow = await this.access.visibleWorkflow(workflowUuid, user);
    const key = { userId: user.id, workflowId: workflow.id };
    const created = await this.repo.subscribe(
      { ...key, workflowUuid: workflow.uuid, events },
      new Date(this.clock.nowMs()),
    );
    const subscription = await this.repo.findSubscription(key.userId, key.workflowId);
    if (!subscription) {
      // Only an unsubscribe racing this request gets here; subscribing again is the caller's call.
      return this.subscribe(user, workflowUuid, events);
    }
    return { created, subscription };
  }

  async unsubscribe(user: AuthUser, workflowUuid: string): Promise<void> {
    const workflow = await this.access.visibleWorkflow(workflowUuid, user);
    await this.repo.unsubscribe(user.id, workflow.id);
  }

  list(user: AuthUser): Promise<SubscriptionEntity[]> {
    return this.repo.subscriptionsOf(user.id);
  }

  /**
   * The user's subscriptions to a workflow they may see, as the workflow status reply carries them
   * (API.md 10): one read by the (user, workflow) unique key.
   */
  async ofWorkflow(user: AuthUser, workflowId: number): Promise<WorkflowSubscription[]> {
    const row = await this.repo.findSubscription(user.id, workflowId);
    return row ? [toSubscriptionResponse(row, user)] : [];
  }
}
