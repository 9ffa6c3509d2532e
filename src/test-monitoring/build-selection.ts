import type { TargetVersion } from '../workflows/index.js';

/**
 * Which builds of a CI resource belong to a version (API.md 7.2). GitHub and Travis: the runs of
 * the first of `refs` that names an existing branch or tag of the instance's repository (the
 * version's source ref, then its version string); when none does, the runs created in the
 * version's registration window. Jenkins ignores it (all builds).
 */
export interface BuildSelection {
  /** Candidate refs, in order: the source ref of a repository link (API.md 7.1), then the version string. */
  refs: readonly string[];
  /** From the version's registration (undefined for a workflow's first version: from the start)… */
  from?: Date;
  /** …until the next version's registration; undefined for the latest version (until now). */
  until?: Date;
}

/**
 * The rule of API.md 7.2 for one version: what a check asks its CI service for. The window of a
 * workflow's first version has no start: no earlier version can own the runs before it, and a
 * newly registered workflow shows the state of its CI at once rather than nothing until its next run.
 */
export function buildSelectionOf(version: TargetVersion): BuildSelection {
  const refs = [...new Set([version.sourceRef, version.version].filter((ref): ref is string => !!ref))];
  return {
    refs,
    from: version.first ? undefined : version.registeredAt,
    until: version.nextRegisteredAt ?? undefined,
  };
}

/** Whether a build created (or started) at `at` falls in the selection's registration window. */
export function inRegistrationWindow(selection: Pick<BuildSelection, 'from' | 'until'>, at: Date): boolean {
  return (
    (selection.from === undefined || at.getTime() >= selection.from.getTime()) &&
    (selection.until === undefined || at.getTime() < selection.until.getTime())
  );
}

/** How long a client remembers that a ref is neither a branch nor a tag before asking again. */
export const MISSING_REF_TTL_MS = 3600_000;
/** Refs remembered per client at most; past that the memory starts afresh (it is only a saving). */
const MAX_REMEMBERED = 10_000;

/**
 * The refs a CI client found missing (neither branch nor tag), so that the check of a version
 * without one costs one request (its window's listing), not a lookup each time. Per copy of the
 * service, in memory: a copy that starts afresh asks once more.
 */
export class MissingRefs {
  private readonly until = new Map<string, number>();

  has(key: string, now: Date): boolean {
    const until = this.until.get(key);
    if (until === undefined) {
      return false;
    }
    if (until <= now.getTime()) {
      this.until.delete(key);
      return false;
    }
    return true;
  }

  remember(key: string, now: Date): void {
    if (this.until.size >= MAX_REMEMBERED) {
      this.until.clear();
    }
    this.until.set(key, now.getTime() + MISSING_REF_TTL_MS);
  }
}
