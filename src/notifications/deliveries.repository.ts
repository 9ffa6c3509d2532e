import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { claimDueRows } from '../database/claim-due-rows.js';
import { rawDate } from '../database/raw-date.js';
import { ChannelEntity, type ChannelType } from './entities/channel.entity.js';
import { DeliveryAttemptEntity } from './entities/delivery-attempt.entity.js';
import { DeliveryEntity } from './entities/delivery.entity.js';
import { NotificationEntity } from './entities/notification.entity.js';
import type { EventName } from './events.js';

/** Attempts a channel's delivery log keeps (API.md 6.4: the last 100). */
export const ATTEMPTS_KEPT = 100;
const MAX_ERROR_LENGTH = 512;

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery {
  delivery: DeliveryEntity;
  token: string;
  channel: ChannelEntity;
  /** Read only for a delivery queued without its payload (before deliveries kept one); may be gone. */
  notification?: NotificationEntity;
}

/** What one attempt ended with; `next` is the next attempt's time, absent when there is none. */
export interface AttemptResult {
  at: Date;
  sent: boolean;
  statusCode?: number;
  error?: string;
  next?: Date;
}

/** Channels, and the outbox of deliveries with its attempt log. */
@Injectable()
export class DeliveriesRepository {
  private claims = 0;

  constructor(
    @InjectRepository(ChannelEntity) private readonly channels: Repository<ChannelEntity>,
    @InjectRepository(DeliveryEntity) private readonly deliveries: Repository<DeliveryEntity>,
    @InjectRepository(DeliveryAttemptEntity) private readonly attempts: Repository<DeliveryAttemptEntity>,
    @InjectRepository(NotificationEntity) private readonly notifications: Repository<NotificationEntity>,
  ) {}

  async createChannel(channel: {
    userId: number;
    type: ChannelType;
    target: string;
    events: EventName[];
    secret: string | null;
    createdAt: Date;
  }): Promise<ChannelEntity> {
    const row = this.channels.create(channel);
    const inserted = await this.channels.insert(row);
    row.id = Number(inserted.identifiers[0]?.id);
    return row;
  }

  channelsOf(userId: number): Promise<ChannelEntity[]> {
    return this.channels.find({ where: { userId }, order: { id: 'ASC' } });
  }

  findChannel(userId: number, id: number): Promise<ChannelEntity | null> {
    return this.channels.findOneBy({ userId, id });
  }

  /** Sets the events of the user's channel; false when it is gone. */
  async setChannelEvents(userId: number, id: number, events: EventName[]): Promise<boolean> {
    const result = await this.channels.update({ userId, id }, { events });
    return (result.affected ?? 0) > 0;
  }

  async deleteChannel(userId: number, id: number): Promise<boolean> {
    const result = await this.channels.delete({ userId, id });
    return (result.affected ?? 0) > 0;
  }

  /** The channel's last ATTEMPTS_KEPT attempts, newest first, with their delivery's uuid. */
  async attemptsOf(channelId: number): Promise<(DeliveryAttemptEntity & { deliveryUuid: string })[]> {
    const rows = await this.attempts.find({
      where: { channelId },
      order: { id: 'DESC' },
      take: ATTEMPTS_KEPT,
    });
    const ids = [...new Set(rows.map((row) => row.deliveryId))];
    const uuids = new Map(
      ids.length === 0
        ? []
        : (await this.deliveries.find({ select: { id: true, uuid: true }, where: { id: In(ids) } })).map(
            (row) => [row.id, row.uuid],
          ),
    );
    return rows.map((row) => Object.assign(row, { deliveryUuid: uuids.get(row.deliveryId) ?? '' }));
  }

