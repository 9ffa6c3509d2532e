import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { eventsColumn, type EventName } from '../events.js';

export const CHANNEL_TYPES = ['webhook', 'slack', 'email'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
export const MAX_TARGET_LENGTH = 2048;
export const MAX_SECRET_LENGTH = 256;

/** Where a user's notifications are delivered (API.md 6.4). */
@Entity('notification_channels')
@Index('IDX_notification_channels_user', ['userId'])
export class ChannelEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'user_id', type: 'integer' })
  userId!: number;

  @ManyToOne('UserEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_notification_channels_user' })
  user?: object;

  @Column({ type: 'varchar', length: 16 })
  type!: ChannelType;

  @Column({ type: 'varchar', length: MAX_TARGET_LENGTH })
  target!: string;

  @Column({ type: 'varchar', length: 128, transformer: eventsColumn })
  events!: EventName[];

  /** The webhook's signing secret: written, never shown. */
  @Column({ type: 'varchar', length: MAX_SECRET_LENGTH, nullable: true })
  secret!: string | null;

  @Column({ name: 'created_at', type: 'datetime' })
  createdAt!: Date;
}
