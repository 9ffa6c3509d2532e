import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, In, LessThan, Repository, type EntityManager } from 'typeorm';
import { isUniqueViolation } from '../common/errors/unique-violation.js';
import { insertMissing } from '../database/dialect.js';
import { ChannelEntity } from './entities/channel.entity.js';
import { DeliveryEntity } from './entities/delivery.entity.js';
import { NotificationEventEntity } from './entities/notification-event.entity.js';
import { NotificationEntity } from './entities/notification.entity.js';
import { SubscriptionEntity } from './entities/subscription.entity.js';
import { wants, type EventName, type RaisedEvent } from './events.js';
import { toNotificationView, type NotificationData } from './notification-data.js';
import { visibleToSql } from '../workflows/index.js';

/** Notifications removed per statement by the retention sweep. */
const SWEEP_BATCH = 500;

/** An event to raise, with the workflow it belongs to and what its notifications say. */
export interface EventToRaise {
  instanceId: number;
  workflowId: number;
  buildId: string;
  event: RaisedEvent;
  data: NotificationData;
}

/** What raising wrote: the notifications, and the deliveries queued for them. */
export interface Raised {
  events: number;
  notifications: number;
  deliveries: number;
}

/**
 * Subscriptions, events and notifications, and the outbox rows written with them. Raising runs
 * inside the transaction of the check that recorded the builds (see EventRaiser).
 */
