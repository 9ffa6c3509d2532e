/**
 * The built-in table of failure classes (API.md 16), in one place: the CI fields that decide, and
 * the log patterns tried after the administrator's (FAILURE_PATTERNS_FILE). Patterns are RE2
 * syntax (no backreferences, no lookarounds: they run in linear time), matched against one log
 * line at a time, ANSI colours and GitHub's timestamps removed. The first pattern of the table
 * that matches a line of the log decides; put the specific before the general.
 */

import { FAILURE_CLASSES, type FailureClass } from '../../workflows/index.js';

// The registry's vocabulary (its replies show it), re-exported for the classifier.
export { FAILURE_CLASSES, type FailureClass };

/** A row of the table: what a match means, and the RE2 pattern. */
export interface FailurePattern {
  readonly class: Exclude<FailureClass, 'unknown'>;
  readonly reason: string;
  readonly pattern: string;
}

/**
 * A rule over one CI field, matched against `name: value` as the service class writes it
 * (`conclusion: cancelled`, `state: errored`, `result: ABORTED`). A decisive rule settles the
 * class before the log is read; the others only say what is left when no log pattern matches
 * (Travis `failed` means the script phase failed, which is usually, not always, the tests).
 */
export interface FieldRule extends FailurePattern {
  readonly decisive: boolean;
}

export const FIELD_RULES: readonly FieldRule[] = [
  // GitHub Actions: the run's and its jobs' conclusions.
  {
    class: 'infrastructure',
    reason: 'cancelled on the CI',
    pattern: '^conclusion: cancelled$',
    decisive: true,
  },
  {
    class: 'infrastructure',
    reason: 'timed out on the CI',
    pattern: '^conclusion: timed_out$',
    decisive: true,
  },
  {
    class: 'infrastructure',
    reason: 'the CI could not start the workflow',
    pattern: '^conclusion: startup_failure$',
    decisive: true,
  },
  // Travis CI: `errored` is a failure before the script phase (install, before_script) or of
  // the build's configuration; `failed` is the script phase failing.
  { class: 'infrastructure', reason: 'cancelled on the CI', pattern: '^state: canceled$', decisive: true },
  {
    class: 'infrastructure',
    reason: 'the build errored before its tests ran',
    pattern: '^state: errored$',
    decisive: true,
  },
  { class: 'test', reason: 'the test script failed', pattern: '^state: failed$', decisive: false },
  // Jenkins: ABORTED (stopped by a person or a timeout), NOT_BUILT (skipped), UNSTABLE (test
  // reports with failures).
  { class: 'infrastructure', reason: 'aborted on the CI', pattern: '^result: ABORTED$', decisive: true },
  { class: 'infrastructure', reason: 'not built by the CI', pattern: '^result: NOT_BUILT$', decisive: true },
  { class: 'test', reason: 'test reports have failures', pattern: '^result: UNSTABLE$', decisive: true },
  // Managed runs (API.md 17): `failed` is the engine reporting failing tests; `error` a run that
  // did not finish its tests (a limit, a missing engine, a crate it could not run): the log may
  // say more.
  { class: 'infrastructure', reason: 'cancelled', pattern: '^run: cancelled$', decisive: true },
  { class: 'test', reason: 'the engine reported failing tests', pattern: '^run: failed$', decisive: true },
  {
    class: 'infrastructure',
    reason: 'the run ended before its tests finished',
    pattern: '^run: error$',
    decisive: false,
  },
  // Pipelines: a pipeline's or job's `status`, and a failed job's `failure_reason` (the CI's own
  // list of reasons; the client that writes these fields cites it): those naming the runner,
  // the scheduler, a timeout or the CI service itself are the CI's; `script_failure` is the
  // job's script exiting non-zero, usually, not always, the tests.
  { class: 'infrastructure', reason: 'cancelled on the CI', pattern: '^status: canceled$', decisive: true },
  {
    class: 'infrastructure',
    reason: 'the runner failed',
    pattern: '^failure_reason: (runner_system_failure|runner_unsupported|no_matching_runner)$',
    decisive: true,
  },
  {
    class: 'infrastructure',
    reason: 'timed out on the CI',
    pattern:
      '^failure_reason: (stuck_or_timeout_failure|job_execution_timeout|job_execution_server_timeout|stuck_pending_with_matching_runners|stuck_pending_no_matching_runners)$',
    decisive: true,
  },
  {
    class: 'infrastructure',
    reason: 'the CI service failed',
    pattern:
      '^failure_reason: (api_failure|scheduler_failure|data_integrity_failure|archived_failure|unmet_prerequisites|ci_quota_exceeded|trace_size_exceeded)$',
    decisive: true,
  },
  {
    class: 'test',
    reason: 'the job script failed',
    pattern: '^failure_reason: script_failure$',
    decisive: false,
  },
];

