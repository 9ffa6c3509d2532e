import type { DataSource, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';

/**
 * Entities read by hand-written SQL, built column by column with the driver's own conversions
 * (dates, booleans, transformers), as a find would build them but without relations.
 *
 * For reads of hundreds of rows at a time (a streamed list's batches): `find` builds every row
 * through its join transformer and load-event broadcaster, whose getters allocate per row and
 * column: ~20 MB of short-lived objects per 1,000 workflows with their latest builds, which the
 * young generation promotes to the old one, where it stays until a full collection (the RSS of
 * the process grew by 100-200 MiB while a 100,000-workflow list streamed). This reads the same
 * values with a fraction of the allocations. The caller joins and attaches the relations.
 */
export class PlainEntities<T extends ObjectLiteral> {
  private readonly metadata: EntityMetadata;
  private readonly columns: ColumnMetadata[];

  constructor(
    private readonly dataSource: DataSource,
    target: EntityTarget<T>,
    /** The table's alias in the caller's SQL, and the prefix of its columns' aliases. */
    readonly alias: string,
  ) {
    this.metadata = dataSource.getMetadata(target);
    this.columns = this.metadata.columns.filter((column) => !column.isVirtual);
  }

  /** `alias.column AS alias__column, …`: every column of the entity, for a SELECT list. */
  get selectList(): string {
    const escape = (name: string) => this.dataSource.driver.escape(name);
    return this.columns
      .map(
        (column) =>
          `${escape(this.alias)}.${escape(column.databaseName)} AS ${escape(this.key(column.databaseName))}`,
      )
      .join(', ');
  }

  /** The entity in a row selected with `selectList`. */
  from(row: Record<string, unknown>): T {
    const entity = this.metadata.create() as T;
    for (const column of this.columns) {
      column.setEntityValue(
        entity,
        this.dataSource.driver.prepareHydratedValue(row[this.key(column.databaseName)], column),
      );
    }
    return entity;
  }

  /** True when the row has no entity of this alias (the other side of a LEFT JOIN found none). */
  isAbsent(row: Record<string, unknown>): boolean {
    return this.metadata.primaryColumns.every((column) => row[this.key(column.databaseName)] === null);
  }

  private key(databaseName: string): string {
    return `${this.alias}__${databaseName}`;
  }
}

/** `?, ?, …` for an IN list of `count` values (both drivers take `?`). */
export function inList(count: number): string {
  return Array.from({ length: count }, () => '?').join(', ');
}
