import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, IsNull, LessThan, Repository, type EntityManager } from 'typeorm';
import { RemovesExpiredRows, type ExpiringRows } from '../auth/expiring-rows.js';
import { isForeignKeyViolation } from '../common/errors/unique-violation.js';
import { findOneJoined } from '../database/find-one-joined.js';
import { rawDate } from '../database/raw-date.js';
import { removeExpiredBatch } from '../database/remove-expired.js';
import { OAuthClientEntity } from './entities/oauth-client.entity.js';
import { OAuthGrantEntity } from './entities/oauth-grant.entity.js';
import { OAuthTokenEntity, type OAuthTokenKind } from './entities/oauth-token.entity.js';

export interface NewGrant {
  oauthClientId: number;
  userId: number;
  scopes: string;
  redirectUri: string;
  codeHash: string;
  codeChallenge: string | null;
  createdAt: Date;
  expiresAt: Date;
}

export interface NewToken {
  kind: OAuthTokenKind;
  tokenHash: string;
  scopes: string;
  expiresAt: Date;
}

/** One approval a person gave, with its application and when tokens were last issued from it. */
export interface Approval {
  clientId: string;
  clientName: string;
  scopes: string;
  grantedAt: Date;
  lastUsedAt: Date | null;
}

/** The SQL of grants (authorization codes and the token families issued from them) and their tokens. */
@RemovesExpiredRows()
@Injectable()
export class GrantsRepository implements ExpiringRows {
  readonly expiringRows = 'authorization codes, grants and tokens';

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(OAuthGrantEntity) private readonly grants: Repository<OAuthGrantEntity>,
    @InjectRepository(OAuthTokenEntity) private readonly tokens: Repository<OAuthTokenEntity>,
  ) {}

  /** Stores an approval with its code, and drops the grants and tokens that expired (of anyone: they are few). */
  async create(grant: NewGrant): Promise<void> {
    await this.grants.insert(grant);
    await this.dropExpired(grant.createdAt);
  }

  /** The grant of a code (by its hash), with its user: one read of a unique key. */
  findByCode(codeHash: string): Promise<OAuthGrantEntity | null> {
    return findOneJoined(this.grants, { where: { codeHash }, relations: { user: true } });
  }

  /**
   * Spends the grant's code and stores its first tokens, in one transaction: false, with nothing
   * stored, when the code was spent meanwhile (another request, perhaps on another copy, won: the
   * conditional update lets exactly one through) or the grant is gone.
   */
  redeemCode(grantId: number, now: Date, expiresAt: Date, tokens: NewToken[]): Promise<boolean> {
    return this.inTransaction(async (tx) => {
      const spent = await tx.update(
        OAuthGrantEntity,
        { id: grantId, codeUsedAt: IsNull() },
        { codeUsedAt: now, expiresAt },
      );
      if ((spent.affected ?? 0) === 0) {
        return false;
      }
      await this.insertTokens(tx, grantId, now, tokens);
      return true;
    });
  }

  /** A token by its hash, with its grant and the grant's user: one indexed read per request that carries one. */
  findToken(tokenHash: string): Promise<OAuthTokenEntity | null> {
    return findOneJoined(this.tokens, { where: { tokenHash }, relations: { grant: { user: true } } });
  }

  /**
   * Spends a refresh token and stores its successors, in one transaction, the grant living on
   * until `expiresAt`: false, with nothing stored, when the token was spent meanwhile or its grant
   * revoked.
   */
  async rotate(
    refreshId: number,
    grantId: number,
    now: Date,
    expiresAt: Date,
    tokens: NewToken[],
  ): Promise<boolean> {
    const rotated = await this.inTransaction(async (tx) => {
      // A revoked grant took its tokens with it: then nothing is spent here.
      const spent = await tx.update(OAuthTokenEntity, { id: refreshId, usedAt: IsNull() }, { usedAt: now });
      if ((spent.affected ?? 0) === 0) {
        return false;
      }
      await tx.update(OAuthGrantEntity, { id: grantId }, { expiresAt });
      await this.insertTokens(tx, grantId, now, tokens);
      return true;
    });
    // Outside the transaction: the clean-up's locks are not held while others rotate.
    await this.dropExpired(now);
    return rotated;
  }

  /**
   * The user's approvals still in force at `now` (a code not yet exchanged included), one per grant,
   * with their application: by the user's index, each grant's latest token by the grant index.
   */
  async approvalsOf(userId: number, now: Date): Promise<Approval[]> {
    const rows = await this.grants
      .createQueryBuilder('g')
      .innerJoin(OAuthClientEntity, 'c', 'c.id = g.oauth_client_id')
      .select('c.client_id', 'clientId')
      .addSelect('c.name', 'clientName')
      .addSelect('g.scopes', 'scopes')
      .addSelect('g.created_at', 'grantedAt')
      // A subquery per grant, by the tokens' grant index: a join and GROUP BY let MariaDB read the
      // whole tokens table into a join buffer instead.
      .addSelect(
        (latest) => latest.select('MAX(t.created_at)').from(OAuthTokenEntity, 't').where('t.grant_id = g.id'),
        'lastUsedAt',
      )
      .where('g.user_id = :userId', { userId })
      .andWhere('g.expires_at > :now', { now })
      // In no order: byApplication orders them, and an ORDER BY id lets MariaDB walk the primary key.
      .getRawMany<{
        clientId: string;
        clientName: string;
        scopes: string;
        grantedAt: Date | string;
        lastUsedAt: Date | string | null;
      }>();
    return rows.map((row) => ({
      clientId: row.clientId,
      clientName: row.clientName,
      scopes: row.scopes,
      grantedAt: rawDate(row.grantedAt),
      lastUsedAt: row.lastUsedAt === null ? null : rawDate(row.lastUsedAt),
    }));
  }

  /** Revokes every approval the user gave the client (its tokens go by cascade); answers how many. */
  async revokeApprovals(userId: number, oauthClientId: number): Promise<number> {
    return (await this.grants.delete({ userId, oauthClientId })).affected ?? 0;
  }

  /** Expired tokens first, then expired grants (codes never exchanged, families left alone): `batch` of each at most. */
  async removeExpired(now: Date, batch: number): Promise<number> {
    const tokens = await removeExpiredBatch(this.tokens, 'id', now, batch);
    return tokens + (await removeExpiredBatch(this.grants, 'id', now, batch));
  }

  /** Revokes a grant: it and every token issued from it go (the tokens by cascade). */
  async revoke(grantId: number): Promise<void> {
    await this.grants.delete({ id: grantId });
  }

  private async insertTokens(
    tx: EntityManager,
    grantId: number,
    now: Date,
    tokens: NewToken[],
  ): Promise<void> {
    await tx.insert(
      OAuthTokenEntity,
      tokens.map((token) => ({ ...token, grantId, createdAt: now, usedAt: null })),
    );
  }

  private async dropExpired(now: Date): Promise<void> {
    await this.tokens.delete({ expiresAt: LessThan(now) });
    await this.grants.delete({ expiresAt: LessThan(now) });
  }

  /** A transaction whose foreign key failing (the grant deleted meanwhile) is an ordinary "no". */
  private async inTransaction(work: (tx: EntityManager) => Promise<boolean>): Promise<boolean> {
    try {
      return await this.dataSource.transaction(work);
    } catch (error) {
      if (isForeignKeyViolation(error)) {
        return false;
      }
      throw error;
    }
  }
}
