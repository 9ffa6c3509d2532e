import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { ConfigError } from '../../config/config-error.js';
import { cleanLine, FailureClassifier, MAX_LINE_CHARS } from './failure-classifier.js';

const LOGS = fileURLToPath(new URL('../../../test/fixtures/ci-logs/', import.meta.url));

function fixture(name: string): string {
  return readFileSync(`${LOGS}${name}`, 'utf8');
}

/** kevinburke/travis keeps one log as the body of a JSON string (escapes and all). */
function jsonStringBody(name: string): string {
  return JSON.parse(`"${fixture(name).trim()}"`) as string;
}

/** trav3's VCR cassette: the log is the `content` of the recorded JSON body, in parts. */
function cassetteLog(name: string): string {
  const cassette = parse(fixture(name)) as {
    http_interactions: { response: { body: { string: string } } }[];
  };
  const body = JSON.parse(cassette.http_interactions[0].response.body.string) as {
    content?: string;
    log_parts?: { content: string }[];
  };
  return body.content ?? (body.log_parts ?? []).map((part) => part.content).join('');
}

describe('FailureClassifier', () => {
  const classifier = new FailureClassifier();

  describe('on real logs', () => {
    it('finds the failing Go test in a Travis log (kevinburke/travis failure.txt)', () => {
      const failure = classifier.classify({
        fields: ['state: failed'],
        log: fixture('travis-kevinburke-failure.txt'),
      });
      expect(failure).toEqual({
        class: 'test',
        reason: 'failing tests reported',
        evidence: ['--- FAIL: TestMain (0.00s)', 'FAIL\tgithub.com/kevinburke/travis\t0.054s'],
      });
    });

    it('reads a log whose escapes and colours are still in (kevinburke/travis failure3.txt)', () => {
      const failure = classifier.classify({
        fields: [],
        log: jsonStringBody('travis-kevinburke-failure3.txt'),
      });
      expect(failure.class).toBe('test');
      expect(failure.evidence).toContain('--- FAIL: TestMain (0.00s)');
    });

    it('calls a before_script failure infrastructure, from the log alone', () => {
      const failure = classifier.classify({
        fields: [],
        log: fixture('travis-kevinburke-failure-before-script.txt'),
      });
      expect(failure).toEqual({
        class: 'infrastructure',
        reason: 'a command failed before the tests ran',
        evidence: ['The command "which barbang" failed and exited with 1 during .'],
      });
    });

    it("lets Travis's errored state decide before the log", () => {
      const failure = classifier.classify({
        fields: ['state: errored'],
        log: fixture('travis-kevinburke-failure-before-script.txt'),
      });
      expect(failure).toEqual({
        class: 'infrastructure',
        reason: 'the build errored before its tests ran',
        evidence: ['state: errored'],
      });
    });

    it.each([
      [
        'a Travis job log of system information (danielpclark/trav3)',
        cassetteLog('travis-trav3-gets_log_of_job.yml'),
      ],
      ['a Jenkins console text (silas/node-jenkins)', fixture('jenkins-silas-consoleText.txt')],
      ['a Jenkins console text (cdancy/jenkins-rest)', fixture('jenkins-cdancy-build-consoleText.txt')],
    ])('finds no pattern in %s, which shows no failure', (_name, log) => {
      expect(log.length).toBeGreaterThan(1000);
      expect(classifier.classify({ fields: [], log })).toEqual({
        class: 'unknown',
        reason: 'no known pattern in the CI fields or the log',
        evidence: [],
      });
    });

    it("lets Jenkins's ABORTED decide, whatever the console says", () => {
      const failure = classifier.classify({
        fields: ['result: ABORTED'],
        log: fixture('jenkins-silas-consoleText.txt'),
      });
      expect(failure).toEqual({
        class: 'infrastructure',
        reason: 'aborted on the CI',
        evidence: ['result: ABORTED'],
      });
    });

    it('falls back on what a field suggests when the log says nothing (Travis failed: the script)', () => {
      const failure = classifier.classify({
        fields: ['state: failed'],
        log: cassetteLog('travis-trav3-gets_log_of_job.yml'),
      });
      expect(failure).toEqual({
        class: 'test',
        reason: 'the test script failed',
        evidence: ['state: failed'],
      });
    });
  });

  describe('the table', () => {
    it.each([
      ['conclusion: cancelled', 'infrastructure'],
      ['conclusion: timed_out', 'infrastructure'],
      ['conclusion: startup_failure', 'infrastructure'],
      ['state: canceled', 'infrastructure'],
      ['result: NOT_BUILT', 'infrastructure'],
      ['result: UNSTABLE', 'test'],
    ])('decides %s as %s', (field, expected) => {
      expect(classifier.classify({ fields: [field] })).toMatchObject({ class: expected, evidence: [field] });
    });

    it.each([
      [
        '2024-05-01T10:00:00.1234567Z ##[error]No space left on device : /home/runner/work/_temp',
        'infrastructure',
      ],
      ['2024-05-01T10:00:00.1234567Z ##[error]The runner has received a shutdown signal.', 'infrastructure'],
      ['curl: (56) Recv failure: Connection reset by peer', 'infrastructure'],
      ['ERROR: failed to download https://example.org/tool.tar.gz: HTTP 503', 'infrastructure'],
      ['toomanyrequests: You have reached your pull rate limit.', 'infrastructure'],
      ['FAILED tests/test_workflow.py::test_run - AssertionError', 'test'],
      ['Tests run: 12, Failures: 2, Errors: 0, Skipped: 0', 'test'],
      ['Final process status is permanentFail', 'test'],
    ])('classifies the line %j as %s', (line, expected) => {
      expect(
        classifier.classify({ fields: ['conclusion: failure'], log: `setting up\n${line}\ndone\n` }).class,
      ).toBe(expected);
    });

    it('says unknown, naming the fields, when neither fields nor log tell', () => {
      expect(classifier.classify({ fields: ['conclusion: failure'] })).toEqual({
        class: 'unknown',
        reason: 'the CI fields do not tell, and no log was read',
        evidence: ['conclusion: failure'],
      });
    });

    it("finds nothing to go by in a real GitHub job's set-up lines (masci/elastic-logs)", () => {
      // Runner debug lines, temp folders, the image header: none of it is a failure.
      const failure = classifier.classify({
        fields: ['conclusion: failure'],
        log: fixture('github-masci-elastic-logs-job.txt'),
      });
      expect(failure.class).toBe('unknown');
      expect(failure.evidence).toEqual(['conclusion: failure']);
    });

    it('keeps the last three matching lines as evidence, each cut to 300 characters', () => {
      const log = ['--- FAIL: A', '--- FAIL: B', '--- FAIL: C', `--- FAIL: ${'d'.repeat(1000)}`].join('\n');
      const { evidence } = classifier.classify({ fields: [], log });
      expect(evidence).toEqual(['--- FAIL: B', '--- FAIL: C', `--- FAIL: ${'d'.repeat(290)}`]);
    });

    it('matches a line only up to its first 4 KiB, so a 1 MiB line costs little', () => {
      const line = `${'a'.repeat(1024 * 1024)} No space left on device`;
      expect(cleanLine(line)).toHaveLength(MAX_LINE_CHARS);
      expect(classifier.classify({ fields: [], log: `${line}\n` }).class).toBe('unknown');
    });
  });

  describe("the administrator's patterns", () => {
    it('tries them before the built-in table', () => {
      const own = new FailureClassifier([
        { class: 'infrastructure', reason: 'the test database was down', pattern: 'FAIL: TestMain' },
      ]);
      expect(own.classify({ fields: [], log: fixture('travis-kevinburke-failure.txt') })).toEqual({
        class: 'infrastructure',
        reason: 'the test database was down',
        evidence: ['--- FAIL: TestMain (0.00s)'],
      });
    });

    it('runs a pattern that backtracking engines take exponential time on in linear time', () => {
      const own = new FailureClassifier([{ class: 'test', reason: 'nested', pattern: '^(a+)+$' }]);
      const log = `${'a'.repeat(4000)}!\n`.repeat(50);
      expect(own.classify({ fields: [], log }).class).toBe('unknown');
    });

    it('refuses every bad row at once, one line each', () => {
      const build = () =>
        new FailureClassifier([
          { class: 'infra', reason: 'wrong class', pattern: 'x' },
          { class: 'test', reason: 'a backreference', pattern: '(a)\\1' },
          { class: 'test', reason: 'a lookahead', pattern: 'foo(?=bar)' },
          { class: 'test', reason: 'not closed', pattern: '(unclosed' },
          { class: 'test', reason: 'fine', pattern: 'fine' },
        ]);
      expect(build).toThrow(ConfigError);
      let message = '';
      try {
        build();
      } catch (error) {
        message = (error as Error).message;
      }
      const lines = message.split('\n');
      expect(lines).toHaveLength(4);
      expect(lines[0]).toMatch(
        /^Invalid setting FAILURE_PATTERNS_FILE: patterns\[0\]\.class 'infra' must be one of/,
      );
      expect(lines[1]).toMatch(
        /^Invalid setting FAILURE_PATTERNS_FILE: patterns\[1\]\.pattern is not a regular expression RE2 accepts/,
      );
      expect(lines[2]).toMatch(/patterns\[2\]\.pattern/);
      expect(lines[3]).toMatch(/patterns\[3\]\.pattern/);
    });
  });
});
