import {
  Column,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  type Relation,
} from 'typeorm';
import { UserEntity } from '../../auth/entities/user.entity.js';
import { REGISTRY_COLUMNS } from '../registry-columns.js';

/**
 * A workflow registry (API.md 10.1) and its OAuth2 client: the client id is shown, the secret
 * only once, when the registry is made (a keyed hash of it is kept). `userId` is the registry's
 * own account: what it registers without naming one of its users is owned by it.
 */
@Entity('registries')
@Unique('UQ_registries_uuid', ['uuid'])
@Unique('UQ_registries_name', ['name'])
@Unique('UQ_registries_client', ['clientId'])
@Unique('UQ_registries_user', ['userId'])
export class RegistryEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: 36 })
  uuid!: string;

  @Column({ type: 'varchar', length: REGISTRY_COLUMNS.name })
  name!: string;

  @Column({ type: 'varchar', length: 16 })
  type!: string;

  @Column({ type: 'varchar', length: REGISTRY_COLUMNS.uri })
  uri!: string;

  @Column({ name: 'client_id', type: 'varchar', length: 64 })
  clientId!: string;

  /** Hex HMAC-SHA256 of the client secret (a random 256-bit value: see ApiKeyHasher). */
  @Column({ name: 'client_secret_hash', type: 'varchar', length: 64 })
  clientSecretHash!: string;

  @Column({ name: 'user_id', type: 'integer' })
  userId!: number;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_registries_user' })
  user?: Relation<UserEntity>;

  @Column({ name: 'created_at', type: 'datetime', default: () => 'CURRENT_TIMESTAMP' })
  createdAt!: Date;
}
