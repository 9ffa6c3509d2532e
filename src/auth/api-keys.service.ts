import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ApiKeyHasher, generateApiKey, prefixOf } from './api-key-secrets.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import type { AuthUser } from './auth-user.js';
import type { ApiKeyEntity } from './entities/api-key.entity.js';

/** Keys one user may hold at once: enough for every script and machine, not a table anyone can fill. */
export const MAX_API_KEYS_PER_USER = 100;
/** MariaDB's DATETIME ends with year 9999. */
const LATEST_EXPIRY_MS = Date.UTC(9999, 11, 31, 23, 59, 59);
/** One message for every refused key (unknown, revoked, expired, owner disabled): nothing to tell them apart by. */
const NOT_VALID = 'The API key is not valid';
const CREATE_ATTEMPTS = 3;

export interface CreatedApiKey {
  row: ApiKeyEntity;
  /** The key itself: shown once, never stored. */
  key: string;
}

/**
 * API keys (API.md 7.3): made, listed and revoked by their owner; each request carrying one is
 * checked against the database, so a revocation, an expiry or a disabled owner stops it at once.
 */
@Injectable()
export class ApiKeysService {
  constructor(
    private readonly repo: ApiKeysRepository,
    private readonly hasher: ApiKeyHasher,
    private readonly clock: Clock,
  ) {}

  /**
   * Makes a key for the caller. Throws forbidden when the caller came with an API key (a leaked
   * key must not mint others that outlive its revocation), invalid_input for an expiry not in the
   * future, conflict past MAX_API_KEYS_PER_USER.
   */
  async create(caller: AuthUser, name: string, expiresAt: Date | undefined): Promise<CreatedApiKey> {
    if (caller.via === 'apikey') {
      throw new DomainError(
        'forbidden',
        'API keys are made with a token from POST /api/v1/auth, not with another API key',
      );
    }
    const now = this.clock.nowMs();
    // Whole seconds, as MariaDB's DATETIME keeps them: what is shown is what is stored.
    const expiry = expiresAt === undefined ? null : new Date(Math.floor(expiresAt.getTime() / 1000) * 1000);
    if (expiry !== null && (expiry.getTime() <= now || expiry.getTime() > LATEST_EXPIRY_MS)) {
      throw new DomainError('invalid_input', 'expires_at must be in the future (and before the year 10000)', [
        { field: 'expires_at', message: 'expires_at must be in the future' },
      ]);
    }
    if ((await this.repo.countOf(caller.id)) >= MAX_API_KEYS_PER_USER) {
      throw new DomainError(
        'conflict',
        `A user holds at most ${MAX_API_KEYS_PER_USER} API keys; revoke one first`,
      );
    }
    for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
      const { key, prefix } = generateApiKey();
      const row = await this.repo.create({
        userId: caller.id,
        name,
        prefix,
        keyHash: this.hasher.hash(key),
        createdAt: new Date(Math.floor(now / 1000) * 1000),
        expiresAt: expiry,
      });
      if (row) {
        return { row, key };
      }
    }
    // 48 random bits of prefix colliding three times running is a broken random source, not bad luck.
    throw new Error('could not find a free API key prefix');
  }

  list(userId: number): Promise<ApiKeyEntity[]> {
    return this.repo.listOf(userId);
  }

  /** Revokes one of the user's keys; not_found when the user has no key with this id. */
  async revoke(userId: number, id: number): Promise<void> {
    if (!(await this.repo.remove(userId, id))) {
      throw new DomainError('not_found', `No API key ${id}`);
    }
  }

  /**
   * The caller a presented key stands for, with its owner's current roles. Throws unauthorized,
   * with one message whatever the reason, for a key that is unknown, revoked, expired, or whose
   * owner is disabled.
   */
  async principal(key: string): Promise<AuthUser> {
    const prefix = prefixOf(key);
    const row = prefix === undefined ? null : await this.repo.findWithOwner(prefix);
    // Hashed and compared even without a row, so that an unknown prefix does not answer faster.
    const matches = this.hasher.matches(key, row?.keyHash ?? '0'.repeat(64));
    const user = row?.user;
    if (!row || !user || !matches || !user.active) {
      throw new DomainError('unauthorized', NOT_VALID);
    }
    if (row.expiresAt !== null && row.expiresAt.getTime() <= this.clock.nowMs()) {
      throw new DomainError('unauthorized', NOT_VALID);
    }
    return {
      id: user.id,
      username: user.username,
      roles: user.roles,
      jti: `apikey:${row.id}`,
      exp: row.expiresAt === null ? 0 : Math.floor(row.expiresAt.getTime() / 1000),
      via: 'apikey',
    };
  }
}
