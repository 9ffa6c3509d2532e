/** True when a database error is a unique-constraint violation, on SQLite or MySQL/MariaDB. */
export function isUniqueViolation(error: unknown): boolean {
  const code = driverCode(error);
  return (
    code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/**
 * True when a foreign key refuses a write, on SQLite or MySQL/MariaDB: a delete of a row still
 * referenced (RESTRICT), or an insert or update referring to a row that is gone (deleted by
 * another request meanwhile). SQLite has one code for both; MariaDB one each.
 */
export function isForeignKeyViolation(error: unknown): boolean {
  const code = driverCode(error);
  return (
    code === 'ER_ROW_IS_REFERENCED_2' ||
    code === 'ER_ROW_IS_REFERENCED' ||
    code === 'ER_NO_REFERENCED_ROW_2' ||
    code === 'ER_NO_REFERENCED_ROW' ||
    code === 'SQLITE_CONSTRAINT_FOREIGNKEY'
  );
}

/** The driver's error code (`ER_DUP_ENTRY`, `SQLITE_BUSY` …) of a TypeORM or driver error. */
export function driverCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) {
    return undefined;
  }
  const withDriver = error as { code?: unknown; driverError?: { code?: unknown } };
  const code = withDriver.driverError?.code ?? withDriver.code;
  return typeof code === 'string' ? code : undefined;
}
