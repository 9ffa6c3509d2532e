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

/** The longest owner (a group path) and repository name stored; longer links are refused at registration. */
export const OWNER_LENGTH = 255;
export const REPO_LENGTH = 100;
const FULL_NAME_LENGTH = OWNER_LENGTH + 1 + REPO_LENGTH;

/**
 * The repository a workflow was registered from (API.md 12, 18), on its host, what it follows and how its
 * polling goes. Every workflow registered from a repository link has one; it follows nothing
 * until its owner says so through the API (`api_follow`) or its `.lifemonitor.yaml`
 * (`file_follow`), the API winning. The refs of the repository are read when `next_poll_at` is
 * due (NULL: not following, or polling off), by whichever copy claims it (`claim_*`).
 */
@Entity('followed_repositories')
@Unique('UQ_followed_repositories_workflow', ['workflowId'])
@Index('IDX_followed_repositories_full_name', ['fullName'])
@Index('IDX_followed_repositories_next_poll', ['nextPollAt'])
export class FollowedRepositoryEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'workflow_id', type: 'integer' })
  workflowId!: number;

  // The registry's workflow by its entity's name: the registry imports following, not the reverse.
  @ManyToOne('WorkflowEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'workflow_id', foreignKeyConstraintName: 'FK_followed_repositories_workflow' })
  workflow?: Relation<object>;

  /**
   * `owner/repo` in lower case: hosts' names are case-insensitive, and webhooks find rows by it
   * (with `site`).
   */
  @Column({ name: 'full_name', type: 'varchar', length: FULL_NAME_LENGTH })
  fullName!: string;

  /** Where the repository's host has its pages (RepositoryLink.site): which host, and which of its instances. */
  @Column({ type: 'varchar', length: 255, default: 'https://github.com' })
  site!: string;

  /** A user or organisation, or a group path (`group/subgroup`) on hosts that nest groups. */
  @Column({ type: 'varchar', length: OWNER_LENGTH })
  owner!: string;

  @Column({ type: 'varchar', length: REPO_LENGTH })
  repo!: string;

  /** JSON `{tags, branches}` set through `PUT /workflows/{uuid}`; NULL when the API never set it. */
  @Column({ name: 'api_follow', type: 'text', nullable: true })
  apiFollow!: string | null;

  /** JSON `{tags, branches}` of the `.lifemonitor.yaml` registered last; NULL without a valid one. */
  @Column({ name: 'file_follow', type: 'text', nullable: true })
  fileFollow!: string | null;

  /**
   * When the refs were last read whole. NULL: following began (or changed) since, and the next
   * reading only takes note of the refs there are, as refs that were there before.
   */
  @Column({ name: 'refs_read_at', type: 'datetime', nullable: true })
  refsReadAt!: Date | null;

  /** JSON `{heads: [etag per page], tags: [...]}` of the last reading. */
  @Column({ name: 'refs_etags', type: 'text', nullable: true })
  refsEtags!: string | null;

  @Column({ name: 'next_poll_at', type: 'datetime', nullable: true })
  nextPollAt!: Date | null;

  @Column({ name: 'claim_owner', type: 'varchar', length: 64, nullable: true })
  claimOwner!: string | null;

  @Column({ name: 'claim_until', type: 'datetime', nullable: true })
  claimUntil!: Date | null;

  @Column({ name: 'polled_at', type: 'datetime', nullable: true })
  polledAt!: Date | null;

  /** Why the last poll failed (the host down, rate-limited, the repository gone); NULL when it worked. */
  @Column({ name: 'poll_error', type: 'varchar', length: 1024, nullable: true })
  pollError!: string | null;

  /** Since when the host answers 404 for the repository; NULL while it is there. */
  @Column({ name: 'gone_at', type: 'datetime', nullable: true })
  goneAt!: Date | null;
}
