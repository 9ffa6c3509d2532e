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
import { RegistryEntity } from './registry.entity.js';

/** An access token issued to a registry's client (`POST /oauth2/token`): kept as a keyed hash only. */
@Entity('registry_tokens')
@Unique('UQ_registry_tokens_hash', ['tokenHash'])
@Index('IDX_registry_tokens_registry', ['registryId'])
@Index('IDX_registry_tokens_expiry', ['expiresAt'])
export class RegistryTokenEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'registry_id', type: 'integer' })
  registryId!: number;

  @ManyToOne(() => RegistryEntity, { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'registry_id', foreignKeyConstraintName: 'FK_registry_tokens_registry' })
  registry?: Relation<RegistryEntity>;

  @Column({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash!: string;

  /** The granted scopes, space-separated as OAuth2 writes them. */
  @Column({ type: 'varchar', length: 512 })
  scopes!: string;

  @Column({ name: 'created_at', type: 'datetime', default: () => 'CURRENT_TIMESTAMP' })
  createdAt!: Date;

  @Column({ name: 'expires_at', type: 'datetime' })
  expiresAt!: Date;
}
