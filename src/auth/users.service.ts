import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { DomainError } from '../common/errors/domain-error.js';
import { AuthService } from './auth.service.js';
import type { UserEntity } from './entities/user.entity.js';
import { NO_PASSWORD, PasswordHasher } from './password-hasher.js';
import type { Role } from './roles.js';
import { UsersRepository, type RetiredAccount } from './users.repository.js';

export interface UserChanges {
  password?: string;
  roles?: Role[];
  active?: boolean;
}

@Injectable()
export class UsersService {
  constructor(
    private readonly repo: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly auth: AuthService,
  ) {}

  count(): Promise<number> {
    return this.repo.count();
  }

  countActiveAdmins(): Promise<number> {
    return this.repo.countActiveAdmins();
  }

  findByUsername(username: string): Promise<UserEntity | null> {
    return this.repo.findByUsername(username);
  }

  /** `password` undefined: an account without one (see NO_PASSWORD), signed in to by other means. */
  async create(
    username: string,
    password: string | undefined,
    roles: Role[] = ['user'],
  ): Promise<UserEntity> {
    return this.repo.create({
      username,
      passwordHash: password === undefined ? NO_PASSWORD : await this.hasher.hash(password),
      roles: unique(roles),
    });
  }

  /** Deletes an account made for something that then failed (a registry that could not be stored). */
  async discard(id: number): Promise<void> {
    await this.repo.remove(id);
  }

  /**
   * Renames and disables the accounts of something being deleted (a registry's), inside its
   * transaction: their workflows stay theirs, nobody acts as them any more, and their names are
   * free again. The caller calls `forget` once the transaction committed.
   */
  retire(tx: EntityManager, accounts: readonly RetiredAccount[]): Promise<void> {
    return this.repo.retire(tx, accounts);
  }

  /** Forgets what this process cached about accounts changed outside this service. */
  forget(ids: readonly number[]): void {
    for (const id of ids) {
      this.auth.forget(id);
    }
  }

  list(): Promise<UserEntity[]> {
    return this.repo.list();
  }

  async get(id: number): Promise<UserEntity> {
    const user = await this.repo.findById(id);
    if (!user) {
      throw new DomainError('not_found', `No user ${id}`);
    }
    return user;
  }

  /** `actingUserId` undefined: the operator at the console (CLI), who has no account to lock out. */
  async update(id: number, changes: UserChanges, actingUserId?: number): Promise<UserEntity> {
    const user = await this.get(id);
    if (
      id === actingUserId &&
      (changes.active === false || (changes.roles && !changes.roles.includes('admin')))
    ) {
      throw new DomainError('conflict', 'An admin cannot disable or demote their own account');
    }
    if (changes.password !== undefined) {
      user.passwordHash = await this.hasher.hash(changes.password);
    }
    if (changes.roles !== undefined) {
      user.roles = unique(changes.roles);
    }
    if (changes.active !== undefined) {
      user.active = changes.active;
    }
    const saved = await this.repo.update(user);
    this.auth.forget(id);
    return saved;
  }

  async remove(id: number, actingUserId: number): Promise<void> {
    if (id === actingUserId) {
      throw new DomainError('conflict', 'An admin cannot delete their own account');
    }
    if (!(await this.repo.remove(id))) {
      throw new DomainError('not_found', `No user ${id}`);
    }
    this.auth.forget(id);
  }
}

function unique(roles: Role[]): Role[] {
  return [...new Set(roles)];
}
