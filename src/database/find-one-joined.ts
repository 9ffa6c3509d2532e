import type { FindManyOptions, ObjectLiteral, Repository } from 'typeorm';

/**
 * The one entity whose unique column `options.where` names, with its relations, in one query.
 * TypeORM's `findOne` limits the find to one, and a limited find with joins runs two queries:
 * the distinct ids, then the entity `WHERE id IN (1000)`, the ids written into the text. Each
 * row read then has a SQL text of its own, which on SQLite is a statement prepared anew every
 * time (see sqlite-parameters.ts). Without the limit, a unique `where` reads the same rows.
 */
export async function findOneJoined<T extends ObjectLiteral>(
  repository: Repository<T>,
  options: FindManyOptions<T>,
): Promise<T | null> {
  const [found] = await repository.find(options);
  return found ?? null;
}
