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
import { WorkflowVersionEntity } from './workflow-version.entity.js';
import { COLUMN_LENGTHS } from '../columns.js';

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
