import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, IsNull, LessThan, Not, Repository, type EntityManager } from 'typeorm';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { isForeignKeyViolation, isUniqueViolation } from '../common/errors/unique-violation.js';
import { RegistryIdentityEntity } from './entities/registry-identity.entity.js';
import { RegistryTokenEntity } from './entities/registry-token.entity.js';
import { RegistryEntity } from './entities/registry.entity.js';

export interface NewRegistry {
  uuid: string;
  name: string;
  type: string;
  uri: string;
  clientId: string;
  clientSecretHash: string;
  userId: number;
}

export interface NewRegistryToken {
  registryId: number;
  tokenHash: string;
  scopes: string;
  expiresAt: Date;
}

/** The accounts of a registry: its own, and those made for its users (by the registry's id of each). */
export interface RegistryAccounts {
  own: number;
  users: { userId: number; externalId: string }[];
}

/** All SQL of the registries feature. */
@Injectable()
export class RegistriesRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(RegistryEntity) private readonly registries: Repository<RegistryEntity>,
    @InjectRepository(RegistryTokenEntity) private readonly tokens: Repository<RegistryTokenEntity>,
    @InjectRepository(RegistryIdentityEntity) private readonly identities: Repository<RegistryIdentityEntity>,
    private readonly clock: Clock,
  ) {}

  /** Throws DomainError conflict when the name is taken. */
  async create(registry: NewRegistry): Promise<RegistryEntity> {
    try {
      return await this.registries.save(
        this.registries.create({ ...registry, createdAt: new Date(this.clock.nowMs()) }),
      );
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new DomainError('conflict', `A registry named '${registry.name}' exists`);
      }
      throw error;
    }
  }

  /** Every registry, oldest first: a handful, read whole. */
  list(): Promise<RegistryEntity[]> {
    return this.registries.find({ order: { id: 'ASC' } });
  }

  findByUuid(uuid: string): Promise<RegistryEntity | null> {
    return this.registries.findOneBy({ uuid });
  }

  findByName(name: string): Promise<RegistryEntity | null> {
    return this.registries.findOneBy({ name });
  }

  findById(id: number): Promise<RegistryEntity | null> {
    return this.registries.findOneBy({ id });
  }

  findByClientId(clientId: string): Promise<RegistryEntity | null> {
    return this.registries.findOneBy({ clientId });
  }

  /**
   * Deletes the registry in one transaction with what `alongside` does in it, given the accounts
   * the registry had (its own, then those made for its users): its tokens and identities go by
   * cascade. False, with nothing done, when it was gone.
   */
  async remove(
    id: number,
    alongside: (tx: EntityManager, accounts: RegistryAccounts) => Promise<void>,
  ): Promise<boolean> {
    return this.dataSource.transaction(async (tx) => {
      const registry = await tx.findOneBy(RegistryEntity, { id });
      if (!registry) {
        return false;
      }
      const made = await tx.find(RegistryIdentityEntity, {
        select: { userId: true, externalId: true },
        where: { registryId: id, externalId: Not(IsNull()) },
        order: { id: 'ASC' },
      });
      if (((await tx.delete(RegistryEntity, { id })).affected ?? 0) === 0) {
        return false;
      }
      await alongside(tx, {
        own: registry.userId,
        users: made.flatMap(({ userId, externalId }) =>
          externalId === null ? [] : [{ userId, externalId }],
        ),
      });
      return true;
    });
  }

  /** Stores an issued token, and drops the tokens that expired (of any registry: they are few). */
  async saveToken(token: NewRegistryToken): Promise<void> {
    const now = new Date(this.clock.nowMs());
    await this.tokens.insert({ ...token, createdAt: now });
    await this.tokens.delete({ expiresAt: LessThan(now) });
  }

  /** A token by its hash, with its registry and the registry's account (one indexed read per request that carries one). */
  findToken(tokenHash: string): Promise<RegistryTokenEntity | null> {
    return this.tokens.findOne({ where: { tokenHash }, relations: { registry: { user: true } } });
  }

  /** The identity of one of the registry's users, by the registry's id of them, with its local user. */
  findIdentity(registryId: number, externalId: string): Promise<RegistryIdentityEntity | null> {
    return this.identities.findOne({ where: { registryId, externalId }, relations: { user: true } });
  }

  /** A user's link to a registry (API.md 10.1), if they made one. */
  findLink(registryId: number, userId: number): Promise<RegistryIdentityEntity | null> {
    return this.identities.findOneBy({ registryId, userId });
  }

  /**
   * Records the identity made for one of the registry's users. False when another request recorded
   * one for the same user meanwhile (the caller reads that one).
   */
  async addIdentity(registryId: number, userId: number, externalId: string): Promise<boolean> {
    try {
      await this.identities.insert({
        registryId,
        userId,
        externalId,
        tokenSealed: null,
        createdAt: new Date(this.clock.nowMs()),
      });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) {
        return false;
      }
      // The registry (or the account just made) deleted since the request began.
      if (isForeignKeyViolation(error)) {
        throw new DomainError('not_found', 'The registry was deleted meanwhile');
      }
      throw error;
    }
  }

  /**
   * Records that the registry's user `externalId` is the account `userId` (the person signed in
   * with the SEEK installation that is this registry): on the account's link to the registry when
   * it has one without an id, else as a new identity. Nothing when either is known already.
   */
  async adoptPerson(registryId: number, userId: number, externalId: string): Promise<void> {
    const link = await this.findLink(registryId, userId);
    if (!link) {
      await this.addIdentity(registryId, userId, externalId);
      return;
    }
    if (link.externalId !== null) {
      return;
    }
    try {
      await this.identities.update({ id: link.id, externalId: IsNull() }, { externalId });
    } catch (error) {
      // The registry knows that person as another account already: theirs stays.
      if (!isUniqueViolation(error)) {
        throw error;
      }
    }
  }

  /** Links a user's account to a registry with their sealed personal token, or replaces the token. */
  async link(registryId: number, userId: number, tokenSealed: string): Promise<void> {
    await this.identities.upsert(
      { registryId, userId, tokenSealed, createdAt: new Date(this.clock.nowMs()) },
      { conflictPaths: ['registryId', 'userId'] },
    );
  }

  /** The registry's identities with their users, oldest first (`GET /registries/current/users`). */
  identitiesOf(registryId: number): Promise<RegistryIdentityEntity[]> {
    return this.identities.find({
      where: { registryId },
      relations: { user: true },
      order: { id: 'ASC' },
    });
  }
}
