import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LessThan, Repository, type EntityManager } from 'typeorm';
import { DomainError } from '../common/errors/domain-error.js';
import { isForeignKeyViolation, isUniqueViolation } from '../common/errors/unique-violation.js';
import { RevokedTokenEntity } from './entities/revoked-token.entity.js';
import { UserEntity } from './entities/user.entity.js';
import type { Role } from './roles.js';
import { Clock } from '../common/clock.js';

export interface NewUser {
  username: string;
  passwordHash: string;
  roles: Role[];
}

/** An account to rename and disable, with its new name. */
export interface RetiredAccount {
  id: number;
  username: string;
}

@Injectable()
export class UsersRepository {
  constructor(
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
    @InjectRepository(RevokedTokenEntity) private readonly revoked: Repository<RevokedTokenEntity>,
    private readonly clock: Clock,
  ) {}

  findById(id: number): Promise<UserEntity | null> {
    return this.users.findOneBy({ id });
  }

  findByUsername(username: string): Promise<UserEntity | null> {
    return this.users.findOneBy({ username });
  }

  list(): Promise<UserEntity[]> {
    return this.users.find({ order: { id: 'ASC' } });
  }

  count(): Promise<number> {
    return this.users.count();
  }

  /** Start-up only, on a table of people: a scan is fine, and roles (a joined list) has no index to use. */
  countActiveAdmins(): Promise<number> {
    return this.users
      .createQueryBuilder('user')
      .where('user.active = :active', { active: true })
      .andWhere('user.roles LIKE :admin', { admin: '%admin%' })
      .getCount();
  }

  async create(user: NewUser): Promise<UserEntity> {
    const now = new Date(this.clock.nowMs());
    try {
      return await this.users.save(
        this.users.create({ ...user, active: true, createdAt: now, updatedAt: now }),
      );
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new DomainError('conflict', `The username '${user.username}' is taken`);
      }
      throw error;
    }
  }

  async update(user: UserEntity): Promise<UserEntity> {
    user.updatedAt = new Date(this.clock.nowMs());
    return this.users.save(user);
  }

  async remove(id: number): Promise<boolean> {
    try {
      const result = await this.users.delete({ id });
      return (result.affected ?? 0) > 0;
    } catch (error) {
      if (isForeignKeyViolation(error)) {
        throw new DomainError(
          'conflict',
          'The user still owns workflows; disable the account or delete the workflows first',
        );
      }
      throw error;
    }
  }

  /**
   * Renames and disables accounts inside the caller's transaction (their rows stay: they own
   * workflows). Throws DomainError conflict when a new name is taken.
   */
  async retire(tx: EntityManager, accounts: readonly RetiredAccount[]): Promise<void> {
    const updatedAt = new Date(this.clock.nowMs());
    for (const { id, username } of accounts) {
      try {
        await tx.update(UserEntity, { id }, { username, active: false, updatedAt });
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new DomainError('conflict', `The username '${username}' is taken`);
        }
        throw error;
      }
    }
  }

  async revoke(jti: string, expiresAt: Date): Promise<void> {
    // Idempotent: logging out twice with one token is not an error.
    await this.revoked.upsert({ jti, expiresAt }, ['jti']);
    await this.revoked.delete({ expiresAt: LessThan(new Date(this.clock.nowMs())) });
  }

  async isRevoked(jti: string): Promise<boolean> {
    return this.revoked.existsBy({ jti });
  }
}
