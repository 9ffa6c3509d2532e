import { Column, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';

/**
 * An event raised for one build of one instance. The unique key is what makes it happen once,
 * whatever the number of copies recording the same build: the second insert is ignored.
 */
@Entity('notification_events')
@Unique('UQ_notification_events_instance_build_event', ['instanceId', 'buildId', 'event'])
export class NotificationEventEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'instance_id', type: 'integer' })
  instanceId!: number;

  @ManyToOne('TestInstanceEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'instance_id', foreignKeyConstraintName: 'FK_notification_events_instance' })
  instance?: object;

  /**
   * The build the event is about; empty for TESTS_STOPPED and SCHEDULE_DISABLED of an instance that
   * never finished one.
   */
  @Column({ name: 'build_id', type: 'varchar', length: 64 })
  buildId!: string;

  @Column({ type: 'varchar', length: 32 })
  event!: string;

  @Column({ name: 'raised_at', type: 'datetime' })
  raisedAt!: Date;
}
