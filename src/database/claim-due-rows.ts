import { Brackets, type Repository } from 'typeorm';
import { retryOnDeadlock } from './retry-on-deadlock.js';

/** The columns a claimable table has besides its own: `id`, `claim_owner`, `claim_until`. */
// A type, not an interface: TypeORM's Repository needs the implicit index signature.
export type ClaimableRow = {
  id: number | string;
  claimOwner: string | null;
  claimUntil: Date | null;
};

export interface ClaimOptions {
  /** The column (database name) that says when a row is due, e.g. `expires_at`; it must be indexed. */
  readonly dueColumn: string;
  readonly now: Date;
  /** Unique to this claim: every later write of the claimant is conditional on it. */
  readonly token: string;
  readonly batch: number;
  readonly claimMs: number;
}

/**
 * Claims up to `batch` rows due at `now` that no live claim holds, for `claimMs`, and returns
 * them (earliest due first). One conditional UPDATE decides races, atomically on SQLite and
 * InnoDB: of several copies of the service, one wins each row, and a row whose claim ran out
 * (its claimant died) is taken over. Ids are updated in one order, so that MariaDB cannot
 * deadlock two claimants on them.
 */
export async function claimDueRows<T extends ClaimableRow>(
  rows: Repository<T>,
  { dueColumn, now, token, batch, claimMs }: ClaimOptions,
): Promise<T[]> {
  const unclaimed = new Brackets((where) =>
    where.where('claim_until IS NULL').orWhere('claim_until < :now', { now }),
  );
  const candidates = await rows
    .createQueryBuilder('r')
    .select('r.id', 'id')
    .where(`r.${dueColumn} <= :now`, { now })
    .andWhere(unclaimed)
    .orderBy(`r.${dueColumn}`, 'ASC')
    .limit(batch)
    .getRawMany<{ id: number | string }>();
  if (candidates.length === 0) {
    return [];
  }
  const ids = candidates.map((row) => row.id).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  // Only the claim's own columns are written, which every claimable table has.
  const claimable: Repository<ClaimableRow> = rows;
  await retryOnDeadlock(() =>
    claimable
      .createQueryBuilder()
      .update()
      .set({ claimOwner: token, claimUntil: new Date(now.getTime() + claimMs) })
      .where('id IN (:...ids)', { ids })
      .andWhere(`${dueColumn} <= :now`, { now })
      .andWhere(unclaimed)
      .execute(),
  );
  return rows
    .createQueryBuilder('r')
    .where('r.id IN (:...ids)', { ids })
    .andWhere('r.claim_owner = :token', { token })
    .orderBy(`r.${dueColumn}`, 'ASC')
    .getMany();
}
