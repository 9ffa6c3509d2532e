import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

/** A CI service paused by its rate limit: no copy sends it a request before `pausedUntil`. */
@Entity('test_service_pauses')
@Index('IDX_test_service_pauses_until', ['pausedUntil'])
export class ServicePauseEntity {
  @PrimaryColumn({ name: 'service_id', type: 'integer' })
  serviceId!: number;

  // By entity name: see CheckStateEntity.
  @ManyToOne('TestServiceEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'service_id', foreignKeyConstraintName: 'FK_test_service_pauses_service' })
  service?: object;

  @Column({ name: 'paused_until', type: 'datetime' })
  pausedUntil!: Date;
}
