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
import { COLUMN_LENGTHS } from '../columns.js';

/**
 * A TestInstance of a suite, as the crate declared it or as its owner added it through the API
 * (then without a `rocInstance`). How it is checked (due time, lease, ETag, back-off) is test
 * monitoring's, in its own table.
 */
@Entity('test_instances')
@Unique('UQ_test_instances_uuid', ['uuid'])
@Index('IDX_test_instances_suite', ['suiteId'])
@Index('IDX_test_instances_service', ['serviceId'])
export class TestInstanceEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: COLUMN_LENGTHS.uuid })
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

  /** The instance's `@id` in the crate; null for an instance added through the API. */
  @Column({ name: 'roc_instance', type: 'varchar', length: COLUMN_LENGTHS.rocId, nullable: true })
  rocInstance!: string | null;

  @Column({ type: 'varchar', length: COLUMN_LENGTHS.name, nullable: true })
  name!: string | null;

  @Column({ type: 'varchar', length: COLUMN_LENGTHS.resource })
  resource!: string;

  @Column({ type: 'boolean', default: 0 })
  managed!: boolean;

  /**
   * Why this instance is never checked (the crate gave it no resource, or one its service cannot
   * check: API.md 12); null for one that is. Such an instance has no check state.
   */
  @Column({
    name: 'unchecked_reason',
    type: 'varchar',
    length: COLUMN_LENGTHS.uncheckedReason,
    nullable: true,
  })
  uncheckedReason!: string | null;
}
