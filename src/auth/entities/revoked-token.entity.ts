import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A logged-out token's id, kept until the token would have expired anyway. */
@Entity('revoked_tokens')
export class RevokedTokenEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  jti!: string;

  @Index('IDX_revoked_tokens_expires_at')
  @Column({ name: 'expires_at', type: 'datetime' })
  expiresAt!: Date;
}
