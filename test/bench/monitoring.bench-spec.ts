import { readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { FailureClassifier } from '../../src/test-monitoring/failures/failure-classifier.js';
import { CLASSIFIED_TAIL_BYTES } from '../../src/test-monitoring/instance-checker.js';
import { CheckStateRepository } from '../../src/test-monitoring/check-state.repository.js';
import { RefreshMetrics } from '../../src/test-monitoring/refresh-metrics.js';
import { DEFAULT_REFRESH_INTERVAL_MS } from '../../src/test-monitoring/refresh-schedule.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { GithubFake } from '../fakes/github-fake.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { seedVersion } from '../support/monitoring-seed.js';

/**
 * Benchmark of the refresh scheduler (issue 4): 5,000 instances against a fake GitHub that
 * answers after 20 ms. Prints the time of a cycle, the upstream requests per instance and the
 * share answered 304 in the second cycle. Goals: ≤ 10 s per cycle, 1.0 request per instance,
 * ≥ 90 % 304. It asserts only that the work was done, never how fast (machines differ).
 * One run in ten failed: the first cycle reads each failed run's log once to classify it (API.md
 * 16), counted apart from the checks' requests as the workflow state reads are (API.md 6.2: with
 * every changed runs listing, so once per instance in the first cycle, then once in 6 h), and the
 * patterns' cost per failed build is printed, measured on a real Travis log cut to the tail a
 * check reads.
 *
 * Run: node --experimental-vm-modules node_modules/jest/bin/jest.js --selectProjects bench test/bench/monitoring
 * (SQLite by default; TEST_DATABASE=mariadb with TEST_MARIADB_URL set runs it on MariaDB).
 */

const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 5000);
const LATENCY_MS = 20;
const I = DEFAULT_REFRESH_INTERVAL_MS;

