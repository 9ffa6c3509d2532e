/**
 * When a failed delivery is tried again (pure, for tests without clocks): exponential back-off
 * from 30 s, capped at an hour, with jitter (×0.5–1.5) so that the retries of many deliveries to
 * one receiver that was down do not arrive together; after 24 h of failures the delivery fails.
 */
export const FIRST_RETRY_MS = 30_000;
export const MAX_RETRY_MS = 3600_000;
export const GIVE_UP_AFTER_MS = 24 * 3600_000;

/** The next attempt after `attempts` failed ones, or undefined when the delivery has had 24 h. */
export function nextAttemptAt(
  createdAt: Date,
  attempts: number,
  now: Date,
  random: number,
): Date | undefined {
  const delay = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1)) * (0.5 + random);
  const next = now.getTime() + Math.round(delay);
  return next - createdAt.getTime() > GIVE_UP_AFTER_MS ? undefined : new Date(next);
}
