import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';

/** One attempt of a delivery, for the channel's delivery log (its last 100 are kept). */
@Entity('delivery_attempts')
@Index('IDX_delivery_attempts_channel', ['channelId', 'id'])
@Index('IDX_delivery_attempts_delivery', ['deliveryId'])
export class DeliveryAttemptEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'channel_id', type: 'integer' })
  channelId!: number;

  @ManyToOne('ChannelEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'channel_id', foreignKeyConstraintName: 'FK_delivery_attempts_channel' })
  channel?: object;

  @Column({ name: 'delivery_id', type: 'integer' })
  deliveryId!: number;

  @ManyToOne('DeliveryEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'delivery_id', foreignKeyConstraintName: 'FK_delivery_attempts_delivery' })
  delivery?: object;

  @Column({ name: 'attempted_at', type: 'datetime' })
  attemptedAt!: Date;

  /** `sent`, `error`, or `failed` (the last error, after which no attempt follows). */
  @Column({ type: 'varchar', length: 16 })
  outcome!: string;

  @Column({ name: 'status_code', type: 'integer', nullable: true })
  statusCode!: number | null;

  @Column({ type: 'varchar', length: 512, nullable: true })
  error!: string | null;
}
