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
import { UserEntity } from './user.entity.js';

/**
 * An API key of a user (API.md 7.3). Only its prefix (shown in listings, the lookup key) and a
 * keyed hash of the whole key are kept; the key itself is shown once, when it is made.
 */
@Entity('api_keys')
@Unique('UQ_api_keys_prefix', ['prefix'])
@Index('IDX_api_keys_user', ['userId'])
export class ApiKeyEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'user_id', type: 'integer' })
  userId!: number;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_api_keys_user' })
  user?: Relation<UserEntity>;

  @Column({ type: 'varchar', length: 128 })
  name!: string;

  @Column({ type: 'varchar', length: 16 })
  prefix!: string;

  /** Hex HMAC-SHA256 of the whole key (see api-key-secrets.ts). */
  @Column({ name: 'key_hash', type: 'varchar', length: 64 })
  keyHash!: string;

  @Column({ name: 'created_at', type: 'datetime', default: () => 'CURRENT_TIMESTAMP' })
  createdAt!: Date;

  @Column({ name: 'expires_at', type: 'datetime', nullable: true })
  expiresAt!: Date | null;
}
