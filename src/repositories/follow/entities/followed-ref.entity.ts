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
import { FollowedRepositoryEntity } from './followed-repository.entity.js';

export const REF_KINDS = ['tag', 'branch'] as const;
export type FollowedRefKind = (typeof REF_KINDS)[number];

/**
 * What became of a ref: `seen` (there before following began, or not followed: nothing to do),
 * `pending` (a version to register, by whichever copy claims it), `registered`, `failed` (the
 * registration was refused: the reason says why) or `ignored` (a name that cannot be a version).
 */
export const REF_STATES = ['seen', 'pending', 'registered', 'failed', 'ignored'] as const;
export type FollowedRefState = (typeof REF_STATES)[number];

/**
 * A tag or branch of a followed repository as following last saw it, and what following did with
 * it. One row per (repository, kind, name): a new tag is registered once, whatever the number of
 * copies and events telling of it; a branch's row moves to each new commit pushed.
 */
@Entity('followed_refs')
@Unique('UQ_followed_refs_ref', ['repositoryId', 'kind', 'name'])
@Index('IDX_followed_refs_next_attempt', ['nextAttemptAt'])
@Index('IDX_followed_refs_recent', ['repositoryId', 'updatedAt'])
export class FollowedRefEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'repository_id', type: 'integer' })
  repositoryId!: number;

  @ManyToOne(() => FollowedRepositoryEntity, { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'repository_id', foreignKeyConstraintName: 'FK_followed_refs_repository' })
  repository?: Relation<FollowedRepositoryEntity>;

  @Column({ type: 'varchar', length: 8 })
  kind!: FollowedRefKind;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  /** The commit it names; NULL for a tag a webhook told of, until its commit is read. */
  @Column({ name: 'commit_sha', type: 'varchar', length: 64, nullable: true })
  commit!: string | null;

  @Column({ type: 'varchar', length: 16 })
  state!: FollowedRefState;

  /** The version registered from it. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  version!: string | null;

  /** Why it failed or was ignored, or why its last attempt did not happen. */
  @Column({ type: 'varchar', length: 1024, nullable: true })
  reason!: string | null;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  /** When a pending registration is next tried; NULL for every other state. */
  @Column({ name: 'next_attempt_at', type: 'datetime', nullable: true })
  nextAttemptAt!: Date | null;

  @Column({ name: 'claim_owner', type: 'varchar', length: 64, nullable: true })
  claimOwner!: string | null;

  @Column({ name: 'claim_until', type: 'datetime', nullable: true })
  claimUntil!: Date | null;

  @Column({ name: 'updated_at', type: 'datetime' })
  updatedAt!: Date;
}
