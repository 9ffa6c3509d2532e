/**
 * What following a repository means (API.md 12), as pure functions: which globs apply, which
 * refs they match, and what a reading of the repository's refs (a poll, or a webhook's one ref)
 * asks to be done.
 */
import picomatch from 'picomatch';
import { versionProblem } from '../../common/version-label.js';
import type { FollowedRefKind, FollowedRefState } from './entities/followed-ref.entity.js';
import { MAX_GLOB_LENGTH } from './follow-limits.js';

/** Glob patterns of the tags and branches followed. */
export interface FollowGlobs {
  tags: string[];
  branches: string[];
}

/** Where the globs in force come from: the API wins over the file (API.md 12). */
export type FollowSource = 'api' | 'file' | 'none';

export const NO_FOLLOW: FollowGlobs = { tags: [], branches: [] };

/** Stored as JSON `{"tags": [...], "branches": [...]}`; NULL is "not set". */
export const followColumn = {
  to(globs: FollowGlobs | null): string | null {
    return globs === null ? null : JSON.stringify({ tags: globs.tags, branches: globs.branches });
  },
  from(stored: string | null): FollowGlobs | null {
    if (stored === null) {
      return null;
    }
    const value = JSON.parse(stored) as Partial<FollowGlobs>;
    return { tags: value.tags ?? [], branches: value.branches ?? [] };
  },
};

/** The globs in force: the API's when it set them (even to none), else the file's, else none. */
export function followInForce(
  api: FollowGlobs | null,
  file: FollowGlobs | null,
): { globs: FollowGlobs; source: FollowSource } {
  if (api !== null) {
    return { globs: api, source: 'api' };
  }
  return file !== null ? { globs: file, source: 'file' } : { globs: NO_FOLLOW, source: 'none' };
}

export function followsAnything(globs: FollowGlobs): boolean {
  return globs.tags.length > 0 || globs.branches.length > 0;
}

export function sameGlobs(a: FollowGlobs, b: FollowGlobs): boolean {
  return JSON.stringify([a.tags, a.branches]) === JSON.stringify([b.tags, b.branches]);
}

/**
 * The glob syntax of GitHub Actions' branch and tag filters, which people write these with: `*`
 * stops at `/`, `**` does not, `?`, `[...]` and `{a,b}` as usual; names starting with a dot match.
 */
const GLOB_OPTIONS = { dot: true } as const;

/** Why a string cannot be a glob here, or undefined when it can. */
export function globProblem(glob: unknown): string | undefined {
  if (typeof glob !== 'string' || glob.length === 0) {
    return 'must be a non-empty string';
  }
  if (glob.length > MAX_GLOB_LENGTH) {
    return `must be at most ${MAX_GLOB_LENGTH} characters long`;
  }
  try {
    picomatch.makeRe(glob, GLOB_OPTIONS);
  } catch {
    return 'is not a valid glob';
  }
  return undefined;
}

export function matchesAny(globs: readonly string[], name: string): boolean {
  return globs.length > 0 && picomatch.isMatch(name, [...globs], GLOB_OPTIONS);
}

/** What following does with a ref it meets: its state, and why when it is ignored. */
export function refDecision(
  kind: FollowedRefKind,
  name: string,
  globs: FollowGlobs,
): { state: FollowedRefState; reason?: string } {
  if (!matchesAny(kind === 'tag' ? globs.tags : globs.branches, name)) {
    return { state: 'seen' };
  }
  const problem = versionProblem(name);
  if (problem !== null) {
    // The DTO's reason speaks of a field named version; here the name becomes one.
    return {
      state: 'ignored',
      reason: `the ${kind} name '${name}' cannot be a version name: ${problem.replace(/^version /, 'it ')}`,
    };
  }
  return { state: 'pending' };
}

/** A ref following knows of (a row). */
export interface KnownRef {
  id: number;
  kind: FollowedRefKind;
  name: string;
  commit: string | null;
  state: FollowedRefState;
}

/** A ref GitHub shows, or a webhook tells of (a tag's commit may be unknown then). */
export interface ShownRef {
  kind: FollowedRefKind;
  name: string;
  commit: string | null;
}

/** A change to the refs following knows: a ref met for the first time, or a branch moved. */
export type RefChange =
  | { kind: 'new'; ref: ShownRef; state: FollowedRefState; reason?: string }
  | { kind: 'moved'; id: number; from: string | null; to: string; state: FollowedRefState; reason?: string };

/**
 * What the refs shown change. `baseline`: following began (or changed) since the refs were last
 * read whole, so every ref met now was there before it began and is only taken note of. Past
 * that, a new ref, or a branch at another commit (a push), is decided by refDecision; a tag
 * already known changes nothing (API.md 12: a later event about a tag changes nothing), except
 * that a pending tag learns its commit. Refs absent from what is shown are left as they are.
 */
export function refChanges(
  known: readonly KnownRef[],
  shown: readonly ShownRef[],
  globs: FollowGlobs,
  baseline: boolean,
): RefChange[] {
  const byKey = new Map(known.map((ref) => [`${ref.kind} ${ref.name}`, ref]));
  const changes: RefChange[] = [];
  for (const ref of shown) {
    const existing = byKey.get(`${ref.kind} ${ref.name}`);
    const decision = baseline ? { state: 'seen' as const } : refDecision(ref.kind, ref.name, globs);
    if (!existing) {
      changes.push({ kind: 'new', ref, ...decision });
      continue;
    }
    if (ref.commit === null || existing.commit === ref.commit) {
      continue;
    }
    if (ref.kind === 'tag') {
      if (existing.state === 'pending' && existing.commit === null) {
        changes.push({ kind: 'moved', id: existing.id, from: null, to: ref.commit, state: 'pending' });
      }
      continue;
    }
    changes.push({ kind: 'moved', id: existing.id, from: existing.commit, to: ref.commit, ...decision });
  }
  return changes;
}
