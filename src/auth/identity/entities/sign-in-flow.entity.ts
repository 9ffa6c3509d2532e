import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { UserEntity } from '../../entities/user.entity.js';

/**
 * A sign-in under way, from `/oauth2/login/{provider}` to `/oauth2/authorized/{provider}`: kept
 * by the hash of its state (the state itself is only in the browser's cookie and the provider's
 * redirect), taken once, and gone after ten minutes.
 */
@Entity('sign_in_flows')
@Index('IDX_sign_in_flows_expiry', ['expiresAt'])
@Index('IDX_sign_in_flows_link_user', ['linkUserId'])
export class SignInFlowEntity {
  @PrimaryColumn({ name: 'state_hash', type: 'varchar', length: 64 })
  stateHash!: string;

  @Column({ type: 'varchar', length: 32 })
  provider!: string;

  @Column({ name: 'code_verifier', type: 'varchar', length: 128 })
  codeVerifier!: string;

  @Column({ type: 'varchar', length: 128 })
  nonce!: string;

  @Column({ type: 'varchar', length: 512 })
  next!: string;

  /** The signed-in account the identity is to be linked to; null for a sign-in. */
  @Column({ name: 'link_user_id', type: 'integer', nullable: true })
  linkUserId!: number | null;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'link_user_id', foreignKeyConstraintName: 'FK_sign_in_flows_link_user' })
  linkUser?: Relation<UserEntity>;

  @Column({ name: 'expires_at', type: 'datetime' })
  expiresAt!: Date;
}
