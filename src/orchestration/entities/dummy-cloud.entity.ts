import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One dummy cloud that has been used at least once. Its row is the cloud's id counter: ids are handed
 * out by incrementing `next_id`, so they are never reused, whatever was destroyed or restarted since.
 */
@Entity('dummy_clouds')
export class DummyCloudEntity {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  name!: string;

  @Column({ name: 'next_id', type: 'integer' })
  nextId!: number;
}
