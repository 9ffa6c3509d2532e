import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The linters and the client generator are dev dependencies run as their own CLIs, offline:
 * Redocly's telemetry and update check are off (environment and config), Spectral's
 * `spectral:oas` ruleset ships in the package.
 */
export const OFFLINE_ENV = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? tmpdir(),
  CI: 'true',
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
  DO_NOT_TRACK: '1',
  NO_COLOR: '1',
};

const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const bin = (relative: string): string => join(REPO, 'node_modules', relative);

export function writeDocument(document: unknown): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(document, null, 2));
  return { dir, file };
}

export interface LintProblem {
  rule: string;
  severity: string;
  message: string;
  where: string;
}

export async function redoclyLint(
  dir: string,
  file: string,
): Promise<{ errors: number; warnings: number; problems: LintProblem[] }> {
  const config = join(dir, 'redocly.yaml');
  writeFileSync(config, 'extends:\n  - recommended\ntelemetry: off\n');
  // Exit code 1 when there are errors: the JSON report on stdout is what counts.
  const { stdout } = await run(
    process.execPath,
    [bin('@redocly/cli/bin/cli.js'), 'lint', '--config', config, '--format', 'json', file],
    { env: OFFLINE_ENV, cwd: dir, maxBuffer: 64 * 1024 * 1024 },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  const report = JSON.parse(stdout) as {
    totals: { errors: number; warnings: number };
    problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
  };
  return {
    errors: report.totals.errors,
    warnings: report.totals.warnings,
    problems: report.problems.map((p) => ({
      rule: p.ruleId,
      severity: p.severity,
      message: p.message,
      where: p.location[0]?.pointer ?? '',
    })),
  };
}

export async function spectralLint(dir: string, file: string): Promise<LintProblem[]> {
  const ruleset = join(dir, '.spectral.yaml');
  writeFileSync(ruleset, 'extends: ["spectral:oas"]\n');
  const { stdout } = await run(
    process.execPath,
    [
      bin('@stoplight/spectral-cli/dist/index.js'),
      'lint',
      '--ruleset',
      ruleset,
      '--format',
      'json',
      '--quiet',
      file,
    ],
    { env: OFFLINE_ENV, cwd: dir, maxBuffer: 64 * 1024 * 1024 },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  const results = JSON.parse(stdout || '[]') as {
    code: string;
    severity: number;
    message: string;
    path: string[];
  }[];
  const severities = ['error', 'warning', 'information', 'hint'];
  return results.map((r) => ({
    rule: r.code,
    severity: severities[r.severity] ?? String(r.severity),
    message: r.message,
    where: r.path.join('.'),
  }));
}

export { run as execFileAsync, REPO };
