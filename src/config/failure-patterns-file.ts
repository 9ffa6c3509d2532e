import { isRecord } from '../common/is-record.js';
import { ConfigError } from './config-error.js';
import { readYamlFile } from './yaml-file.js';

const SETTING = 'FAILURE_PATTERNS_FILE';

/** One row of FAILURE_PATTERNS_FILE as written; the failure classifier checks class and pattern. */
export interface FailurePatternSetting {
  readonly class: string;
  readonly reason: string;
  readonly pattern: string;
}

/**
 * The administrator's failure patterns (API.md 16): YAML `patterns: [{class, reason, pattern}]`,
 * or the bare list; none when the setting is unset. Rows that are not three strings are refused
 * here, one line each; their classes and regular expressions when the classifier compiles them.
 */
export function loadFailurePatterns(
  path: string | undefined,
  env: NodeJS.ProcessEnv,
): FailurePatternSetting[] {
  if (!path) {
    return [];
  }
  const document = readYamlFile(SETTING, path, env);
  const list = isRecord(document) ? document.patterns : document;
  if (!Array.isArray(list)) {
    throw new ConfigError(SETTING, `${path} must have a 'patterns' list of {class, reason, pattern}`);
  }
  const patterns: FailurePatternSetting[] = [];
  const mistakes: string[] = [];
  list.forEach((entry: unknown, index) => {
    const where = `patterns[${index}]`;
    if (!isRecord(entry)) {
      mistakes.push(`${where} must be a mapping of class, reason and pattern`);
      return;
    }
    const missing = ['class', 'reason', 'pattern'].filter(
      (key) => typeof entry[key] !== 'string' || entry[key] === '',
    );
    if (missing.length > 0) {
      mistakes.push(`${where} needs ${missing.join(', ')} (text)`);
      return;
    }
    patterns.push({
      class: entry.class as string,
      reason: entry.reason as string,
      pattern: entry.pattern as string,
    });
  });
  refuseMistakes(mistakes);
  return patterns;
}

/** One ConfigError for all of a file's mistakes, one line each. */
export function refuseMistakes(mistakes: readonly string[]): void {
  if (mistakes.length > 0) {
    throw new ConfigError(SETTING, mistakes.join(`\nInvalid setting ${SETTING}: `));
  }
}
