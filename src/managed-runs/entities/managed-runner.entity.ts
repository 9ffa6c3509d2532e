import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A runner process as it last reported itself: its executor and the engines it found (GET /executors). */
@Entity('managed_runners')
@Index('IDX_managed_runners_seen', ['seenAt'])
export class ManagedRunnerEntity {
  /** The runner's own id (its claim owner). */
  @PrimaryColumn({ type: 'varchar', length: 64 })
  id!: string;

  @Column({ type: 'varchar', length: 64 })
  executor!: string;

  /** JSON: `[{engine, version}]`. */
  @Column({ type: 'text' })
  engines!: string;

  @Column({ name: 'seen_at', type: 'datetime' })
  seenAt!: Date;
}