@Injectable()
export class NotificationsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(SubscriptionEntity) private readonly subscriptions: Repository<SubscriptionEntity>,
    @InjectRepository(NotificationEntity) private readonly notifications: Repository<NotificationEntity>,
  ) {}

  /**
   * Sets the user's events for a workflow, creating the subscription when there is none; true
   * when it was created. `onlyIfAbsent` leaves an existing subscription as it is.
   */
  async subscribe(
    subscription: { userId: number; workflowId: number; workflowUuid: string; events: EventName[] },
    at: Date,
    tx?: EntityManager,
    onlyIfAbsent = false,
  ): Promise<boolean> {
    const manager = tx ?? this.dataSource.manager;
    const key = { userId: subscription.userId, workflowId: subscription.workflowId };
    const existing = await manager.findOneBy(SubscriptionEntity, key);
    if (existing) {
      if (!onlyIfAbsent) {
        await manager.update(SubscriptionEntity, key, { events: subscription.events, modifiedAt: at });
      }
      return false;
    }
    // Two requests at once: one inserts, the other's insert is ignored and it updates instead.
    await insertMissing(manager, SubscriptionEntity, [{ ...subscription, createdAt: at, modifiedAt: at }]);
    return true;
  }

  findSubscription(userId: number, workflowId: number): Promise<SubscriptionEntity | null> {
    return this.subscriptions.findOneBy({ userId, workflowId });
  }

  async unsubscribe(userId: number, workflowId: number): Promise<boolean> {
    const result = await this.subscriptions.delete({ userId, workflowId });
    return (result.affected ?? 0) > 0;
  }

  /** Whether the user is subscribed to the workflow of this uuid (kept on the subscription). */
  async isSubscribed(userId: number, workflowUuid: string): Promise<boolean> {
    return (await this.subscriptions.countBy({ userId, workflowUuid })) > 0;
  }

  /** Ends the user's subscription to the workflow of this uuid; false when there was none. */
  async unsubscribeFrom(userId: number, workflowUuid: string): Promise<boolean> {
    const result = await this.subscriptions.delete({ userId, workflowUuid });
    return (result.affected ?? 0) > 0;
  }

  subscriptionsOf(userId: number): Promise<SubscriptionEntity[]> {
    return this.subscriptions.find({ where: { userId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /**
   * Raises events in `tx`: each one whose (instance, build, event) is new inserts its event row
   * and one notification per subscriber who wants it and may see the workflow, and queues a delivery per channel of that
   * subscriber that wants it. An event already raised is left out by one read of the batch's
   * events; one that another copy raises meanwhile hits the unique key and writes nothing more.
   */
  async raise(tx: EntityManager, allEvents: readonly EventToRaise[], at: Date): Promise<Raised> {
    const raised: Raised = { events: 0, notifications: 0, deliveries: 0 };
    const events = await this.notRaisedYet(tx, allEvents);
    if (events.length === 0) {
      return raised;
    }
    const workflowIds = [...new Set(events.map((event) => event.workflowId))];
    // Only subscribers who still see the workflow (it may have turned private since they subscribed).
    const subscribers = await tx
      .createQueryBuilder(SubscriptionEntity, 's')
      .innerJoin('s.workflow', 'w')
      .innerJoin('s.user', 'u')
      .where('s.workflowId IN (:...workflowIds)', { workflowIds })
      .andWhere(visibleToSql('w', 'u'))
      .getMany();
    const userIds = [...new Set(subscribers.map((subscription) => subscription.userId))];
    const channels =
      userIds.length === 0
        ? []
        : await tx.find(ChannelEntity, { where: { userId: In(userIds) }, order: { id: 'ASC' } });
    for (const event of events) {
      const eventId = await this.insertEvent(tx, event, at);
      if (eventId === undefined) {
        continue;
      }
      raised.events++;
      const recipients = subscribers.filter(
        (subscription) =>
          subscription.workflowId === event.workflowId && wants(subscription.events, event.event),
      );
      for (const recipient of recipients) {
        const userChannels = channels.filter((channel) => channel.userId === recipient.userId);
        raised.deliveries += await this.notify(tx, recipient.userId, eventId, event, userChannels, at);
        raised.notifications++;
      }
    }
    return raised;
  }

  /**
   * Tells one user of an event that concerns them whatever their subscriptions (FOLLOW_FAILED
   * goes to the workflow's owner), in `tx`: one notification, and a delivery per channel of theirs
   * that wants the event. The caller raises each event once (its own unique key decides).
   */
  async notifyUser(
    tx: EntityManager,
    userId: number,
    event: Pick<EventToRaise, 'event' | 'data'>,
    at: Date,
  ): Promise<Raised> {
    const channels = await tx.find(ChannelEntity, { where: { userId }, order: { id: 'ASC' } });
    const deliveries = await this.notify(tx, userId, null, event, channels, at);
    return { events: 1, notifications: 1, deliveries };
  }

  /** One notification and its outbox rows (the user's channels that want the event); how many deliveries. */
  private async notify(
    tx: EntityManager,
    userId: number,
    eventId: number | null,
    event: Pick<EventToRaise, 'event' | 'data'>,
    channels: readonly ChannelEntity[],
    at: Date,
  ): Promise<number> {
    const notification = tx.create(NotificationEntity, {
      uuid: randomUUID(),
      userId,
      eventId,
      event: event.event,
      data: JSON.stringify(event.data),
      createdAt: at,
      readAt: null,
      emailedAt: null,
    });
    const inserted = await tx.insert(NotificationEntity, notification);
    const notificationId = Number(inserted.identifiers[0]?.id);
    // What every attempt of its deliveries sends: the notification as it is now.
    const payload = JSON.stringify(toNotificationView(notification));
    const outbox = channels
      .filter((channel) => wants(channel.events, event.event))
      .map((channel) => ({
        uuid: randomUUID(),
        channelId: channel.id,
        notificationId,
        payload,
        state: 'pending' as const,
        attempts: 0,
        nextAttemptAt: at,
        createdAt: at,
      }));
    if (outbox.length > 0) {
      await tx.insert(DeliveryEntity, outbox);
    }
    return outbox.length;
  }

  /** The user's notifications, newest first. */
  notificationsOf(userId: number): Promise<NotificationEntity[]> {
    return this.notifications.find({ where: { userId }, order: { createdAt: 'DESC', id: 'DESC' } });
  }

  /** Sets or clears `read_at` of the user's notifications by uuid; others' uuids change nothing. */
  async markRead(userId: number, uuids: readonly string[], readAt: Date | null): Promise<void> {
    if (uuids.length === 0) {
      return;
    }
    await this.notifications.update({ userId, uuid: In([...uuids]) }, { readAt });
  }

  /** Deletes the user's notifications by uuid; returns how many were deleted. */
  async deleteNotifications(userId: number, uuids: readonly string[]): Promise<number> {
    if (uuids.length === 0) {
      return 0;
    }
    const result = await this.notifications.delete({ userId, uuid: In([...uuids]) });
    return result.affected ?? 0;
  }

  /** Removes notifications created before `before`, a batch at a time; returns how many. */
  async removeCreatedBefore(before: Date): Promise<number> {
    let removed = 0;
    for (;;) {
      const batch = await this.notifications.find({
        select: { id: true },
        where: { createdAt: LessThan(before) },
        order: { createdAt: 'ASC' },
        take: SWEEP_BATCH,
      });
      if (batch.length === 0) {
        return removed;
      }
      await this.notifications.delete({ id: In(batch.map((row) => row.id)) });
      removed += batch.length;
    }
  }

  /**
   * The events not raised before, in one read on the unique key. TESTS_STOPPED stays due at every
   * check of an instance whose builds are too old (or whose workflow is disabled), so without
   * this each such check tried its insert again and failed on the key: one statement per stale
   * instance per refresh interval, for ever (`npm run bench -- monitoring-copies`).
   */
  private async notRaisedYet(tx: EntityManager, events: readonly EventToRaise[]): Promise<EventToRaise[]> {
    if (events.length === 0) {
      return [];
    }
    const key = (instanceId: number, buildId: string, event: string) => `${instanceId} ${event} ${buildId}`;
    // One equality on the whole key per event: exactly one index range each. `instanceId IN (…)
    // AND buildId IN (…)` made MariaDB walk every pair of the two lists.
    const parameters: Record<string, unknown> = {};
    const matches = events.map((event, i) => {
      Object.assign(parameters, {
        [`i${i}`]: event.instanceId,
        [`b${i}`]: storedBuildId(event),
        [`e${i}`]: event.event,
      });
      return `(e.instanceId = :i${i} AND e.buildId = :b${i} AND e.event = :e${i})`;
    });
    const raised = await tx
      .createQueryBuilder(NotificationEventEntity, 'e')
      .select(['e.id', 'e.instanceId', 'e.buildId', 'e.event'])
      .where(matches.join(' OR '), parameters)
      .getMany();
    const known = new Set(raised.map((row) => key(row.instanceId, row.buildId, row.event)));
    return events.filter((event) => !known.has(key(event.instanceId, storedBuildId(event), event.event)));
  }

  /** The event's id when this call inserted it; undefined when it had been raised already. */
  private async insertEvent(tx: EntityManager, event: EventToRaise, at: Date): Promise<number | undefined> {
    try {
      // A unique violation fails this statement only, on SQLite and InnoDB: the transaction goes on.
      const inserted = await tx.insert(NotificationEventEntity, {
        instanceId: event.instanceId,
        buildId: storedBuildId(event),
        event: event.event,
        raisedAt: at,
      });
      return Number(inserted.identifiers[0]?.id);
    } catch (error) {
      if (isUniqueViolation(error)) {
        return undefined;
      }
      throw error;
    }
  }
}

/** The build id as the event row keeps it (its column holds 64 characters). */
function storedBuildId(event: EventToRaise): string {
  return event.buildId.slice(0, 64);
}
