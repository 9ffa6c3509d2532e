import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { UserQuotaEntity } from './entities/user-quota.entity.js';

/** A user's own quota as stored: null is no limit. */
export interface StoredQuota {
  readonly maxNodes: number | null;
  readonly maxVcpus: number | null;
  readonly maxRamMib: number | null;
}

/** All SQL of `user_quotas`. */
@Injectable()
export class QuotasRepository {
  constructor(@InjectRepository(UserQuotaEntity) private readonly rows: Repository<UserQuotaEntity>) {}

  /** The users' own quotas, by user id; a user without one is absent. */
  async ofUsers(userIds: readonly number[]): Promise<Map<number, StoredQuota>> {
    if (userIds.length === 0) {
      return new Map();
    }
    const rows = await this.rows.findBy({ userId: In([...new Set(userIds)]) });
    return new Map(rows.map((row) => [row.userId, toQuota(row)]));
  }

  /** Writes the user's own quota (one statement: an insert, or an update of the row there). */
  async save(userId: number, quota: StoredQuota): Promise<void> {
    await this.rows.upsert({ userId, ...quota }, ['userId']);
  }

  /** The user goes back to the defaults; false when they had no quota of their own. */
  async remove(userId: number): Promise<boolean> {
    const result = await this.rows.delete({ userId });
    return (result.affected ?? 0) > 0;
  }
}

function toQuota(row: UserQuotaEntity): StoredQuota {
  return { maxNodes: row.maxNodes, maxVcpus: row.maxVcpus, maxRamMib: row.maxRamMib };
}
