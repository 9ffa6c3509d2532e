import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { eventsColumn, type EventName } from '../events.js';

/**
 * A user's subscription to a workflow's events. Relations name other features' entities by
 * entity name (see CheckStateEntity): no import of their internals. The workflow's uuid is kept
 * beside its id (it never changes) so that a list of subscriptions needs no registry read.
 */
@Entity('subscriptions')
@Unique('UQ_subscriptions_user_workflow', ['userId', 'workflowId'])
@Index('IDX_subscriptions_workflow', ['workflowId'])
export class SubscriptionEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'user_id', type: 'integer' })
  userId!: number;

  @ManyToOne('UserEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_subscriptions_user' })
  user?: object;

  @Column({ name: 'workflow_id', type: 'integer' })
  workflowId!: number;

  @ManyToOne('WorkflowEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'workflow_id', foreignKeyConstraintName: 'FK_subscriptions_workflow' })
  workflow?: object;

  @Column({ name: 'workflow_uuid', type: 'varchar', length: 36 })
  workflowUuid!: string;

  @Column({ type: 'varchar', length: 128, transformer: eventsColumn })
  events!: EventName[];

  @Column({ name: 'created_at', type: 'datetime' })
  createdAt!: Date;

  @Column({ name: 'modified_at', type: 'datetime' })
  modifiedAt!: Date;
}
