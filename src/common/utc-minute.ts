/** A time as people read it on pages and in mails, to the minute: `2026-11-26 10:00 UTC`. */
export function utcMinute(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
