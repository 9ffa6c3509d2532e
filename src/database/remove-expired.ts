import type { ObjectLiteral, Repository } from 'typeorm';

/**
 * Deletes up to `batch` rows whose `expires_at` passed before `now`, the longest expired first,
 * and answers how many went: one read by the expiry index (which the table must have), then one
 * delete by `keyColumn` (database names, as claimDueRows takes them). Each statement, and its
 * locks, stays short however much expired meanwhile.
 */
export async function removeExpiredBatch<T extends ObjectLiteral>(
  rows: Repository<T>,
  keyColumn: string,
  now: Date,
  batch: number,
): Promise<number> {
  const expired = await rows
    .createQueryBuilder('r')
    .select(`r.${keyColumn}`, 'rowKey')
    .where('r.expires_at < :now', { now })
    .orderBy('r.expires_at', 'ASC')
    .limit(batch)
    .getRawMany<{ rowKey: number | string }>();
  if (expired.length === 0) {
    return 0;
  }
  await rows
    .createQueryBuilder()
    .delete()
    .where(`${keyColumn} IN (:...keys)`, { keys: expired.map((row) => row.rowKey) })
    // A row renewed since the read (a grant's refresh moves its expiry) stays.
    .andWhere('expires_at < :now', { now })
    .execute();
  return expired.length;
}
