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
import { UserEntity } from '../../auth/entities/user.entity.js';
import { TestSuiteEntity } from './test-suite.entity.js';
import { VersionIssueEntity } from './version-issue.entity.js';
import { WorkflowEntity } from './workflow.entity.js';
import { COLUMN_LENGTHS } from '../columns.js';
import type { WorkflowLanguage } from '../crate/workflow-language.js';

/** One registered version of a workflow. Its crate's metadata is read from the stored archive on demand. */
@Entity('workflow_versions')
@Unique('UQ_workflow_versions_uuid', ['uuid'])
@Unique('UQ_workflow_versions_workflow_version', ['workflowId', 'version'])
@Index('IDX_workflow_versions_submitter', ['submitterId'])
@Index('IDX_workflow_versions_name', ['name'])
@Index('IDX_workflow_versions_language', ['language'])
export class WorkflowVersionEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: COLUMN_LENGTHS.uuid })
  uuid!: string;

  @Column({ name: 'workflow_id', type: 'integer' })
  workflowId!: number;

  @ManyToOne(() => WorkflowEntity, (workflow) => workflow.versions, {
    onDelete: 'CASCADE',
    onUpdate: 'NO ACTION',
  })
  @JoinColumn({ name: 'workflow_id', foreignKeyConstraintName: 'FK_workflow_versions_workflow' })
  workflow?: Relation<WorkflowEntity>;

  @Column({ type: 'varchar', length: COLUMN_LENGTHS.version })
  version!: string;

  @Column({ type: 'varchar', length: COLUMN_LENGTHS.name })
  name!: string;

  @Column({ name: 'roc_link', type: 'varchar', length: COLUMN_LENGTHS.rocLink })
  rocLink!: string;

  @Index('IDX_workflow_versions_archive')
  @Column({ name: 'archive_sha256', type: 'varchar', length: COLUMN_LENGTHS.sha256 })
  archiveSha256!: string;

  @Column({ name: 'archive_size', type: 'integer' })
  archiveSize!: number;

  @Column({ name: 'submitter_id', type: 'integer' })
  submitterId!: number;

  @ManyToOne(() => UserEntity, { onDelete: 'RESTRICT', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'submitter_id', foreignKeyConstraintName: 'FK_workflow_versions_submitter' })
  submitter?: Relation<UserEntity>;

  /** For a link naming a GitHub repository: the ref registered and its commit then (API.md 7.1); null otherwise. */
  @Column({ name: 'source_ref', type: 'varchar', length: COLUMN_LENGTHS.sourceRef, nullable: true })
  sourceRef!: string | null;

  @Column({ name: 'source_commit', type: 'varchar', length: COLUMN_LENGTHS.sourceCommit, nullable: true })
  sourceCommit!: string | null;

  /**
   * The main workflow as the crate names it (its `mainEntity` @id, a path in the crate unless it is
   * a URL); null when the crate names none, or for a version registered before this was kept
   * until MainWorkflowBackfill has read its archive.
   */
  @Column({ name: 'main_workflow', type: 'varchar', length: COLUMN_LENGTHS.path, nullable: true })
  mainWorkflow!: string | null;

  /** The main workflow's language (WORKFLOW_LANGUAGES), null when the crate names none of them. */
  @Column({ name: 'workflow_language', type: 'varchar', length: COLUMN_LENGTHS.language, nullable: true })
  language!: WorkflowLanguage | null;

  /** The registry's page of this version (`links.origin`, API.md 10.1); null for a version registered by link. */
  @Column({ name: 'origin_link', type: 'varchar', length: COLUMN_LENGTHS.originLink, nullable: true })
  originLink!: string | null;

  @Column({ name: 'registered_at', type: 'datetime', default: () => 'CURRENT_TIMESTAMP' })
  registeredAt!: Date;

  @OneToMany(() => TestSuiteEntity, (suite) => suite.version)
  suites?: Relation<TestSuiteEntity>[];

  /** What the repository checks found at registration (API.md 12), in the order recorded. */
  @OneToMany(() => VersionIssueEntity, (issue) => issue.version)
  issues?: Relation<VersionIssueEntity>[];
}
