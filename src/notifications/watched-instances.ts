import {
  In,
  type FindOptionsSelect,
  type FindOptionsWhere,
  type ObjectLiteral,
  type QueryDeepPartialEntity,
  type Repository,
} from 'typeorm';
import { insertMissing } from '../database/dialect.js';
import type { RegistryEvents, RetargetedInstance } from '../workflows/index.js';

/** Rows inserted per statement: a registration may add thousands of instances. */
const INSERT_BATCH = 200;

/**
 * The index a webhook service finds the test instances an event concerns by: a row per instance
 * whose service and resource give a key (`keyOf`), in an indexed column of its own (the registry's
 * `resource` is too wide to index on MariaDB). Kept in the transaction of the registration that
 * adds an instance or of the change that gives it a new resource; a deleted instance's row goes by
 * cascade.
 */
export class WatchedInstances<E extends ObjectLiteral & { instanceId: number }> {
  constructor(
    private readonly rows: Repository<E>,
    private readonly keyColumn: keyof E & string,
    private readonly keyOf: (instance: RetargetedInstance) => string | undefined,
  ) {}

  /** The instances whose key is one of `keys`. */
  async watching(keys: readonly string[]): Promise<number[]> {
    if (keys.length === 0) {
      return [];
    }
    const found = await this.rows.find({
      select: { instanceId: true } as FindOptionsSelect<E>,
      where: { [this.keyColumn]: In([...keys]) } as FindOptionsWhere<E>,
    });
    return found.map((row) => row.instanceId);
  }

  /** Keys every instance the registry adds, and again one it gives a new resource. */
  keepWith(registry: RegistryEvents): void {
    const entity = this.rows.target;
    registry.onInstancesAdded(async (tx, added) => {
      const rows = added.flatMap((instance) => this.rowsOf(instance));
      for (let at = 0; at < rows.length; at += INSERT_BATCH) {
        await insertMissing(tx, entity, rows.slice(at, at + INSERT_BATCH));
      }
    });
    registry.onInstanceRetargeted(async (tx, instance) => {
      await tx.delete(entity, { instanceId: instance.instanceId });
      await insertMissing(tx, entity, this.rowsOf(instance));
    });
  }

  private rowsOf(instance: RetargetedInstance): QueryDeepPartialEntity<E>[] {
    const key = this.keyOf(instance);
    return key === undefined
      ? []
      : [{ instanceId: instance.instanceId, [this.keyColumn]: key } as unknown as QueryDeepPartialEntity<E>];
  }
}
