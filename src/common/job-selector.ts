/**
 * API.md 16: an instance's `resource` may end with `#job=<glob>`, so that one CI workflow that
 * tests several scientific workflows reports each on its own: the instance's builds are made of
 * the jobs whose names match. The registry validates it, the CI clients read it.
 *
 * The glob is over job names, not paths, so picomatch's path globs do not serve: there `*` stops
 * at `/` (GitHub names a called workflow's jobs `caller / job`) and `( )` group (matrix jobs are
 * named `test (ubuntu-latest, 3.11)`). Here `*` is any text, `?` one character, `[abc]`, `[a-z]`
 * and `[!abc]` a character class, `{a,b}` alternatives, `\` makes the next character literal;
 * everything else, spaces, parentheses and commas outside braces included, is itself. Matching is
 * case-sensitive, as job names are.
 */

const MARKER = '#job=';
/** Longer globs are refused: job names are short, and a glob is compiled at every check. */
export const MAX_JOB_GLOB_LENGTH = 200;

/** A resource without its job selector, and the selector's glob when it has one. */
export interface JobSelection {
  resource: string;
  glob?: string;
  /** The glob has `%` escapes that do not decode: it is kept as written, and refused. */
  undecodable?: true;
}

/**
 * Splits `repos/o/r/actions/workflows/ci.yml#job=test (*)` into the resource and the glob. The
 * glob may be percent-encoded (a URL fragment); one that does not decode is kept as written and
 * refused by jobGlobProblem. Only the last `#job=` counts: a resource holds no `#` otherwise.
 */
export function splitJobSelector(resource: string): JobSelection {
  const at = resource.lastIndexOf(MARKER);
  if (at < 0) {
    return { resource };
  }
  const raw = resource.slice(at + MARKER.length);
  const selection = { resource: resource.slice(0, at), glob: raw };
  if (!raw.includes('%')) {
    return selection;
  }
  try {
    return { ...selection, glob: decodeURIComponent(raw) };
  } catch {
    return { ...selection, undecodable: true };
  }
}

/** The resource with `glob` as its job selector again (`canonicalTarget` rewrites the part before it). */
export function withJobSelector(resource: string, glob: string | undefined): string {
  return glob === undefined ? resource : `${resource}${MARKER}${glob}`;
}

/** Why the resource's job selector cannot be used (empty, too long, not a glob), or undefined. */
export function jobSelectorProblem(resource: string): string | undefined {
  const { glob, undecodable } = splitJobSelector(resource);
  if (glob === undefined) {
    return undefined;
  }
  return undecodable ? 'the #job= glob is not valid percent-encoding' : jobGlobProblem(glob);
}

/** Why `glob` is not a job glob, or undefined. */
export function jobGlobProblem(glob: string): string | undefined {
  if (glob.trim() === '') {
    return 'the #job= glob is empty: name the jobs, e.g. #job=test*';
  }
  if (glob.length > MAX_JOB_GLOB_LENGTH) {
    return `the #job= glob is longer than ${MAX_JOB_GLOB_LENGTH} characters`;
  }
  if (/\p{Cc}/u.test(glob)) {
    return 'the #job= glob contains control characters';
  }
  const compiled = compile(glob);
  return typeof compiled === 'string' ? `the #job= glob '${glob}' is not valid: ${compiled}` : undefined;
}

/**
 * A matcher of job names for a valid glob (jobGlobProblem answered undefined); an invalid glob
 * matches nothing.
 */
export function jobMatcher(glob: string): (name: string) => boolean {
  const compiled = compile(glob);
  return typeof compiled === 'string' ? () => false : (name) => compiled.test(name);
}

/** The glob as an anchored regular expression, or why it is none. */
function compile(glob: string): RegExp | string {
  let source = '';
  let braces = 0;
  for (let at = 0; at < glob.length; at++) {
    const char = glob[at];
    switch (char) {
      case '\\':
        if (at + 1 >= glob.length) {
          return 'it ends with a lone \\';
        }
        source += escapeRegExp(glob[++at]);
        break;
      case '*':
        source += '.*';
        break;
      case '?':
        source += '.';
        break;
      case '[': {
        const end = classEnd(glob, at);
        if (end < 0) {
          return `the [ at ${at + 1} is not closed`;
        }
        let body = glob.slice(at + 1, end);
        const negated = body.startsWith('!') || body.startsWith('^');
        if (negated) {
          body = body.slice(1);
        }
        source += `[${negated ? '^' : ''}${body.replace(/[\\\]^]/g, (c) => `\\${c}`)}]`;
        at = end;
        break;
      }
      case '{':
        braces++;
        source += '(?:';
        break;
      case '}':
        if (braces === 0) {
          return `the } at ${at + 1} closes no {`;
        }
        braces--;
        source += ')';
        break;
      case ',':
        source += braces > 0 ? '|' : ',';
        break;
      default:
        source += escapeRegExp(char);
    }
  }
  if (braces > 0) {
    return 'a { is not closed';
  }
  return new RegExp(`^${source}$`, 'su');
}

/** Where the class opened at `open` ends (a `]` right after `[`, `[!` or `[^` is a member), or -1. */
function classEnd(glob: string, open: number): number {
  let at = open + 1;
  if (glob[at] === '!' || glob[at] === '^') {
    at++;
  }
  if (glob[at] === ']') {
    at++;
  }
  const end = glob.indexOf(']', at);
  return end > open + 1 ? end : -1;
}

function escapeRegExp(char: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(char) ? `\\${char}` : char;
}
