/**
 * A relation the caller promised to load. Mappers take entities whose relations TypeORM
 * types as optional; a missing one is a bug in the query, never a client error.
 */
export function loaded<T>(value: T | undefined, what: string): T {
  if (value === undefined) {
    throw new Error(`${what} was not loaded`);
  }
  return value;
}
