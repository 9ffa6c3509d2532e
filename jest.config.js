/**
 * One jest run, four test projects: unit specs beside the code, the e2e suite on the
 * embedded SQLite database and again on a throwaway MariaDB server the harness starts,
 * and the browser check of the Swagger UI. `npm test` runs those four (scripts/run-tests.mjs).
 */
import { availableParallelism } from 'node:os';

// tsconfig.json's isolatedModules makes ts-jest transpile each file alone (half the CPU of a
// cold run); `npm run lint` type-checks the tests with the whole program.
const tsJest = {
  '^.+\\.ts$': [
    'ts-jest',
    { useESM: true, tsconfig: 'tsconfig.json', diagnostics: { ignoreCodes: [151002] } },
  ],
};
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: tsJest,
  testEnvironment: 'node',
};

export default {
  testTimeout: 30000,
  // jest's default (one worker less than the cores) runs the suite file by file on a 2-core
  // machine, while an e2e file spends much of its time waiting on its servers and timers.
  maxWorkers: Number(process.env.TEST_WORKERS) || Math.max(2, availableParallelism()),
  // Test files run in a worker that is replaced once it holds more than this after a file: ESM
  // test modules are never freed, and a whole run in one process outgrew Node's heap. (Without
  // a limit, jest runs everything inside its own process on a 2-core machine.)
  workerIdleMemoryLimit: '1GB',
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/src/**/*.spec.ts',
        '<rootDir>/test/contracts/**/*.spec.ts',
        '<rootDir>/test/deploy/**/*.spec.ts',
      ],
    },
    {
      ...common,
      displayName: 'e2e-sqlite',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      // Several processes on one database is a MariaDB deployment.
      testPathIgnorePatterns: ['\\.mariadb\\.e2e-spec\\.ts$'],
      setupFiles: ['<rootDir>/test/support/use-sqlite.ts'],
    },
    {
      ...common,
      displayName: 'e2e-mariadb',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/mariadb.global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/mariadb.global-teardown.mjs',
      // A `*.sqlite.e2e-spec.ts` injects faults into the SQLite file itself.
      testPathIgnorePatterns: ['\\.sqlite\\.e2e-spec\\.ts$'],
      setupFiles: ['<rootDir>/test/support/use-mariadb.ts'],
    },
    { ...common, displayName: 'browser', testMatch: ['<rootDir>/test/browser/**/*.browser-spec.ts'] },
    // Benchmarks print figures and assert nothing about time; `npm run bench` runs them, `npm test` does not.
    { ...common, displayName: 'bench', testMatch: ['<rootDir>/test/bench/**/*.bench-spec.ts'] },
  ],
};
