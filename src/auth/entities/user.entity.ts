import { Column, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { isRole, type Role } from '../roles.js';

const rolesColumn = {
  to: (roles: Role[]): string => roles.join(','),
  from: (stored: string): Role[] => stored.split(',').filter(isRole),
};

@Entity('users')
@Unique('UQ_users_username', ['username'])
export class UserEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: 256 })
  username!: string;

  @Column({ name: 'password_hash', type: 'varchar', length: 255 })
  passwordHash!: string;

  @Column({ type: 'varchar', length: 64, transformer: rolesColumn })
  roles!: Role[];

  @Column({ type: 'boolean', default: 1 })
  active!: boolean;

  @Column({ name: 'created_at', type: 'datetime', default: () => 'CURRENT_TIMESTAMP' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'datetime', default: () => 'CURRENT_TIMESTAMP' })
  updatedAt!: Date;
}
