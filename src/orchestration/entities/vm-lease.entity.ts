import { Column, Entity, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';

/** What happens to an assigned node when its lease runs out. */
export const ON_EXPIRY = ['release', 'poweroff', 'destroy'] as const;
export type OnExpiry = (typeof ON_EXPIRY)[number];

/**
 * The lease of an active assignment: when it ends and what then happens. Kept beside the assignment
 * facility rather than in it, so leases work with the external facility too. `claim_owner` and
 * `claim_until` are the scheduler's database lease: the copy of the service that claimed the expiry
 * carries it out; one that dies leaves the claim to run out, then another copy takes it.
 */
@Entity('vm_leases')
@Unique('UQ_vm_leases_node', ['cloud', 'nodeId'])
@Index('IDX_vm_leases_expires_at', ['expiresAt'])
export class VmLeaseEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: 64 })
  cloud!: string;

  @Column({ name: 'node_id', type: 'varchar', length: 255 })
  nodeId!: string;

  @Column({ name: 'expires_at', type: 'datetime' })
  expiresAt!: Date;

  @Column({ name: 'on_expiry', type: 'varchar', length: 16 })
  onExpiry!: OnExpiry;

  @Column({ name: 'claim_owner', type: 'varchar', length: 64, nullable: true })
  claimOwner!: string | null;

  @Column({ name: 'claim_until', type: 'datetime', nullable: true })
  claimUntil!: Date | null;
}
