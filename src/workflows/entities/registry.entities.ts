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
import { type IssueSeverity, type WorkflowLanguage } from '../../crates/index.js';
import { COLUMN_LENGTHS } from '../columns.js';
import { TestServiceEntity } from './test-service.entity.js';
import type { AggregateTestStatus } from '../workflow-status-source.js';

/*
 * The registry's aggregate: a workflow, its versions, their test suites and instances, and the
 * issues recorded on a version. They are one module because their relations run both ways (a
 * version knows its workflow and the workflow its versions); in files of their own they were
 * an import circle, and a change to one relation is a change to both of its ends anyway.
 */

/**
 * A workflow: a uuid owned by one user. Its latest version is derived from its versions (the
 * most recently registered remaining one); `latestVersionId` keeps that version's id on the
 * row only as the order of lists, so that a page is read from an index.
 */
@Entity('workflows')
@Unique('UQ_workflows_uuid', ['uuid'])
@Index('IDX_workflows_owner_latest', ['ownerId', 'latestVersionId'])
@Index('IDX_workflows_public_latest', ['public', 'latestVersionId'])
@Index('IDX_workflows_latest', ['latestVersionId'])
@Index('IDX_workflows_rerun_interval', ['rerunIntervalDays'])
@Index('IDX_workflows_registry_latest', ['registryId', 'latestVersionId'])
@Index('IDX_workflows_status_latest', ['testStatus', 'latestVersionId'])
@Index('IDX_workflows_public_status_latest', ['public', 'testStatus', 'latestVersionId'])
@Index('IDX_workflows_owner_status_latest', ['ownerId', 'testStatus', 'latestVersionId', 'public'])
@Index('IDX_workflows_registry_status_latest', ['registryId', 'testStatus', 'latestVersionId', 'public'])
export class WorkflowEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: COLUMN_LENGTHS.uuid })
  uuid!: string;

  @Column({ name: 'owner_id', type: 'integer' })
  ownerId!: number;

  @ManyToOne(() => UserEntity, { onDelete: 'RESTRICT', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'owner_id', foreignKeyConstraintName: 'FK_workflows_owner' })
  owner?: Relation<UserEntity>;

  /**
   * The id of its most recently registered version (ids grow with registration): the order of
   * lists, written with every registration and version deletion in their transaction. Null
   * only inside the transaction that creates the workflow.
   */
  @Column({ name: 'latest_version_id', type: 'integer', nullable: true })
  latestVersionId!: number | null;

  /**
   * Its latest version's aggregate test status, stored (see StoredTestStatuses) so that the wall
   * reads its most urgent workflows from the indexes above: by status, in the list's order,
   * for each side of who may see them (the trailing is_public lets a union be counted once).
   */
  @Column({ name: 'test_status', type: 'varchar', length: 16, default: 'not_available' })
  testStatus!: AggregateTestStatus;

  @Column({ name: 'created_at', type: 'datetime', default: () => 'CURRENT_TIMESTAMP' })
  createdAt!: Date;

  /** Readable by anybody, with or without a token (API.md 5.1); writes stay with the owner and admins. */
  @Column({ name: 'is_public', type: 'boolean', default: 0 })
  public!: boolean;

  /** SHA-256 (hex) of the badge token (API.md 5.2), null while there is none. */
  @Column({ name: 'badge_token_sha256', type: 'varchar', length: COLUMN_LENGTHS.sha256, nullable: true })
  badgeTokenSha256!: string | null;

  /** The badge token sealed for its owner to read again (see BadgeTokens). */
  @Column({ name: 'badge_token_sealed', type: 'varchar', length: 255, nullable: true })
  badgeTokenSealed!: string | null;

  /** Days between periodic re-runs of its tests (API.md 11); null: the service's RERUN_INTERVAL_DAYS. */
  @Column({ name: 'rerun_interval_days', type: 'integer', nullable: true })
  rerunIntervalDays!: number | null;

  /**
   * The registry the workflow came from (API.md 10.1), by its id in the registries feature; null
   * for a workflow registered by link. Not a foreign key: that feature clears it when a registry goes.
   */
  @Column({ name: 'registry_id', type: 'integer', nullable: true })
  registryId!: number | null;

  /** The workflow's id in its registry (SEEK's numeric id); null without a registry. */
  @Column({
    name: 'registry_identifier',
    type: 'varchar',
    length: COLUMN_LENGTHS.registryIdentifier,
    nullable: true,
  })
  registryIdentifier!: string | null;

  @OneToMany(() => WorkflowVersionEntity, (version) => version.workflow)
  versions?: Relation<WorkflowVersionEntity>[];
}

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

  /** Its aggregate test status as test monitoring last stored it (see StoredTestStatuses). */
  @Column({ name: 'test_status', type: 'varchar', length: 16, default: 'not_available' })
  testStatus!: AggregateTestStatus;

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
