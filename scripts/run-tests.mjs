#!/usr/bin/env node
// The whole test suite: unit, e2e on SQLite, e2e on a throwaway MariaDB, and the Swagger UI
// in Chromium. It fails loudly when MariaDB or Chromium is missing instead of skipping them,
// builds first (the process tests run dist/), and ends with one line `N passed, N failed`
// derived from jest's JSON report. Extra arguments go to jest (e.g. a path pattern).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';

const PROJECTS = ['unit', 'e2e-sqlite', 'e2e-mariadb', 'browser'];
const REPORT = 'test-results/jest.json';

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.stdout.write('0 passed, 1 failed\n');
  process.exit(1);
}

const missing = [
  ['mariadbd', 'mariadb-server'],
  ['mariadb-install-db', 'mariadb-server'],
  ['chromium', 'chromium'],
  // The GA4GH TRS client of test/e2e/trs-cwltool.e2e-spec.ts.
  ['cwltool', 'cwltool'],
].filter(([command]) => spawnSync('sh', ['-c', `command -v ${command}`]).status !== 0);
if (missing.length > 0) {
  const packages = [...new Set(missing.map(([, pkg]) => pkg))].join(' ');
  fail(
    `The tests need ${missing.map(([c]) => c).join(', ')}: apt-get update && apt-get install -y ${packages}`,
  );
}

const build = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
if (build.status !== 0) {
  fail('npm run build failed');
}

mkdirSync('test-results', { recursive: true });
rmSync(REPORT, { force: true });
const jest = spawnSync(
  process.execPath,
  [
    '--experimental-vm-modules',
    'node_modules/jest/bin/jest.js',
    '--selectProjects',
    ...PROJECTS,
    '--json',
    `--outputFile=${REPORT}`,
    ...process.argv.slice(2),
  ],
  { stdio: 'inherit', env: { ...process.env, NODE_NO_WARNINGS: '1' } },
);

if (!existsSync(REPORT)) {
  fail(`jest wrote no report (exit ${jest.status ?? jest.signal}): it failed before running the tests`);
}
const report = JSON.parse(readFileSync(REPORT, 'utf8'));
// A suite that failed to run (a syntax error, a failing beforeAll) has no failed tests of its own: count it.
const brokenSuites = report.testResults.filter(
  (suite) => suite.status === 'failed' && suite.assertionResults.every((test) => test.status !== 'failed'),
).length;
const failed = report.numFailedTests + brokenSuites;
const skipped = report.numPendingTests + report.numTodoTests;
process.stdout.write(
  `${report.numPassedTests} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`,
);
process.exit(jest.status === 0 && failed === 0 ? 0 : 1);
