import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { DummyCloudEntity } from './dummy-cloud.entity.js';

/** An SSH key pair of a dummy cloud: kept in the database like its nodes (API.md 13). */
@Entity('dummy_key_pairs')
export class DummyKeyPairEntity {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  cloud!: string;

  @PrimaryColumn({ type: 'varchar', length: 255 })
  name!: string;

  @ManyToOne(() => DummyCloudEntity, { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'cloud', foreignKeyConstraintName: 'FK_dummy_key_pairs_cloud' })
  owner?: Relation<DummyCloudEntity>;

  /** OpenSSH's `SHA256:…`. */
  @Column({ type: 'varchar', length: 128 })
  fingerprint!: string;

  @Column({ name: 'public_key', type: 'text' })
  publicKey!: string;
}
