import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { isUniqueViolation } from '../common/errors/unique-violation.js';
import { lockRows } from '../database/dialect.js';
import { TestServiceEntity } from './entities/test-service.entity.js';

/*
 * What the registry's two writers of instances share: registrations (VersionWriter) and
 * instances added through the API (InstancesRepository) both insert rows and reach a test
 * service by (type, url).
 */

export function insertedId(result: { identifiers: Record<string, unknown>[] }): number {
  const id = Number(result.identifiers[0]?.id);
  if (!Number.isSafeInteger(id)) {
    throw new Error('the database returned no id for an inserted row');
  }
  return id;
}

/** Get-or-create by (type, url); a unique violation means another registration created it meanwhile. */
export async function serviceFor(tx: EntityManager, type: string, url: string): Promise<number> {
  const existing = await findService(tx, type, url);
  if (existing) {
    return existing.id;
  }
  try {
    return insertedId(await tx.insert(TestServiceEntity, { uuid: randomUUID(), type, url }));
  } catch (error) {
    if (!isUniqueViolation(error)) {
      throw error;
    }
    const created = await findService(tx, type, url);
    if (!created) {
      throw error;
    }
    return created.id;
  }
}

function findService(tx: EntityManager, type: string, url: string): Promise<TestServiceEntity | null> {
  const query = tx
    .createQueryBuilder(TestServiceEntity, 's')
    .where('s.type = :type AND s.url = :url', { type, url });
  // A locking read sees rows committed after this transaction's snapshot (InnoDB's consistent reads would not).
  return lockRows(query, 'read').getOne();
}
