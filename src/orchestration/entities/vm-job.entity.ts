import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** The states of an asynchronous start (API.md 8). */
export const JOB_STATES = ['pending', 'running', 'done', 'failed'] as const;
export type JobState = (typeof JOB_STATES)[number];

/**
 * An asynchronous start: the request, then the node it made, followed until it runs (done) or fails.
 * Rows, not memory, so a job outlives a restart and any copy of the service can carry it on; the
 * poller's claim (`claim_owner`, `claim_until`) makes one copy at a time work on it.
 */
@Entity('vm_jobs')
@Index('IDX_vm_jobs_next_poll_at', ['nextPollAt'])
export class VmJobEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ type: 'varchar', length: 64 })
  cloud!: string;

  /** The user who asked; only they (and admins) see the job. */
  @Column({ name: 'owner_id', type: 'integer' })
  ownerId!: number;

  @Column({ type: 'varchar', length: 16 })
  state!: JobState;

  /** JSON of the start request (name, image, size, keyname, metadata). */
  @Column({ type: 'text' })
  request!: string;

  @Column({ name: 'node_id', type: 'varchar', length: 255, nullable: true })
  nodeId!: string | null;

  /** JSON of the node as last seen. */
  @Column({ type: 'text', nullable: true })
  node!: string | null;

  @Column({ type: 'varchar', length: 1024, nullable: true })
  error!: string | null;

  /** Polls of the node so far: the back-off grows with them. */
  @Column({ type: 'integer', default: 0 })
  polls!: number;

  /** When the poller next looks at the job; NULL once it is finished. */
  @Column({ name: 'next_poll_at', type: 'datetime', nullable: true })
  nextPollAt!: Date | null;

  @Column({ name: 'claim_owner', type: 'varchar', length: 64, nullable: true })
  claimOwner!: string | null;

  @Column({ name: 'claim_until', type: 'datetime', nullable: true })
  claimUntil!: Date | null;

  @Column({ name: 'created_at', type: 'datetime' })
  createdAt!: Date;
}
