import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

/**
 * How and when test monitoring checks one registered instance: the due time, the lease that
 * lets several copies share the work, the ETag and the back-off. One row per instance, written
 * in the registration's transaction (see CheckStateRepository.addDue) and gone with the instance.
 *
 * The relations name the registry's entities by their entity name, not their class, so that
 * monitoring needs no import of the registry's internals for its foreign keys.
 */
@Entity('test_check_states')
@Index('IDX_test_check_states_due', ['nextCheckAt'])
@Index('IDX_test_check_states_service', ['serviceId'])
@Index('IDX_test_check_states_version', ['versionId'])
@Index('IDX_test_check_states_rerun', ['rerunIntervalDays', 'rerunFrom'])
export class CheckStateEntity {
  @PrimaryColumn({ name: 'instance_id', type: 'integer' })
  instanceId!: number;

  @ManyToOne('TestInstanceEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'instance_id', foreignKeyConstraintName: 'FK_test_check_states_instance' })
  instance?: object;

  /** The instance's service (it never changes): claims skip paused services without a join into the registry. */
  @Column({ name: 'service_id', type: 'integer' })
  serviceId!: number;

  @ManyToOne('TestServiceEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'service_id', foreignKeyConstraintName: 'FK_test_check_states_service' })
  service?: object;

  /** The instance's version (it never changes): status reads by version stay in one indexed query. */
  @Column({ name: 'version_id', type: 'integer' })
  versionId!: number;

  @ManyToOne('WorkflowVersionEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'version_id', foreignKeyConstraintName: 'FK_test_check_states_version' })
  version?: object;

  @Column({ name: 'next_check_at', type: 'datetime' })
  nextCheckAt!: Date;

  @Column({ name: 'lease_owner', type: 'varchar', length: 64, nullable: true })
  leaseOwner!: string | null;

  @Column({ name: 'lease_until', type: 'datetime', nullable: true })
  leaseUntil!: Date | null;

  @Column({ type: 'varchar', length: 256, nullable: true })
  etag!: string | null;

  @Column({ name: 'failure_count', type: 'integer', default: 0 })
  failureCount!: number;

  /** The last successful check (a 304 counts). */
  @Column({ name: 'last_checked_at', type: 'datetime', nullable: true })
  lastCheckedAt!: Date | null;

  /** True while the most recent check failed; the last known builds stay. */
  @Column({ name: 'last_check_failed', type: 'boolean', default: 0 })
  lastCheckFailed!: boolean;

  /**
   * The CI said, when its state was last read, that it no longer runs the instance's workflow
   * (GitHub's `disabled_*` states, API.md 16); false until read.
   */
  @Column({ name: 'workflow_disabled', type: 'boolean', default: 0 })
  workflowDisabled!: boolean;

  /** Why the last check failed, in the CI service's words (never a credential); null when it did not. */
  @Column({ name: 'last_error', type: 'varchar', length: 512, nullable: true })
  lastError!: string | null;

  /** The last check, whatever its outcome (API.md 11 `last_check.at`); null before the first. */
  @Column({ name: 'last_check_at', type: 'datetime', nullable: true })
  lastCheckAt!: Date | null;

  /**
   * When a build was last triggered (on demand or by a periodic re-run): one trigger per instance
   * per 10 minutes, across copies, and the start of the next re-run's interval.
   */
  @Column({ name: 'last_trigger_at', type: 'datetime', nullable: true })
  lastTriggerAt!: Date | null;

  /** Its workflow's days between periodic re-runs (API.md 11); null: RERUN_INTERVAL_DAYS. */
  @Column({ name: 'rerun_interval_days', type: 'integer', nullable: true })
  rerunIntervalDays!: number | null;

  /**
   * The later of its latest build's start and `last_trigger_at`, whence its next periodic re-run
   * is counted; null without builds (nothing to re-run).
   */
  @Column({ name: 'rerun_from', type: 'datetime', nullable: true })
  rerunFrom!: Date | null;
}
