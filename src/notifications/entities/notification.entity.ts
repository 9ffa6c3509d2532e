import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';

/** One subscriber's copy of an event (API.md 6.3). */
@Entity('notifications')
@Unique('UQ_notifications_uuid', ['uuid'])
@Index('IDX_notifications_user_created', ['userId', 'createdAt'])
@Index('IDX_notifications_event', ['eventId'])
@Index('IDX_notifications_created', ['createdAt'])
export class NotificationEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: 36 })
  uuid!: string;

  @Column({ name: 'user_id', type: 'integer' })
  userId!: number;

  @ManyToOne('UserEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_notifications_user' })
  user?: object;

  /** NULL once the instance is gone: the notification outlives it until retention removes it. */
  @Column({ name: 'event_id', type: 'integer', nullable: true })
  eventId!: number | null;

  @ManyToOne('NotificationEventEntity', { onDelete: 'SET NULL', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'event_id', foreignKeyConstraintName: 'FK_notifications_event' })
  raised?: object;

  @Column({ type: 'varchar', length: 32 })
  event!: string;

  /** JSON of the notification's `data` (workflow, instance, build), as it was when raised. */
  @Column({ type: 'text' })
  data!: string;

  @Column({ name: 'created_at', type: 'datetime' })
  createdAt!: Date;

  @Column({ name: 'read_at', type: 'datetime', nullable: true })
  readAt!: Date | null;

  @Column({ name: 'emailed_at', type: 'datetime', nullable: true })
  emailedAt!: Date | null;
}
