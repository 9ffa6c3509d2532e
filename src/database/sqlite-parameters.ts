import type { DataSource, ObjectLiteral } from 'typeorm';

/**
 * TypeORM's SQLite drivers write a numeric parameter into the SQL text (`version_id = 1000`)
 * instead of binding it. Every `find({ where: { instanceId } })` and every named `:id` then
 * has its own text per row, so the runner's cache of prepared statements (100, keyed by text)
 * never hits: each read prepared its statements anew (~51,000 prepares of ~7,100 texts in one
 * scale benchmark at 1,000 workflows), and each discarded statement kept its native memory
 * until V8 collected its small wrapper, which V8 has no reason to hurry (better-sqlite3 does
 * not report it): ~320 MiB of malloc still in use after load, outside the V8 heap.
 *
 * This binds them instead. A boxed Number is not a `number` to TypeORM, so it takes the branch
 * that pushes a `?` parameter; it is unboxed before it reaches better-sqlite3. Everything else
 * (arrays, booleans, dates, raw functions) keeps TypeORM's own handling.
 */
export function bindNumbersOnSqlite(dataSource: DataSource): void {
  const driver = dataSource.driver;
  const escape = driver.escapeQueryWithParameters.bind(driver);
  driver.escapeQueryWithParameters = (sql: string, parameters: ObjectLiteral): [string, unknown[]] => {
    const [text, bound] = escape(sql, parameters && boxNumbers(parameters));
    return [text, bound.map((value: unknown) => (value instanceof Number ? value.valueOf() : value))];
  };
}

function boxNumbers(parameters: ObjectLiteral): ObjectLiteral {
  let boxed: ObjectLiteral | undefined;
  for (const key of Object.keys(parameters)) {
    const value: unknown = parameters[key];
    if (typeof value === 'number') {
      boxed ??= { ...parameters };
      boxed[key] = new Number(value);
    }
  }
  return boxed ?? parameters;
}
