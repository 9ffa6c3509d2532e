import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { UserEntity } from '../../auth/entities/user.entity.js';

/**
 * The quota of a user who has one of their own (API.md 13); a user without a row has the defaults of
 * QUOTA_MAX_*. NULL is no limit. The row goes with the user.
 */
@Entity('user_quotas')
export class UserQuotaEntity {
  @PrimaryColumn({ name: 'user_id', type: 'integer' })
  userId!: number;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_user_quotas_user' })
  user?: Relation<UserEntity>;

  @Column({ name: 'max_nodes', type: 'integer', nullable: true })
  maxNodes!: number | null;

  @Column({ name: 'max_vcpus', type: 'integer', nullable: true })
  maxVcpus!: number | null;

  @Column({ name: 'max_ram_mib', type: 'integer', nullable: true })
  maxRamMib!: number | null;
}
