import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** The states of an asynchronous start (API.md 8). */
export const JOB_STATES = ['pending', 'running', 'done', 'failed'] as const;
export type JobState = (typeof JOB_STATES)[number];

/**
 * A start of a node by the service: the request, then the node it made. An asynchronous start is
 * followed until its node runs (done) or fails; a synchronous one is done once the cloud made the node.
 * Rows, not memory, so a job outlives a restart and any copy of the service can carry it on; the
 * poller's claim (`claim_owner`, `claim_until`) makes one copy at a time work on it.
 *
 * Every row is also the service's record of who holds which node of which size (API.md 13): from
 * `created_at` until `stopped_at` the node counts against its owner's quota and in their usage.
 */
@Entity('vm_jobs')
@Index('IDX_vm_jobs_next_poll_at', ['nextPollAt'])
@Index('IDX_vm_jobs_owner_stopped', ['ownerId', 'stoppedAt'])
@Index('IDX_vm_jobs_cloud_node', ['cloud', 'nodeId'])
@Index('IDX_vm_jobs_created_at', ['createdAt'])
@Index('IDX_vm_jobs_stopped_at', ['stoppedAt', 'createdAt'])
export class VmJobEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ type: 'varchar', length: 64 })
  cloud!: string;

  /** The user who asked; only they (and admins) see the job. */
  @Column({ name: 'owner_id', type: 'integer' })
  ownerId!: number;

  /** The owner's username when the node was started (usage names users, who may be gone since). */
  @Column({ name: 'owner_name', type: 'varchar', length: 256, default: '' })
  ownerName!: string;

  @Column({ type: 'varchar', length: 16 })
  state!: JobState;

  /** The size's virtual CPUs and RAM (MiB) when the node was started. */
  @Column({ type: 'integer', default: 0 })
  vcpus!: number;

  @Column({ name: 'ram_mib', type: 'integer', default: 0 })
  ramMib!: number;

  /** When the service stopped the node, or the start failed without one; NULL while it is held. */
  @Column({ name: 'stopped_at', type: 'datetime', nullable: true })
  stoppedAt!: Date | null;

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