  /**
   * Claims up to `batch` deliveries due at `now` for `claimMs` (a database lease: of several
   * copies exactly one gets each), with their channel. Deliveries whose channel went away
   * meanwhile went with it (foreign key); a deleted notification leaves its deliveries, which
   * carry what they send.
   */
  async claimDue(now: Date, owner: string, batch: number, claimMs: number): Promise<ClaimedDelivery[]> {
    const token = `${owner}#${++this.claims}`.slice(-64);
    const claimed = await claimDueRows(this.deliveries, {
      dueColumn: 'next_attempt_at',
      now,
      token,
      batch,
      claimMs,
    });
    if (claimed.length === 0) {
      return [];
    }
    const channels = new Map(
      (await this.channels.findBy({ id: In([...new Set(claimed.map((row) => row.channelId))]) })).map(
        (row) => [row.id, row],
      ),
    );
    const legacy = [
      ...new Set(
        claimed.flatMap((row) =>
          row.payload === null && row.notificationId !== null ? [row.notificationId] : [],
        ),
      ),
    ];
    const notifications = new Map(
      legacy.length === 0
        ? []
        : (await this.notifications.findBy({ id: In(legacy) })).map((row) => [row.id, row]),
    );
    return claimed.flatMap((delivery) => {
      const channel = channels.get(delivery.channelId);
      const notification =
        delivery.notificationId === null ? undefined : notifications.get(delivery.notificationId);
      return channel ? [{ delivery, token, channel, notification }] : [];
    });
  }

  /**
   * Writes an attempt's outcome and gives the claim up, conditional on still holding it (a copy
   * whose claim ran out writes nothing: the copy that took the delivery over decides). Logs the
   * attempt and trims the channel's log. False when the claim was lost.
   */
  async finishAttempt(claimed: ClaimedDelivery, result: AttemptResult): Promise<boolean> {
    const { delivery, token } = claimed;
    const error = result.error?.slice(0, MAX_ERROR_LENGTH) ?? null;
    const state = result.sent ? 'sent' : result.next ? 'pending' : 'failed';
    return this.deliveries.manager.transaction(async (tx) => {
      const updated = await tx.update(
        DeliveryEntity,
        { id: delivery.id, claimOwner: token },
        {
          state,
          attempts: delivery.attempts + 1,
          nextAttemptAt: result.sent ? null : (result.next ?? null),
          finishedAt: state === 'pending' ? null : result.at,
          lastError: result.sent ? null : error,
          claimOwner: null,
          claimUntil: null,
        },
      );
      if ((updated.affected ?? 0) === 0) {
        return false;
      }
      await tx.insert(DeliveryAttemptEntity, {
        channelId: delivery.channelId,
        deliveryId: delivery.id,
        attemptedAt: result.at,
        outcome: state === 'pending' ? 'error' : state,
        statusCode: result.statusCode ?? null,
        error: result.sent ? null : error,
      });
      if (result.sent && claimed.channel.type === 'email' && delivery.notificationId !== null) {
        await tx.update(NotificationEntity, { id: delivery.notificationId }, { emailedAt: result.at });
      }
      const cut = await tx.find(DeliveryAttemptEntity, {
        select: { id: true },
        where: { channelId: delivery.channelId },
        order: { id: 'DESC' },
        skip: ATTEMPTS_KEPT,
        take: 1,
      });
      if (cut.length > 0) {
        await tx
          .createQueryBuilder()
          .delete()
          .from(DeliveryAttemptEntity)
          .where('channel_id = :channelId', { channelId: delivery.channelId })
          .andWhere('id <= :id', { id: cut[0].id })
          .execute();
      }
      return true;
    });
  }

  /**
   * Removes finished deliveries whose notification is gone and of which the channel's log keeps no
   * attempt any more (it keeps the last ATTEMPTS_KEPT): nothing shows them. Returns how many.
   */
  async removeForgotten(): Promise<number> {
    const result = await this.deliveries
      .createQueryBuilder()
      .delete()
      .where('notification_id IS NULL')
      .andWhere('state <> :pending', { pending: 'pending' })
      .andWhere('NOT EXISTS (SELECT 1 FROM delivery_attempts a WHERE a.delivery_id = deliveries.id)')
      .execute();
    return result.affected ?? 0;
  }

  /** Deliveries waiting to be sent, and when the oldest of them was queued. */
  async outbox(): Promise<{ depth: number; oldest?: Date }> {
    const row = await this.deliveries
      .createQueryBuilder('d')
      .select('COUNT(*)', 'n')
      .addSelect('MIN(d.createdAt)', 'oldest')
      .where('d.state = :state', { state: 'pending' })
      .getRawOne<{ n: number | string; oldest: Date | string | null }>();
    return {
      depth: Number(row?.n ?? 0),
      oldest: row?.oldest ? rawDate(row.oldest) : undefined,
    };
  }
}
