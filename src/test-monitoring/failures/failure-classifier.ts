import { RE2JS } from 're2js';
import { refuseMistakes, type FailurePatternSetting } from '../../config/failure-patterns-file.js';
import {
  BUILT_IN_PATTERNS,
  FAILURE_CLASSES,
  FIELD_RULES,
  type FailureClass,
  type FailurePattern,
  type FieldRule,
} from './failure-patterns.js';

/** What a failed build carries (API.md 16). */
export interface BuildFailure {
  class: FailureClass;
  /** One line. */
  reason: string;
  /** The log lines or the CI fields (`name: value`) that decided; empty when nothing did. */
  evidence: string[];
}

/** What a service class knows about one failed build, handed to the classifier. */
export interface FailureFacts {
  /** The CI's own fields, as `name: value` lines (`conclusion: cancelled`, `state: errored`). */
  fields: readonly string[];
  /** The tail of the build's log, when it was read. */
  log?: string;
}

/**
 * Lines are matched up to this many characters: with linear-time patterns a line's cost is its
 * length, so a 1 MiB line (minified output, a progress bar without line breaks) costs a 4 KiB one.
 */
export const MAX_LINE_CHARS = 4096;
/** Evidence lines kept per failure, and their length. */
const MAX_EVIDENCE_LINES = 3;
const MAX_EVIDENCE_CHARS = 300;

/** A pattern that RE2 refuses, with RE2's reason. */
function patternProblem(pattern: string): string | undefined {
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

const CLASSES: readonly string[] = FAILURE_CLASSES.filter((name) => name !== 'unknown');

/**
 * FAILURE_PATTERNS_FILE's rows as table rows; throws a ConfigError naming every mistake, one line
 * each: a class other than `infrastructure` or `test`, a reason of several lines, a pattern RE2
 * cannot compile (invalid, or needing backtracking: backreferences, lookarounds).
 */
export function checkedPatterns(settings: readonly FailurePatternSetting[]): FailurePattern[] {
  const mistakes: string[] = [];
  settings.forEach((setting, index) => {
    const where = `patterns[${index}]`;
    if (!CLASSES.includes(setting.class)) {
      mistakes.push(`${where}.class '${setting.class}' must be one of ${CLASSES.join(', ')}`);
    }
    if (/[\r\n]/.test(setting.reason.trim())) {
      mistakes.push(`${where}.reason must be one line`);
    }
    const problem = patternProblem(setting.pattern);
    if (problem !== undefined) {
      mistakes.push(`${where}.pattern is not a regular expression RE2 accepts: ${problem}`);
    }
  });
  refuseMistakes(mistakes);
  return settings.map((setting) => ({
    class: setting.class as FailurePattern['class'],
    reason: setting.reason.trim(),
    pattern: setting.pattern,
  }));
}

interface Compiled<P extends FailurePattern> {
  row: P;
  re: RE2JS;
}

function compile<P extends FailurePattern>(rows: readonly P[]): Compiled<P>[] {
  return rows.map((row) => ({ row, re: RE2JS.compile(row.pattern) }));
}

// ANSI colours and cursor moves, GitHub's line timestamps, Travis's fold and timing markers.
// eslint-disable-next-line no-control-regex -- the escape character is what it removes
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
const GITHUB_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?/;
const TRAVIS_MARKERS = /travis_(?:fold|time):[a-z]+:[^\s]*/g;

/** A log line as patterns see it and evidence shows it. */
export function cleanLine(raw: string): string {
  return raw
    .slice(0, MAX_LINE_CHARS)
    .replace(ANSI, '')
    .replace(TRAVIS_MARKERS, '')
    .replace(GITHUB_TIMESTAMP, '')
    .trim();
}

/**
 * The one classifier of failed builds (API.md 16): decisive CI fields first, then the log patterns
 * (the administrator's, then the built-in table), then what the fields suggest, else `unknown`.
 * Every pattern is RE2 (linear time), so no log and no administrator's pattern can stall a check.
 */
export class FailureClassifier {
  private readonly fields: Compiled<FieldRule>[];
  private readonly patterns: Compiled<FailurePattern>[];
  /** Every log pattern as one alternation: a line that matches none is passed over in one scan. */
  private readonly any: RE2JS;

  /** `settings`: FAILURE_PATTERNS_FILE's rows, tried before the built-in ones; refused as checkedPatterns says. */
  constructor(settings: readonly FailurePatternSetting[] = []) {
    this.fields = compile(FIELD_RULES);
    this.patterns = compile([...checkedPatterns(settings), ...BUILT_IN_PATTERNS]);
    this.any = RE2JS.compile(this.patterns.map(({ row }) => `(?:${row.pattern})`).join('|'));
  }

  /** The failure when the CI's fields decide it (the log need not be read), else undefined. */
  decidedByFields(fields: readonly string[]): BuildFailure | undefined {
    const decisive = this.fieldMatches(fields).find(({ rule }) => rule.decisive);
    return (
      decisive && { class: decisive.rule.class, reason: decisive.rule.reason, evidence: [decisive.field] }
    );
  }

  classify(facts: FailureFacts): BuildFailure {
    const decided = this.decidedByFields(facts.fields);
    if (decided) {
      return decided;
    }
    const fieldMatches = this.fieldMatches(facts.fields);
    const fromLog = facts.log === undefined ? undefined : this.fromLog(facts.log);
    if (fromLog) {
      return fromLog;
    }
    const hint = fieldMatches[0];
    if (hint) {
      return { class: hint.rule.class, reason: hint.rule.reason, evidence: [hint.field] };
    }
    return {
      class: 'unknown',
      reason:
        facts.log === undefined
          ? 'the CI fields do not tell, and no log was read'
          : 'no known pattern in the CI fields or the log',
      evidence: [...facts.fields],
    };
  }

  private fieldMatches(fields: readonly string[]): { rule: FieldRule; field: string }[] {
    return fields.flatMap((field) => {
      const rule = this.fields.find(({ re }) => re.test(field));
      return rule ? [{ rule: rule.row, field }] : [];
    });
  }

  /** The first pattern (in table order) that matches a line; its last matching lines are the evidence. */
  private fromLog(log: string): BuildFailure | undefined {
    const candidates: string[] = [];
    for (const raw of log.split(/\r\n|\n|\r/)) {
      const line = cleanLine(raw);
      if (line !== '' && this.any.test(line)) {
        candidates.push(line);
      }
    }
    for (const { row, re } of this.patterns) {
      const lines = candidates.filter((line) => re.test(line));
      if (lines.length > 0) {
        return {
          class: row.class,
          reason: row.reason,
          evidence: lines.slice(-MAX_EVIDENCE_LINES).map((line) => line.slice(0, MAX_EVIDENCE_CHARS)),
        };
      }
    }
    return undefined;
  }
}
