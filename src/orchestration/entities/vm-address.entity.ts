import { Column, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';

/**
 * A public address the service attached to a node (API.md 13), so that stopping the node frees it.
 * The row is made before the cloud is asked (`address` NULL until it answers): the unique constraint
 * lets one of two simultaneous attaches through, whichever copy of the service receives them.
 */
@Entity('vm_addresses')
@Unique('UQ_vm_addresses_node', ['cloud', 'nodeId'])
export class VmAddressEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: 64 })
  cloud!: string;

  @Column({ name: 'node_id', type: 'varchar', length: 255 })
  nodeId!: string;

  @Column({ type: 'varchar', length: 64, nullable: true })
  address!: string | null;

  @Column({ name: 'created_at', type: 'datetime' })
  createdAt!: Date;
}
