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
import { RegistryEntity } from './registry.entity.js';

/**
 * A local user as a registry knows them (API.md 10.1): either made for one of the registry's users
 * on first use (`externalId` is the registry's id of that user), or a user of ours who linked their
 * account on the registry (`tokenSealed` holds their personal registry token, AES-GCM sealed).
 */
@Entity('registry_identities')
@Unique('UQ_registry_identities_user', ['registryId', 'userId'])
@Unique('UQ_registry_identities_external', ['registryId', 'externalId'])
@Index('IDX_registry_identities_user', ['userId'])
export class RegistryIdentityEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'registry_id', type: 'integer' })
  registryId!: number;

  @ManyToOne(() => RegistryEntity, { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'registry_id', foreignKeyConstraintName: 'FK_registry_identities_registry' })
  registry?: Relation<RegistryEntity>;

  @Column({ name: 'user_id', type: 'integer' })
  userId!: number;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_registry_identities_user' })
  user?: Relation<UserEntity>;

  @Column({ name: 'external_id', type: 'varchar', length: 64, nullable: true })
  externalId!: string | null;

  @Column({ name: 'token_sealed', type: 'varchar', length: 1024, nullable: true })
  tokenSealed!: string | null;

  @Column({ name: 'created_at', type: 'datetime', default: () => 'CURRENT_TIMESTAMP' })
  createdAt!: Date;
}
