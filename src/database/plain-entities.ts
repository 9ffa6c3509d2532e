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
  /** `alias.column AS alias__column, …`: every column of the entity, for a SELECT list. */
  readonly selectList: string;
  private readonly metadata: EntityMetadata;
  /** The columns whose values the driver hands over as they come (see AS_IS_TYPES): copied straight. */
  private readonly asIs: { property: string; key: string }[];
  /** The others, through the driver's conversions and TypeORM's setter. */
  private readonly converted: { column: ColumnMetadata; key: string }[];
  private readonly primaryKeys: string[];

  /** Made once per reader (a repository's field): its SELECT list and keys are worked out here. */
  constructor(
    private readonly dataSource: DataSource,
    target: EntityTarget<T>,
    /** The table's alias in the caller's SQL, and the prefix of its columns' aliases. */
    readonly alias: string,
  ) {
    this.metadata = dataSource.getMetadata(target);
    const key = (column: ColumnMetadata): string => `${alias}__${column.databaseName}`;
    // Each column with the key of its value in a row selected with `selectList`.
    const columns = this.metadata.columns
      .filter((column) => !column.isVirtual)
      .map((column) => ({ column, key: key(column) }));
    this.primaryKeys = this.metadata.primaryColumns.map(key);
    const copiedAsIs = ({ column }: { column: ColumnMetadata }): boolean =>
      typeof column.type === 'string' &&
      AS_IS_TYPES.has(column.type) &&
      !column.transformer &&
      !column.embeddedMetadata;
    this.asIs = columns.filter(copiedAsIs).map(({ column, key }) => ({ property: column.propertyName, key }));
    this.converted = columns.filter((entry) => !copiedAsIs(entry));
    const escape = (name: string): string => dataSource.driver.escape(name);
    this.selectList = columns
      .map(({ column, key }) => `${escape(alias)}.${escape(column.databaseName)} AS ${escape(key)}`)
      .join(', ');
  }

  /** The entity in a row selected with `selectList`. */
  from(row: Record<string, unknown>): T {
    const entity = this.metadata.create() as T;
    const target = entity as Record<string, unknown>;
    for (const { property, key } of this.asIs) {
      target[property] = row[key];
    }
    for (const { column, key } of this.converted) {
      column.setEntityValue(entity, this.dataSource.driver.prepareHydratedValue(row[key], column));
    }
    return entity;
  }

  /** True when the row has no entity of this alias (the other side of a LEFT JOIN found none). */
  isAbsent(row: Record<string, unknown>): boolean {
    return this.primaryKeys.every((key) => row[key] === null);
  }
}

/**
 * Column types whose values both drivers' prepareHydratedValue return unchanged when the column
 * has no transformer (it converts booleans, dates, JSON, simple arrays and enums, and `Number`
 * columns on MySQL; plain text and `integer` as they come), and that setEntityValue only assigns
 * outside an embedded entity. A streamed list's rows are mostly such columns, and the generic
 * path's two calls per value were a tenth of its time.
 */
const AS_IS_TYPES: ReadonlySet<string> = new Set(['varchar', 'integer', 'text']);

/** `?, ?, …` for an IN list of `count` values (both drivers take `?`). */
export function inList(count: number): string {
  return Array.from({ length: count }, () => '?').join(', ');
}
