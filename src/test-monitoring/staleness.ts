/**
 * Whether a status still holds (API.md 5.2 `stale`, 16 `stale_reasons`), as pure functions: the
 * caller hands in what it read of each instance and the time.
 */

/** Why a status may no longer hold, in the order replies list them. */
export const STALE_REASONS = [
  'check_failed',
  'rate_limited',
  'no_recent_build',
  'schedule_disabled',
] as const;
export type StaleReason = (typeof STALE_REASONS)[number];

const DAY_MS = 24 * 3600 * 1000;

/** What the status reads know of one instance's freshness. */
export interface InstanceFreshness {
  /** Its last check failed: the builds shown are those of an earlier check. */
  lastCheckFailed: boolean;
  /** Its service is paused by a rate limit: it is not being checked. */
  servicePaused: boolean;
  /** When its newest build (whatever its state) started; undefined without builds. */
  newestBuildAt?: Date;
  /** The CI no longer runs its workflow (GitHub's `disabled_*` states), as last read. */
  workflowDisabled: boolean;
}

/**
 * The reasons one instance's part of a status may no longer hold, in STALE_REASONS order. An
 * instance without builds has none for their age: it says "no builds" already.
 */
export function staleReasonsOf(
  instance: InstanceFreshness,
  now: Date,
  staleAfterDays: number,
): StaleReason[] {
  const found = new Set<StaleReason>();
  if (instance.lastCheckFailed) {
    found.add('check_failed');
  }
  if (instance.servicePaused) {
    found.add('rate_limited');
  }
  if (
    instance.newestBuildAt !== undefined &&
    now.getTime() - instance.newestBuildAt.getTime() > staleAfterDays * DAY_MS
  ) {
    found.add('no_recent_build');
  }
  if (instance.workflowDisabled) {
    found.add('schedule_disabled');
  }
  return inReasonOrder(found);
}

/** Reasons without duplicates, in STALE_REASONS order. */
export function inReasonOrder(reasons: Iterable<StaleReason>): StaleReason[] {
  const found = new Set(reasons);
  return STALE_REASONS.filter((reason) => found.has(reason));
}

/** A reason with the instances it holds for, as a status page names them. */
export interface StaleFinding<I> {
  reason: StaleReason;
  instances: I[];
}

/** The reasons over many instances, each with its instances in the given order; reasons in STALE_REASONS order. */
export function staleFindingsOf<I>(
  instances: readonly { instance: I; reasons: readonly StaleReason[] }[],
): StaleFinding<I>[] {
  return STALE_REASONS.flatMap((reason) => {
    const holding = instances
      .filter((entry) => entry.reasons.includes(reason))
      .map((entry) => entry.instance);
    return holding.length > 0 ? [{ reason, instances: holding }] : [];
  });
}

/**
 * A reason as a status page says it, naming the instances (already quoted and plain) it holds
 * for; no final stop.
 */
export function staleSentence(reason: StaleReason, names: readonly string[], staleAfterDays: number): string {
  const of = names.join(', ');
  switch (reason) {
    case 'check_failed':
      return `the last check of ${of} failed, the builds shown may be out of date`;
    case 'rate_limited':
      return `the CI service of ${of} is pausing our checks (rate limit), the builds shown may be out of date`;
    case 'no_recent_build':
      return `the newest build of ${of} is more than ${staleAfterDays} days old, it may no longer hold`;
    case 'schedule_disabled':
      return (
        `the CI has switched off the workflow of ${of} (GitHub does so to scheduled workflows after 60 days ` +
        'without activity in the repository), no new build comes until it is enabled again'
      );
  }
}
