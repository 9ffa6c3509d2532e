/** A time as people read it on pages and in mails, to the minute: `2026-11-26 10:00 UTC`. */
export function utcMinute(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The end of a wait to the minute, rounded up: shown so, it is never earlier than the wait allows. */
export function minuteUp(date: Date): Date {
  return new Date(Math.ceil(date.getTime() / 60_000) * 60_000);
}
