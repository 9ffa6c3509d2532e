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
import { OAuthGrantEntity } from './oauth-grant.entity.js';

export type OAuthTokenKind = 'access' | 'refresh';

/** An access or refresh token of a grant: kept as a keyed hash only. */
@Entity('oauth_tokens')
@Unique('UQ_oauth_tokens_hash', ['tokenHash'])
@Index('IDX_oauth_tokens_grant', ['grantId'])
@Index('IDX_oauth_tokens_expiry', ['expiresAt'])
export class OAuthTokenEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'grant_id', type: 'integer' })
  grantId!: number;

  @ManyToOne(() => OAuthGrantEntity, { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'grant_id', foreignKeyConstraintName: 'FK_oauth_tokens_grant' })
  grant?: Relation<OAuthGrantEntity>;

  @Column({ type: 'varchar', length: 8 })
  kind!: OAuthTokenKind;

  @Column({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash!: string;

  /** What the token may do, space-separated: the grant's scopes, or fewer asked for at a refresh. */
  @Column({ type: 'varchar', length: 512 })
  scopes!: string;

  @Column({ name: 'created_at', type: 'datetime', default: () => 'CURRENT_TIMESTAMP' })
  createdAt!: Date;

  @Column({ name: 'expires_at', type: 'datetime' })
  expiresAt!: Date;

  /** When a refresh token was spent (rotated); a second use revokes the grant. */
  @Column({ name: 'used_at', type: 'datetime', nullable: true })
  usedAt!: Date | null;
}
