import {
  jobGlobProblem,
  jobMatcher,
  jobSelectorProblem,
  MAX_JOB_GLOB_LENGTH,
  splitJobSelector,
  withJobSelector,
} from './job-selector.js';

const MATRIX = ['test (ubuntu-latest, 3.11)', 'test (macos-latest, 3.12)', 'testing', 'lint', 'build / test'];

function selected(glob: string): string[] {
  return MATRIX.filter(jobMatcher(glob));
}

describe('job selectors (#job=<glob>)', () => {
  it('splits the glob off the resource, decoding percent escapes', () => {
    expect(splitJobSelector('repos/o/r/actions/workflows/ci.yml#job=test (*)')).toEqual({
      resource: 'repos/o/r/actions/workflows/ci.yml',
      glob: 'test (*)',
    });
    expect(splitJobSelector('repo/o%2Fr#job=test%20(*)')).toEqual({
      resource: 'repo/o%2Fr',
      glob: 'test (*)',
    });
    expect(splitJobSelector('repo/o%2Fr')).toEqual({ resource: 'repo/o%2Fr' });
    expect(withJobSelector('repo/1', 'lint')).toBe('repo/1#job=lint');
    expect(withJobSelector('repo/1', undefined)).toBe('repo/1');
  });

  it('selects matrix jobs with test (*) and test*, and nothing else', () => {
    expect(selected('test (*)')).toEqual(['test (ubuntu-latest, 3.11)', 'test (macos-latest, 3.12)']);
    expect(selected('test*')).toEqual(['test (ubuntu-latest, 3.11)', 'test (macos-latest, 3.12)', 'testing']);
    expect(selected('test (ubuntu-*)')).toEqual(['test (ubuntu-latest, 3.11)']);
    expect(selected('test (*, 3.1?)')).toEqual(['test (ubuntu-latest, 3.11)', 'test (macos-latest, 3.12)']);
  });

  it('lets * cross slashes, and knows classes, alternatives and escapes', () => {
    expect(selected('build*')).toEqual(['build / test']);
    expect(selected('{lint,testing}')).toEqual(['testing', 'lint']);
    expect(selected('[lt]*[gt]')).toEqual(['testing', 'lint']);
    expect(selected('[a-l]*')).toEqual(['lint', 'build / test']);
    expect(selected('[!t]*')).toEqual(['lint', 'build / test']);
    expect(jobMatcher('a\\*')('a*')).toBe(true);
    expect(jobMatcher('a\\*')('ab')).toBe(false);
    expect(jobMatcher('a.c')('abc')).toBe(false);
    expect(jobMatcher('Lint')('lint')).toBe(false);
  });

  it('refuses an empty, overlong, unclosed or undecodable glob, and accepts a resource without one', () => {
    expect(jobSelectorProblem('repo/1')).toBeUndefined();
    expect(jobSelectorProblem('repo/1#job=test*')).toBeUndefined();
    expect(jobSelectorProblem('repo/1#job=')).toMatch(/empty/);
    expect(jobSelectorProblem('repo/1#job=  ')).toMatch(/empty/);
    expect(jobSelectorProblem('repo/1#job=%E0%A4%A')).toMatch(/percent-encoding/);
    expect(jobGlobProblem('x'.repeat(MAX_JOB_GLOB_LENGTH + 1))).toMatch(/longer than/);
    expect(jobGlobProblem('test [ab')).toMatch(/not closed/);
    expect(jobGlobProblem('{a,b')).toMatch(/not closed/);
    expect(jobGlobProblem('a}')).toMatch(/closes no/);
    expect(jobGlobProblem('a\\')).toMatch(/lone/);
    expect(jobGlobProblem('a\u0000b')).toMatch(/control/);
    expect(jobMatcher('test [ab')('test [ab')).toBe(false);
  });
});
