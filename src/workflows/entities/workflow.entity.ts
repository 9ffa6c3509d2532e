import {
  Column,
  Entity,
  JoinColumn,
  ManyToOne,
  OneToMany,
  PrimaryGeneratedColumn,
  Unique,
  type Relation,
} from 'typeorm';
import { UserEntity } from '../../auth/entities/user.entity.js';
import { WorkflowVersionEntity } from './workflow-version.entity.js';
import { COLUMN_LENGTHS } from '../columns.js';

/**
 * A workflow: a uuid owned by one user. Its latest version is not stored but derived
 * (the most recently registered remaining version), so deleting a version cannot leave
 * a dangling or doubled "latest".
 */
@Entity('workflows')
@Unique('UQ_workflows_uuid', ['uuid'])
export class WorkflowEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: COLUMN_LENGTHS.uuid })
  uuid!: string;

  @Column({ name: 'owner_id', type: 'integer' })
  ownerId!: number;

  @ManyToOne(() => UserEntity, { onDelete: 'RESTRICT', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'owner_id', foreignKeyConstraintName: 'FK_workflows_owner' })
  owner?: Relation<UserEntity>;

  @Column({ name: 'created_at', type: 'datetime', default: () => 'CURRENT_TIMESTAMP' })
  createdAt!: Date;

  @OneToMany(() => WorkflowVersionEntity, (version) => version.workflow)
  versions?: Relation<WorkflowVersionEntity>[];
}