describe(`refresh benchmark (${testDatabase()})`, () => {
  let t: TestApp;
  let github: GithubFake;

  beforeAll(async () => {
    github = new GithubFake();
    github.latencyMs = LATENCY_MS;
    github.recordLimit = 0;
    github.defaultRuns = (_owner, repo) => {
      const n = Number(repo.replace(/\D/g, ''));
      return [{ id: 2 * n + 1 }, { id: 2 * n + 2, conclusion: n % 10 === 0 ? 'failure' : 'success' }];
    };
    await github.start();
    t = await createTestApp({ UPSTREAM_TIMEOUT_SECONDS: '15' });
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await github?.stop();
  });

  it(`refreshes ${INSTANCES} instances twice and prints the figures`, async () => {
    const seedStarted = performance.now();
    await seedVersion(t.app.get(DataSource), {
      suites: [
        {
          instances: Array.from({ length: INSTANCES }, (_, i) => ({
            type: 'github' as const,
            url: github.url,
            resource: GithubFake.resource('bench', `repo${i}`, 'ci.yml'),
          })),
        },
      ],
    });
    const seedMs = performance.now() - seedStarted;
    const scheduler = t.app.get(RefreshScheduler);
    const metrics = t.app.get(RefreshMetrics);
    // Time spent writing outcomes (on SQLite it blocks the event loop, so it adds to the cycle).
    const repo = t.app.get(CheckStateRepository);
    const record = repo.recordChecks.bind(repo);
    let writeMs = 0;
    repo.recordChecks = async (records) => {
      const started = performance.now();
      await record(records);
      writeMs += performance.now() - started;
    };

    const cycle = async (
      now: Date,
    ): Promise<{
      ms: number;
      cpuMs: number;
      writeMs: number;
      requests: number;
      logReads: number;
      stateReads: number;
      notModified: number;
    }> => {
      github.resetLog();
      writeMs = 0;
      const started = performance.now();
      const cpu = process.cpuUsage();
      const report = await scheduler.tick(now);
      const ms = performance.now() - started;
      const used = process.cpuUsage(cpu);
      const cpuMs = (used.user + used.system) / 1000;
      expect(report).toMatchObject({ instancesChecked: INSTANCES, failures: 0 });
      expect(report?.upstreamRequests).toBe(github.totalRequests);
      const logReads = github.countMatching(/\/logs$/);
      // The workflow's own record (API.md 6.2): read with a changed runs listing, else once in 6 h.
      const stateReads = github.countMatching(/\/actions\/workflows\/[^/]+$/);
      return {
        ms,
        cpuMs,
        writeMs,
        requests: github.totalRequests - logReads - stateReads,
        logReads,
        stateReads,
        notModified: github.notModifiedCount,
      };
    };

    const first = new Date();
    const one = await cycle(first);
    // Two intervals later every instance is due again (each at its slot of the next window).
    const two = await cycle(new Date(first.getTime() + 2 * I));

    const failedRuns = Math.ceil(INSTANCES / 10);
    // The patterns over a check's tail of a real log, per failed build (CPU, one classifier).
    const classifier = new FailureClassifier();
    const tail = readFileSync(
      new URL('../fixtures/ci-logs/travis-kevinburke-failure.txt', import.meta.url),
      'utf8',
    )
      .repeat(2)
      .slice(-CLASSIFIED_TAIL_BYTES);
    const rounds = 20;
    const classifyStarted = performance.now();
    for (let round = 0; round < rounds; round++) {
      classifier.classify({ fields: ['conclusion: failure'], log: tail });
    }
    const classifyMs = (performance.now() - classifyStarted) / rounds;

    const lines = [
      `monitoring benchmark: ${INSTANCES} instances, fake GitHub answering after ${LATENCY_MS} ms, ${testDatabase()}`,
      `  seeding: ${(seedMs / 1000).toFixed(1)} s`,
      `  cycle 1 (first check, builds written): ${(one.ms / 1000).toFixed(2)} s ` +
        `(CPU ${(one.cpuMs / 1000).toFixed(2)} s, app and fake in one process; ` +
        `database writes ${(one.writeMs / 1000).toFixed(2)} s), ` +
        `${(one.requests / INSTANCES).toFixed(2)} requests/instance ` +
        `(+ ${(one.stateReads / INSTANCES).toFixed(2)} workflow state reads/instance, with every changed listing)`,
      `  cycle 2 (steady state): ${(two.ms / 1000).toFixed(2)} s (CPU ${(two.cpuMs / 1000).toFixed(2)} s; ` +
        `database writes ${(two.writeMs / 1000).toFixed(2)} s), ` +
        `${(two.requests / INSTANCES).toFixed(2)} requests/instance ` +
        `(+ ${(two.stateReads / INSTANCES).toFixed(2)} workflow state reads/instance), ` +
        `${((100 * two.notModified) / two.requests).toFixed(1)} % answered 304`,
      `  classification (API.md 16): ${failedRuns} failed runs, ${one.logReads} log reads in cycle 1 ` +
        `(${(one.logReads / failedRuns).toFixed(2)} per failed build), ${two.logReads} in cycle 2; ` +
        `patterns over a ${Math.round(tail.length / 1024)} KiB tail: ${classifyMs.toFixed(1)} ms per failed build`,
      `  goals: <= 10 s per cycle, 1.0 request per instance, >= 90 % 304`,
      `  totals: ${JSON.stringify(metrics.snapshot())}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);

    expect(one.requests).toBe(INSTANCES);
    expect(two.requests).toBe(INSTANCES);
    expect(one.logReads).toBe(failedRuns);
    expect(two.logReads).toBe(0);
    expect(one.stateReads).toBe(INSTANCES);
    // A 304 reads the state once per STATE_PERIOD_MS, in the check its instance's phase picks.
    expect(two.stateReads).toBeLessThan(INSTANCES / 10);
    expect(two.notModified).toBe(INSTANCES);
  }, 300_000);
});
