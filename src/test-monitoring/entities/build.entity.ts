import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';

/** The longest failure reason stored (a reason is one line). */
export const FAILURE_REASON_LENGTH = 255;

/** One CI build of an instance, as its service reported it at the last check. */
@Entity('builds')
@Unique('UQ_builds_instance_build', ['instanceId', 'buildId'])
@Index('IDX_builds_instance_started', ['instanceId', 'startedAt'])
@Index('IDX_builds_instance_status_started', ['instanceId', 'status', 'startedAt'])
export class BuildEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'instance_id', type: 'integer' })
  instanceId!: number;

  // By entity name: see CheckStateEntity.
  @ManyToOne('TestInstanceEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'instance_id', foreignKeyConstraintName: 'FK_builds_instance' })
  instance?: object;

  @Column({ name: 'build_id', type: 'varchar', length: 64 })
  buildId!: string;

  /** passed | failed | error | aborted | running | waiting */
  @Column({ type: 'varchar', length: 16 })
  status!: string;

  @Column({ name: 'started_at', type: 'datetime' })
  startedAt!: Date;

  @Column({ name: 'duration_seconds', type: 'integer' })
  durationSeconds!: number;

  @Column({ type: 'varchar', length: 1024 })
  url!: string;

  /** The commit the build ran on, as the CI's listing names it; null where it names none. */
  @Column({ name: 'head_sha', type: 'varchar', length: 64, nullable: true })
  headSha!: string | null;

  /** API.md 16, on failing builds: infrastructure | test | unknown; null on others. */
  @Column({ name: 'failure_class', type: 'varchar', length: 16, nullable: true })
  failureClass!: string | null;

  @Column({ name: 'failure_reason', type: 'varchar', length: FAILURE_REASON_LENGTH, nullable: true })
  failureReason!: string | null;

  /** The evidence lines as a JSON array of strings. */
  @Column({ name: 'failure_evidence', type: 'text', nullable: true })
  failureEvidence!: string | null;
}
