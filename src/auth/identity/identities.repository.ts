import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, LessThan, Not, Repository } from 'typeorm';
import { Clock } from '../../common/clock.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../common/errors/unique-violation.js';
import { removeExpiredBatch } from '../../database/remove-expired.js';
import { RemovesExpiredRows, type ExpiringRows } from '../expiring-rows.js';
import { UserEntity } from '../entities/user.entity.js';
import { NO_PASSWORD } from '../password-hasher.js';
import { IdentityEntity } from './entities/identity.entity.js';
import { SignInFlowEntity } from './entities/sign-in-flow.entity.js';

export interface NewIdentity {
  provider: string;
  subject: string;
  username: string | null;
  email: string | null;
}

/** A new account for an identity, or the account another request made for the same identity meanwhile. */
export type MadeAccount = { kind: 'made'; user: UserEntity } | { kind: 'taken'; identity: IdentityEntity };

/**
 * Identities and sign-ins under way (API.md 15): all their SQL. Uniqueness lives in the schema
 * (one account per provider and subject), so two first sign-ins of one person at once end with one
 * account.
 */
@RemovesExpiredRows()
@Injectable()
export class IdentitiesRepository implements ExpiringRows {
  readonly expiringRows = 'sign-in states';

  constructor(
    @InjectRepository(IdentityEntity) private readonly identities: Repository<IdentityEntity>,
    @InjectRepository(SignInFlowEntity) private readonly flows: Repository<SignInFlowEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  /** The identity a provider's subject is, with its account (the unique key's index). */
  findBySubject(provider: string, subject: string): Promise<IdentityEntity | null> {
    return this.identities.findOne({ where: { provider, subject }, relations: { user: true } });
  }

  /** An account's identities, oldest link first (the user index). */
  listOf(userId: number): Promise<IdentityEntity[]> {
    return this.identities.find({ where: { userId }, order: { linkedAt: 'ASC', id: 'ASC' } });
  }

  /** Records a sign-in with the identity, and what the provider now calls the person. */
  async touch(id: number, seen: Pick<NewIdentity, 'username' | 'email'>): Promise<void> {
    await this.identities.update({ id }, { ...seen, lastUsedAt: this.now() });
  }

  /** Links an identity to an account; false when the identity is linked already (to any account). */
  async add(userId: number, identity: NewIdentity): Promise<boolean> {
    const now = this.now();
    try {
      await this.identities.insert({ ...identity, userId, linkedAt: now, lastUsedAt: now });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) {
        return false;
      }
      throw error;
    }
  }

  /**
   * Makes an account without a password (role `user`) with the identity, in one transaction, under
   * the first free name of `usernames`. When the identity was linked meanwhile (a concurrent first
   * sign-in), nothing is made and that identity is returned.
   */
  async createAccount(usernames: Iterable<string>, identity: NewIdentity): Promise<MadeAccount> {
    for (const username of usernames) {
      const now = this.now();
      try {
        const user = await this.dataSource.transaction(async (tx) => {
          const made = await tx.save(
            tx.create(UserEntity, {
              username,
              passwordHash: NO_PASSWORD,
              roles: ['user'],
              active: true,
              createdAt: now,
              updatedAt: now,
            }),
          );
          await tx.insert(IdentityEntity, { ...identity, userId: made.id, linkedAt: now, lastUsedAt: now });
          return made;
        });
        return { kind: 'made', user };
      } catch (error) {
        if (!isUniqueViolation(error)) {
          throw error;
        }
        const taken = await this.findBySubject(identity.provider, identity.subject);
        if (taken) {
          return { kind: 'taken', identity: taken };
        }
        // The name was taken: the next one.
      }
    }
    throw new Error('no free username for a new account');
  }

  /**
   * Unlinks the account's identities of one provider, unless that leaves the account without a way
   * to sign in (no password, no other identity). The account's row is written first: on MariaDB its
   * lock makes two unlinks of one account take turns (SQLite runs one write at a time), so they
   * cannot both leave the other as the last way in. Answers how many went, or 'last' (none did).
   */
  async unlink(userId: number, provider: string): Promise<number | 'last'> {
    return this.dataSource.transaction(async (tx) => {
      await tx.update(UserEntity, { id: userId }, { updatedAt: this.now() });
      const user = await tx.findOneBy(UserEntity, { id: userId });
      const others = await tx.countBy(IdentityEntity, { userId, provider: Not(provider) });
      if (!user || (user.passwordHash === NO_PASSWORD && others === 0)) {
        return 'last';
      }
      const result = await tx.delete(IdentityEntity, { userId, provider });
      return result.affected ?? 0;
    });
  }

  /** Stores a sign-in under way, and drops those that expired. */
  async saveFlow(flow: SignInFlowEntity): Promise<void> {
    try {
      await this.flows.insert(flow);
    } catch (error) {
      // The account to link to was deleted since the request began.
      if (isForeignKeyViolation(error)) {
        return;
      }
      throw error;
    }
    await this.flows.delete({ expiresAt: LessThan(this.now()) });
  }

  /**
   * Takes a sign-in under way by its state's hash: once only, whichever copy of the service asks
   * (the delete decides between two takers), and never after it expired.
   */
  async takeFlow(stateHash: string): Promise<SignInFlowEntity | null> {
    const flow = await this.flows.findOneBy({ stateHash });
    if (!flow) {
      return null;
    }
    const taken = await this.flows.delete({ stateHash });
    if ((taken.affected ?? 0) !== 1 || flow.expiresAt.getTime() <= this.clock.nowMs()) {
      return null;
    }
    return flow;
  }

  /** Sign-ins never finished (the browser left, the provider failed): their states expired. */
  removeExpired(now: Date, batch: number): Promise<number> {
    return removeExpiredBatch(this.flows, 'state_hash', now, batch);
  }

  private now(): Date {
    return new Date(this.clock.nowMs());
  }
}
