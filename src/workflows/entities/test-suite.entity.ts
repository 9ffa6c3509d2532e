import {
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  OneToMany,
  PrimaryGeneratedColumn,
  Unique,
  type Relation,
} from 'typeorm';
import { TestInstanceEntity } from './test-instance.entity.js';
import { WorkflowVersionEntity } from './workflow-version.entity.js';
import { COLUMN_LENGTHS } from '../columns.js';

/** A TestSuite of a version's crate, with its TestDefinition flattened in (null members when it has none). */
@Entity('test_suites')
@Unique('UQ_test_suites_uuid', ['uuid'])
@Index('IDX_test_suites_version', ['versionId'])
export class TestSuiteEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: COLUMN_LENGTHS.uuid })
  uuid!: string;

  @Column({ name: 'version_id', type: 'integer' })
  versionId!: number;

  @ManyToOne(() => WorkflowVersionEntity, (version) => version.suites, {
    onDelete: 'CASCADE',
    onUpdate: 'NO ACTION',
  })
  @JoinColumn({ name: 'version_id', foreignKeyConstraintName: 'FK_test_suites_version' })
  version?: Relation<WorkflowVersionEntity>;

  @Column({ name: 'roc_suite', type: 'varchar', length: COLUMN_LENGTHS.rocId })
  rocSuite!: string;

  @Column({ type: 'varchar', length: COLUMN_LENGTHS.name, nullable: true })
  name!: string | null;

  @Column({ name: 'definition_path', type: 'varchar', length: COLUMN_LENGTHS.path, nullable: true })
  definitionPath!: string | null;

  @Column({ name: 'engine_type', type: 'varchar', length: COLUMN_LENGTHS.engine, nullable: true })
  engineType!: string | null;

  @Column({ name: 'engine_version', type: 'varchar', length: COLUMN_LENGTHS.engine, nullable: true })
  engineVersion!: string | null;

  @OneToMany(() => TestInstanceEntity, (instance) => instance.suite)
  instances?: Relation<TestInstanceEntity>[];
}
