import {
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  type Relation,
} from 'typeorm';
import { UserEntity } from '../../entities/user.entity.js';

/**
 * An account's identity at a sign-in provider (API.md 15): the provider's subject finds the
 * account, and nothing else does (an e-mail never matches an account). Only what the person is
 * called there is kept, never the provider's tokens.
 */
@Entity('identities')
@Unique('UQ_identities_subject', ['provider', 'subject'])
@Index('IDX_identities_user', ['userId'])
export class IdentityEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: 32 })
  provider!: string;

  @Column({ type: 'varchar', length: 255 })
  subject!: string;

  @Column({ name: 'user_id', type: 'integer' })
  userId!: number;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_identities_user' })
  user?: Relation<UserEntity>;

  @Column({ type: 'varchar', length: 256, nullable: true })
  username!: string | null;

  @Column({ type: 'varchar', length: 320, nullable: true })
  email!: string | null;

  @Column({ name: 'linked_at', type: 'datetime', default: () => 'CURRENT_TIMESTAMP' })
  linkedAt!: Date;

  @Column({ name: 'last_used_at', type: 'datetime', nullable: true })
  lastUsedAt!: Date | null;
}
