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
import { UserEntity } from '../../auth/entities/user.entity.js';
import { OAuthClientEntity } from './oauth-client.entity.js';

/**
 * One approval of a user for a client: its authorization code (a hash, single use) with what the
 * code was asked with, then the family of tokens issued from it (see the migration).
 */
@Entity('oauth_grants')
@Unique('UQ_oauth_grants_code', ['codeHash'])
@Index('IDX_oauth_grants_client', ['oauthClientId'])
@Index('IDX_oauth_grants_user', ['userId'])
@Index('IDX_oauth_grants_expiry', ['expiresAt'])
export class OAuthGrantEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'oauth_client_id', type: 'integer' })
  oauthClientId!: number;

  @ManyToOne(() => OAuthClientEntity, { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'oauth_client_id', foreignKeyConstraintName: 'FK_oauth_grants_client' })
  client?: Relation<OAuthClientEntity>;

  @Column({ name: 'user_id', type: 'integer' })
  userId!: number;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_oauth_grants_user' })
  user?: Relation<UserEntity>;

  /** The granted scopes, space-separated as OAuth2 writes them. */
  @Column({ type: 'varchar', length: 512 })
  scopes!: string;

  @Column({ name: 'redirect_uri', type: 'varchar', length: 2048 })
  redirectUri!: string;

  /** Hex HMAC-SHA256 of the authorization code. */
  @Column({ name: 'code_hash', type: 'varchar', length: 64 })
  codeHash!: string;

  /** The PKCE S256 challenge (RFC 7636); null when a confidential client sent none. */
  @Column({ name: 'code_challenge', type: 'varchar', length: 128, nullable: true })
  codeChallenge!: string | null;

  @Column({ name: 'code_used_at', type: 'datetime', nullable: true })
  codeUsedAt!: Date | null;

  @Column({ name: 'created_at', type: 'datetime', default: () => 'CURRENT_TIMESTAMP' })
  createdAt!: Date;

  @Column({ name: 'expires_at', type: 'datetime' })
  expiresAt!: Date;
}
