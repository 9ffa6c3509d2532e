import { randomUUID } from 'node:crypto';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { unrequestedBaseUrlOf } from '../common/base-url.js';
import { Clock } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { DeliveriesRepository, type ClaimedDelivery } from './deliveries.repository.js';
import { nextAttemptAt } from './delivery-schedule.js';
import { toNotificationView, type NotificationView } from './notification-data.js';
import { NotificationsRepository } from './notifications.repository.js';
import {
  CHANNEL_SENDERS,
  sendTimeoutMs,
  type ChannelSender,
  type SendOutcome,
} from './senders/channel-sender.js';

/** Deliveries claimed per round; each is one request bounded by the send timeout, all sent at once. */
export const DELIVERY_BATCH = 20;
const TICK_MS = 1000;
/** The retention sweep and the outbox gauges run at most this often. */
const SWEEP_EVERY_MS = 3600_000;
const GAUGES_EVERY_MS = 10_000;
const DAY_MS = 24 * 3600_000;

/**
 * Sends the outbox: every second, claims due deliveries (a database lease, so several copies
 * never send one delivery at once), sends them, and writes each outcome: sent, a later attempt
 * (back-off with jitter, delivery-schedule.ts), or failed after 24 h. Also sweeps notifications
 * past NOTIFICATION_RETENTION_DAYS. Off, like the refresh scheduler, when REFRESH_INTERVAL_SECONDS
 * is 0; tests then call tick() and sweep() with the time they choose.
 */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown {
  readonly owner = randomUUID();
  private readonly logger = new Logger(DeliveryWorker.name);
  private readonly senders: Map<string, ChannelSender>;
  private current?: Promise<number>;
  private timer?: NodeJS.Timeout;
  private stopping = false;
  private lastSweepMs = 0;
  private lastGaugesMs = 0;

  constructor(
    @Inject(CHANNEL_SENDERS) senders: ChannelSender[],
    private readonly deliveries: DeliveriesRepository,
    private readonly notifications: NotificationsRepository,
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.senders = new Map(senders.map((sender) => [sender.type, sender]));
  }

  onApplicationBootstrap(): void {
    if (this.config.monitoring.refreshIntervalSeconds === 0) {
      return;
    }
    this.schedule();
  }

  onModuleDestroy(): void {
    this.stopping = true;
    clearTimeout(this.timer);
  }

  /** Waits for the attempts in flight and their writes, before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.current?.catch(() => undefined);
  }

  /**
   * One round: claims due deliveries and sends them; resolves with how many were attempted.
   * A round while another runs waits for it and then runs (a test's tick is never lost).
   */
  async tick(now?: Date): Promise<number> {
    while (this.current) {
      await this.current.catch(() => undefined);
    }
    if (this.stopping) {
      return 0;
    }
    this.current = this.round(now).finally(() => {
      this.current = undefined;
    });
    return this.current;
  }

  /**
   * Removes notifications older than NOTIFICATION_RETENTION_DAYS at `now`, and the deliveries of
   * deleted notifications that the channels' logs no longer show; returns how many notifications.
   */
  async sweep(now = new Date(this.clock.nowMs())): Promise<number> {
    const before = new Date(now.getTime() - this.config.notifications.retentionDays * DAY_MS);
    const removed = await this.notifications.removeCreatedBefore(before);
    await this.deliveries.removeForgotten();
    return removed;
  }

  private schedule(): void {
    if (this.stopping) {
      return;
    }
    this.timer = setTimeout(
      () => {
        void this.background().finally(() => this.schedule());
      },
      Math.round(TICK_MS * (0.75 + 0.5 * Math.random())),
    );
  }

  private async background(): Promise<void> {
    try {
      await this.tick();
      const nowMs = this.clock.nowMs();
      if (nowMs - this.lastSweepMs >= SWEEP_EVERY_MS) {
        this.lastSweepMs = nowMs;
        const removed = await this.sweep(new Date(nowMs));
        if (removed > 0) {
          this.logger.log(`removed ${removed} notifications past their retention`);
        }
      }
      if (nowMs - this.lastGaugesMs >= GAUGES_EVERY_MS) {
        this.lastGaugesMs = nowMs;
        await this.updateGauges(new Date(nowMs));
      }
    } catch (error) {
      this.logger.error({ err: error }, 'delivery round failed');
    }
  }

  /** Sets the outbox gauges (depth, age of the oldest pending delivery). */
  async updateGauges(now = new Date(this.clock.nowMs())): Promise<void> {
    const outbox = await this.deliveries.outbox();
    this.metrics.outboxDepth.set(outbox.depth);
    this.metrics.outboxOldestAge.set(
      outbox.oldest ? Math.max(0, (now.getTime() - outbox.oldest.getTime()) / 1000) : 0,
    );
  }

  private async round(fixedNow: Date | undefined): Promise<number> {
    let attempted = 0;
    while (!this.stopping) {
      const now = fixedNow ?? new Date(this.clock.nowMs());
      // The claim outlasts the attempt's timeout and the write after it, with room to spare.
      const claimMs = 3 * sendTimeoutMs(this.config) + 10_000;
      const claimed = await this.deliveries.claimDue(now, this.owner, DELIVERY_BATCH, claimMs);
      if (claimed.length === 0) {
        break;
      }
      attempted += claimed.length;
      await Promise.all(claimed.map((delivery) => this.attempt(delivery, fixedNow)));
      if (claimed.length < DELIVERY_BATCH) {
        break;
      }
    }
    return attempted;
  }

  private async attempt(claimed: ClaimedDelivery, fixedNow: Date | undefined): Promise<void> {
    const { channel, delivery } = claimed;
    const sender = this.senders.get(channel.type);
    const view = sentView(claimed);
    let outcome: SendOutcome;
    try {
      outcome = !view
        ? { sent: false, error: 'its notification was deleted before it was first sent' }
        : sender
          ? await sender.send(channel, {
              deliveryUuid: delivery.uuid,
              event: view.event,
              notification: view,
              statusUrl: `${this.baseUrl()}/status/${view.data.workflow.uuid}`,
              baseUrl: this.baseUrl(),
            })
          : { sent: false, error: `no sender for channel type '${channel.type}'` };
    } catch (error) {
      // Senders report failures as values; a rejection is a bug, kept out of the log of the channel.
      this.logger.error({ err: error }, `sending delivery ${delivery.id} threw`);
      outcome = { sent: false, error: 'internal error while sending' };
    }
    const at = fixedNow ?? new Date(this.clock.nowMs());
    const next =
      outcome.sent || !view
        ? undefined
        : nextAttemptAt(delivery.createdAt, delivery.attempts + 1, at, Math.random());
    try {
      const written = await this.deliveries.finishAttempt(claimed, { at, ...outcome, next });
      if (written) {
        this.metrics.deliveries.inc({
          channel: channel.type,
          result: outcome.sent ? 'sent' : next ? 'retry' : 'failed',
        });
      }
    } catch (error) {
      // The claim runs out and the delivery is attempted again: not lost, possibly sent twice.
      this.logger.error({ err: error }, `could not record the attempt of delivery ${delivery.id}`);
    }
  }

  private baseUrl(): string {
    return unrequestedBaseUrlOf(this.config);
  }
}

/**
 * What a delivery sends: the notification as it was when the delivery was queued, the same on
 * every attempt (byte-identical bodies, the same signature, as GitHub's redeliveries); for a
 * delivery queued before deliveries kept it, the notification as it is, when it still exists.
 */
function sentView(claimed: ClaimedDelivery): NotificationView | undefined {
  if (claimed.delivery.payload !== null) {
    return JSON.parse(claimed.delivery.payload) as NotificationView;
  }
  return claimed.notification ? toNotificationView(claimed.notification) : undefined;
}
