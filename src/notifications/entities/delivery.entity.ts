import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';

export type DeliveryState = 'pending' | 'sent' | 'failed';

/**
 * The outbox: one notification to one channel, written with the notification and sent after
 * commit by whichever copy claims it (`claim_owner`, `claim_until`). `uuid` is the X-Delivery id,
 * the same on every attempt.
 */
@Entity('deliveries')
@Unique('UQ_deliveries_uuid', ['uuid'])
@Index('IDX_deliveries_next_attempt', ['nextAttemptAt'])
@Index('IDX_deliveries_state_created', ['state', 'createdAt'])
@Index('IDX_deliveries_channel', ['channelId'])
@Index('IDX_deliveries_notification', ['notificationId'])
export class DeliveryEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: 36 })
  uuid!: string;

  @Column({ name: 'channel_id', type: 'integer' })
  channelId!: number;

  @ManyToOne('ChannelEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'channel_id', foreignKeyConstraintName: 'FK_deliveries_channel' })
  channel?: object;

  /** NULL once the notification was deleted: the delivery and its attempts stay in the channel's log. */
  @Column({ name: 'notification_id', type: 'integer', nullable: true })
  notificationId!: number | null;

  @ManyToOne('NotificationEntity', { onDelete: 'SET NULL', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'notification_id', foreignKeyConstraintName: 'FK_deliveries_notification' })
  notification?: object;

  /**
   * The notification as it was when the delivery was queued (its view's JSON): every attempt sends
   * these bytes, so retries are byte-identical and signed alike. NULL only for deliveries queued
   * before this column existed.
   */
  @Column({ type: 'text', nullable: true })
  payload!: string | null;

  @Column({ type: 'varchar', length: 16 })
  state!: DeliveryState;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  /** When the next attempt is due; NULL once sent or failed. */
  @Column({ name: 'next_attempt_at', type: 'datetime', nullable: true })
  nextAttemptAt!: Date | null;

  @Column({ name: 'created_at', type: 'datetime' })
  createdAt!: Date;

  @Column({ name: 'finished_at', type: 'datetime', nullable: true })
  finishedAt!: Date | null;

  @Column({ name: 'last_error', type: 'varchar', length: 512, nullable: true })
  lastError!: string | null;

  @Column({ name: 'claim_owner', type: 'varchar', length: 64, nullable: true })
  claimOwner!: string | null;

  @Column({ name: 'claim_until', type: 'datetime', nullable: true })
  claimUntil!: Date | null;
}
