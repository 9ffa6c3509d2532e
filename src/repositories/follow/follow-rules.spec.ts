import {
  followColumn,
  followInForce,
  globProblem,
  matchesAny,
  refChanges,
  refDecision,
  type KnownRef,
} from './follow-rules.js';

const GLOBS = { tags: ['v*'], branches: ['main', 'release/**'] };

describe('follow rules (API.md 12)', () => {
  it('lets the API win over the file, and the file apply when the API never said', () => {
    const file = { tags: ['*.*.*'], branches: [] };
    expect(followInForce(null, null)).toEqual({ globs: { tags: [], branches: [] }, source: 'none' });
    expect(followInForce(null, file)).toEqual({ globs: file, source: 'file' });
    expect(followInForce({ tags: [], branches: [] }, file)).toEqual({
      globs: { tags: [], branches: [] },
      source: 'api',
    });
    expect(followColumn.from(followColumn.to(GLOBS))).toEqual(GLOBS);
    expect(followColumn.to(null)).toBeNull();
  });

  it("matches as GitHub Actions' filters do: * stops at /, ** does not", () => {
    expect(matchesAny(['v*'], 'v1.2.0')).toBe(true);
    expect(matchesAny(['v*'], '1.2.0')).toBe(false);
    expect(matchesAny(['v*.*.*'], 'v1.2.0')).toBe(true);
    expect(matchesAny(['release/*'], 'release/2024/1')).toBe(false);
    expect(matchesAny(['release/**'], 'release/2024/1')).toBe(true);
    expect(matchesAny(['*'], '.hidden')).toBe(true);
    expect(matchesAny([], 'main')).toBe(false);
    expect(globProblem('v*')).toBeUndefined();
    expect(globProblem('')).toBe('must be a non-empty string');
    expect(globProblem('x'.repeat(256))).toBe('must be at most 255 characters long');
    expect(globProblem(7)).toBe('must be a non-empty string');
  });

  it('registers a matching ref, ignores one whose name cannot be a version, and only notes the rest', () => {
    expect(refDecision('tag', 'v1.0', GLOBS)).toEqual({ state: 'pending' });
    expect(refDecision('tag', '1.0', GLOBS)).toEqual({ state: 'seen' });
    expect(refDecision('branch', 'main', GLOBS)).toEqual({ state: 'pending' });
    expect(refDecision('branch', 'release/2.0', GLOBS)).toEqual({
      state: 'ignored',
      reason:
        "the branch name 'release/2.0' cannot be a version name: it must not contain '/' or control characters",
    });
    expect(refDecision('tag', `v${'1'.repeat(70)}`, GLOBS)).toMatchObject({
      state: 'ignored',
      reason: expect.stringContaining('must be at most 64 characters long'),
    });
  });

  describe('what a reading of the refs changes', () => {
    const known: KnownRef[] = [
      { id: 1, kind: 'tag', name: 'v1.0', commit: 'a'.repeat(40), state: 'registered' },
      { id: 2, kind: 'branch', name: 'main', commit: 'b'.repeat(40), state: 'registered' },
      { id: 3, kind: 'tag', name: 'v1.1', commit: null, state: 'pending' },
      { id: 4, kind: 'branch', name: 'dev', commit: 'd'.repeat(40), state: 'seen' },
    ];

    it('takes note of every ref of the first reading, registering none', () => {
      const shown = [
        { kind: 'tag' as const, name: 'v0.9', commit: 'c'.repeat(40) },
        { kind: 'branch' as const, name: 'main', commit: 'e'.repeat(40) },
      ];
      expect(refChanges([], shown, GLOBS, true)).toEqual([
        { kind: 'new', ref: shown[0], state: 'seen' },
        { kind: 'new', ref: shown[1], state: 'seen' },
      ]);
    });

    it('registers new tags and pushed branches once, and changes nothing for what it knows', () => {
      const changes = refChanges(
        known,
        [
          { kind: 'tag', name: 'v1.0', commit: 'f'.repeat(40) },
          { kind: 'tag', name: 'v2.0', commit: '2'.repeat(40) },
          { kind: 'tag', name: 'v1.1', commit: '1'.repeat(40) },
          { kind: 'branch', name: 'main', commit: 'b'.repeat(40) },
          { kind: 'branch', name: 'dev', commit: '9'.repeat(40) },
          { kind: 'tag', name: 'nightly', commit: '8'.repeat(40) },
        ],
        GLOBS,
        false,
      );
      expect(changes).toEqual([
        { kind: 'new', ref: { kind: 'tag', name: 'v2.0', commit: '2'.repeat(40) }, state: 'pending' },
        { kind: 'moved', id: 3, from: null, to: '1'.repeat(40), state: 'pending' },
        { kind: 'moved', id: 4, from: 'd'.repeat(40), to: '9'.repeat(40), state: 'seen' },
        { kind: 'new', ref: { kind: 'tag', name: 'nightly', commit: '8'.repeat(40) }, state: 'seen' },
      ]);
      expect(
        refChanges(known, [{ kind: 'branch', name: 'main', commit: '7'.repeat(40) }], GLOBS, false),
      ).toEqual([{ kind: 'moved', id: 2, from: 'b'.repeat(40), to: '7'.repeat(40), state: 'pending' }]);
    });

    it('registers a tag a webhook told of, whose commit is read later', () => {
      expect(refChanges(known, [{ kind: 'tag', name: 'v3.0', commit: null }], GLOBS, false)).toEqual([
        { kind: 'new', ref: { kind: 'tag', name: 'v3.0', commit: null }, state: 'pending' },
      ]);
      expect(refChanges(known, [{ kind: 'tag', name: 'v1.0', commit: null }], GLOBS, false)).toEqual([]);
    });
  });
});
