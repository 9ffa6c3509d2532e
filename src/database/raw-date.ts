/** A DATETIME from a raw row: a Date from mysql2, a `YYYY-MM-DD HH:MM:SS[.fff]` UTC string from SQLite. */
export function rawDate(value: Date | string): Date {
  if (value instanceof Date) {
    return value;
  }
  const iso = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/.test(value) ? `${value.replace(' ', 'T')}Z` : value;
  return new Date(iso);
}
