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

const uriList = {
  to: (uris: string[]): string => JSON.stringify(uris),
  from: (stored: string): string[] => JSON.parse(stored) as string[],
};

/**
 * An application a user registered (API.md 15): its public `client_id`, where it may be sent back
 * to (compared as exact strings), and for a confidential one a keyed hash of its secret.
 */
@Entity('oauth_clients')
@Unique('UQ_oauth_clients_client_id', ['clientId'])
@Index('IDX_oauth_clients_user', ['userId'])
export class OAuthClientEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'client_id', type: 'varchar', length: 64 })
  clientId!: string;

  @Column({ name: 'user_id', type: 'integer' })
  userId!: number;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_oauth_clients_user' })
  user?: Relation<UserEntity>;

  @Column({ type: 'varchar', length: 128 })
  name!: string;

  @Column({ name: 'redirect_uris', type: 'text', transformer: uriList })
  redirectUris!: string[];

  @Column({ type: 'boolean' })
  confidential!: boolean;

  @Column({ name: 'client_secret_hash', type: 'varchar', length: 64, nullable: true })
  clientSecretHash!: string | null;

  @Column({ name: 'created_at', type: 'datetime', default: () => 'CURRENT_TIMESTAMP' })
  createdAt!: Date;
}
