import { Column, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';

/**
 * One assignment of a node to a user and an application, kept after its release as history.
 * `active_node_id` holds the node id while the assignment is active and NULL once released: the
 * unique constraint on (cloud, active_node_id) makes "one active assignment per node" hold even when
 * two requests or two copies of the service race (NULLs never collide).
 */
@Entity('vm_assignments')
@Unique('UQ_vm_assignments_active_node', ['cloud', 'activeNodeId'])
export class VmAssignmentEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: 64 })
  cloud!: string;

  @Column({ name: 'node_id', type: 'varchar', length: 255 })
  nodeId!: string;

  @Column({ name: 'active_node_id', type: 'varchar', length: 255, nullable: true })
  activeNodeId!: string | null;

  /** The node's name when it was assigned. */
  @Column({ type: 'varchar', length: 255 })
  hostname!: string;

  @Column({ type: 'varchar', length: 255 })
  username!: string;

  @Column({ name: 'vm_type', type: 'varchar', length: 255 })
  vmType!: string;

  @Column({ name: 'assigned_at', type: 'datetime' })
  assignedAt!: Date;

  @Column({ name: 'released_at', type: 'datetime', nullable: true })
  releasedAt!: Date | null;
}
