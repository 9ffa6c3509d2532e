import { ValidateBy } from 'class-validator';

/*
 * What a version's name may be, wherever one comes from: a request's `version`, or a tag or
 * branch that following turns into a version. Neither depends on the other's module for it.
 */

/**
 * The longest version name (the registry's column, COLUMN_LENGTHS.version, is this long).
 * Versions appear as one path segment of the API's URLs, so they cannot hold what a path would
 * split or drop.
 */
export const VERSION_MAX_LENGTH = 64;

/** Why a value is not a usable version, or null when it is; one reason, the first that applies. */
export function versionProblem(value: unknown): string | null {
  if (value === undefined || value === null) {
    return 'version is required';
  }
  if (typeof value !== 'string') {
    return 'version must be a JSON string (send "1.0", not 1.0)';
  }
  if (value.length === 0) {
    return 'version must not be empty';
  }
  if (value.length > VERSION_MAX_LENGTH) {
    return `version must be at most ${VERSION_MAX_LENGTH} characters long`;
  }
  if (/[/\p{Cc}]/u.test(value)) {
    return "version must not contain '/' or control characters";
  }
  if (value === '.' || value === '..') {
    return "version must not be '.' or '..'";
  }
  return null;
}

/** A version label: one validator, so that the client reads the one reason that applies. */
export function IsVersionLabel(): PropertyDecorator {
  return ValidateBy({
    name: 'isVersionLabel',
    validator: {
      validate: (value: unknown) => versionProblem(value) === null,
      defaultMessage: (args) => versionProblem(args?.value) ?? 'version is not valid',
    },
  });
}
