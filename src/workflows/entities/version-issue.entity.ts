import {
  Column,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  type Relation,
} from 'typeorm';
import { WorkflowVersionEntity } from './workflow-version.entity.js';
import { COLUMN_LENGTHS } from '../columns.js';
import type { IssueSeverity } from '../checks/issue-check.js';

/**
 * An issue the repository checks found at a version's registration (API.md 12): one per issue
 * type and version, its type's name and severity as they were then, and where in the crate.
 */
@Entity('workflow_version_issues')
@Unique('UQ_workflow_version_issues_type', ['versionId', 'issueType'])
export class VersionIssueEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'version_id', type: 'integer' })
  versionId!: number;

  @ManyToOne(() => WorkflowVersionEntity, (version) => version.issues, {
    onDelete: 'CASCADE',
    onUpdate: 'NO ACTION',
  })
  @JoinColumn({ name: 'version_id', foreignKeyConstraintName: 'FK_workflow_version_issues_version' })
  version?: Relation<WorkflowVersionEntity>;

  /** The issue type's id (`repo_layout.MissingROCrateWorkflowFile`): the reply's `id`. */
  @Column({ name: 'issue_type', type: 'varchar', length: COLUMN_LENGTHS.issueType })
  issueType!: string;

  @Column({ type: 'varchar', length: COLUMN_LENGTHS.issueName })
  name!: string;

  @Column({ type: 'varchar', length: COLUMN_LENGTHS.issueDescription })
  description!: string;

  @Column({ type: 'varchar', length: COLUMN_LENGTHS.issueSeverity })
  severity!: IssueSeverity;
}
