import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { DummyCloudEntity } from './dummy-cloud.entity.js';

/** A node of a dummy cloud; the row is deleted when the node is stopped. */
@Entity('dummy_nodes')
export class DummyNodeEntity {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  cloud!: string;

  @PrimaryColumn({ name: 'node_id', type: 'integer' })
  nodeId!: number;

  @ManyToOne(() => DummyCloudEntity, { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'cloud', foreignKeyConstraintName: 'FK_dummy_nodes_cloud' })
  owner?: Relation<DummyCloudEntity>;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  /** Libcloud's number: 0 running or 5 stopped. */
  @Column({ type: 'integer', default: 0 })
  state!: number;

  // JSON text: both databases store it alike, and nothing ever queries inside.
  /** JSON array of strings. */
  @Column({ name: 'public_ips', type: 'varchar', length: 255 })
  publicIps!: string;

  /** JSON object. */
  @Column({ type: 'text' })
  extra!: string;
}