export const BUILT_IN_PATTERNS: readonly FailurePattern[] = [
  // The runner or the machine.
  { class: 'infrastructure', reason: 'no space left on the runner', pattern: '(?i)no space left on device' },
  {
    class: 'infrastructure',
    reason: 'the runner was lost',
    pattern:
      '(?i)(runner has received a shutdown signal|lost communication with the server|agent went offline during the build|ChannelClosedException|ClosedChannelException)',
  },
  {
    class: 'infrastructure',
    reason: 'the job timed out',
    pattern:
      '(?i)(has exceeded the maximum execution time|exceeded the maximum time limit for jobs|No output has been received in the last|Build timed out \\(after|Cancelling nested steps due to timeout)',
  },
  {
    class: 'infrastructure',
    reason: 'cancelled on the CI',
    pattern: '(?i)(^##\\[error\\]The operation was canceled|^Aborted by |^Build was aborted$)',
  },
  {
    // Travis's words for a command of before_install, install or before_script (its script
    // phase's are `The command "…" exited with N.`).
    class: 'infrastructure',
    reason: 'a command failed before the tests ran',
    pattern: '^The command ".*" failed and exited with [0-9]+ during',
  },
  {
    class: 'infrastructure',
    reason: 'the runner ran out of memory',
    pattern: '(?i)(Out of memory: Kill(ed)? process|runner.*out of memory|received a SIGKILL)',
  },
  {
    class: 'infrastructure',
    reason: 'the CI service failed',
    pattern:
      '(?i)(no enabled runners online|error occurred while provisioning resources|exceeded the maximum log length|FATAL: command execution failed|Remote call on .* failed)',
  },
  // Downloads of tools and containers.
  {
    class: 'infrastructure',
    reason: 'a download failed: the server answered 5xx',
    pattern:
      '(?i)((HTTP|status|error|returned|response)[ :/]*(code )?5[0-9][0-9]\\b|\\b50[234] (Service Unavailable|Bad Gateway|Gateway Time-?out))',
  },
  {
    class: 'infrastructure',
    reason: 'a download failed: network error',
    pattern:
      '(?i)(could not resolve host|temporary failure in name resolution|name or service not known|connection (timed out|refused|reset by peer)|TLS handshake timeout|failed to connect to .* port|\\b(ETIMEDOUT|ECONNRESET|ECONNREFUSED|EAI_AGAIN)\\b|Max retries exceeded with url|ReadTimeoutError|curl: \\((6|7|18|28|35|52|56)\\)|fatal: unable to access)',
  },
  {
    class: 'infrastructure',
    reason: 'a container image could not be pulled',
    pattern:
      '(?i)(toomanyrequests|error pulling image|pull access denied|manifest unknown|failed to pull image)',
  },
  // Test engines reporting failing tests.
  {
    class: 'test',
    reason: 'failing tests reported',
    pattern:
      '(^--- FAIL: |^FAIL\\s|^FAILED .+::|^=+ .*[0-9]+ failed.* =+$|Tests run: [0-9]+, Failures: [1-9]|Tests run: [0-9]+, Failures: [0-9]+, Errors: [1-9]|There are test failures|^Tests:\\s+[0-9]+ failed|^\\s*[1-9][0-9]* failing$|[0-9]+ examples?, [1-9][0-9]* failures?|\\b[1-9][0-9]* (tests?|checks?) failed|^Test [^ ]+ failed|changed build result to UNSTABLE)',
  },
  {
    class: 'test',
    reason: 'the workflow under test failed',
    pattern:
      '(Error executing process >|^Error in rule |^WorkflowException|Final process status is permanentFail)',
  },
];
