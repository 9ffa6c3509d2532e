import {
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  type Relation,
} from 'typeorm';
import { TestServiceEntity } from './test-service.entity.js';
import { TestSuiteEntity } from './test-suite.entity.js';

/**
 * A TestInstance of a suite. The registry writes the first group of columns; test
 * monitoring owns the check-state columns (the due time, the lease that lets several
 * copies share the work, the ETag and the back-off), which the registry only initialises
 * to "due now".
 */
@Entity('test_instances')
@Unique('UQ_test_instances_uuid', ['uuid'])
@Index('IDX_test_instances_due', ['nextCheckAt'])
export class TestInstanceEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: 36 })
  uuid!: string;

  @Column({ name: 'suite_id', type: 'integer' })
  suiteId!: number;

  @ManyToOne(() => TestSuiteEntity, (suite) => suite.instances, {
    onDelete: 'CASCADE',
    onUpdate: 'NO ACTION',
  })
  @JoinColumn({ name: 'suite_id', foreignKeyConstraintName: 'FK_test_instances_suite' })
  suite?: Relation<TestSuiteEntity>;

  @Column({ name: 'service_id', type: 'integer' })
  serviceId!: number;

  @ManyToOne(() => TestServiceEntity, { onDelete: 'RESTRICT', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'service_id', foreignKeyConstraintName: 'FK_test_instances_service' })
  service?: Relation<TestServiceEntity>;

  @Column({ name: 'roc_instance', type: 'varchar', length: 512 })
  rocInstance!: string;

  @Column({ type: 'varchar', length: 512, nullable: true })
  name!: string | null;

  @Column({ type: 'varchar', length: 1024 })
  resource!: string;

  @Column({ type: 'boolean', default: 0 })
  managed!: boolean;

  // --- check state, owned by test monitoring ---

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

  @Column({ name: 'last_error', type: 'varchar', length: 512, nullable: true })
  lastError!: string | null;
}
