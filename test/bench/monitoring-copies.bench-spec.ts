import { readFileSync, rmSync } from 'node:fs';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { DEFAULT_REFRESH_INTERVAL_MS } from '../../src/test-monitoring/refresh-schedule.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { GithubFake } from '../fakes/github-fake.js';
import { createTestApp, startApp, type TestApp } from '../support/create-test-app.js';
import { startMariaDb, stopMariaDb } from '../support/mariadb-server.mjs';
import { seedVersion } from '../support/monitoring-seed.js';

/**
 * Benchmark of monitoring at scale (issue 10, point 7): two copies of the service on one MariaDB
 * refresh 5,000 and then (on a fresh database) 50,000 instances against a fake GitHub answering
 * after 20 ms; each size twice, the second cycle in steady state. Prints per instance: CPU of the
 * Node process (both copies and the fake, in one process) and of the MariaDB server, SQL
 * statements the server received (its `Questions` counter), upstream requests (the runs listings,
 * and the workflow states read with them); and the share of 304s in steady state. Goals: cost per
 * instance flat from 5,000 to 50,000, 1.0 request per instance in steady state, >= 90 % 304.
 * A first check also reads each workflow's state (API.md 6.2: a listing that changed reads it),
 * so the first cycle makes 2.0. In steady state a 304 reads it once per STATE_PERIOD_MS (6 h) of
 * the instance, which the test app's timer-less schedule never reaches: at the default interval
 * of 5 minutes that adds 1/72 (0.014) request per instance and cycle. Asserts only that the work
 * was done (every instance checked once, its runs read once), never how fast.
 *
 * Run: npm run bench -- monitoring-copies (starts its own throwaway MariaDB).
 * BENCH_SIZES=5000,50000 changes the sizes.
 */

const SIZES = (process.env.BENCH_SIZES ?? '5000,50000').split(',').map(Number);
const LATENCY_MS = 20;
const RUNS_PATH = /\/actions\/workflows\/[^/]+\/runs$/;
const STATE_PATH = /\/actions\/workflows\/[^/]+$/;
const I = DEFAULT_REFRESH_INTERVAL_MS;

/** CPU time (user + system) a process has used so far, in ms (Linux; clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function questions(dataSource: DataSource): Promise<number> {
  const rows = await dataSource.query<{ Value: string }[]>("SHOW GLOBAL STATUS LIKE 'Questions'");
  return Number(rows[0].Value);
}

interface Cycle {
  seconds: number;
  nodeCpuMs: number;
  dbCpuMs: number;
  statements: number;
  requests: number;
  runsReads: number;
  stateReads: number;
  notModified: number;
  checkedBy: number[];
}

describe('monitoring at scale: two copies on one MariaDB', () => {
  let server: Awaited<ReturnType<typeof startMariaDb>>;
  let github: GithubFake;

  beforeAll(async () => {
    server = await startMariaDb();
    process.env.TEST_MARIADB_URL = server.rootUrl;
    process.env.TEST_DATABASE = 'mariadb';
    github = new GithubFake();
    github.latencyMs = LATENCY_MS;
    github.recordLimit = 0;
    github.defaultRuns = (_owner, repo) => {
      const n = Number(repo.replace(/\D/g, ''));
      return [{ id: 2 * n + 1 }, { id: 2 * n + 2, conclusion: n % 10 === 0 ? 'failure' : 'success' }];
    };
    await github.start();
  }, 120_000);

  afterAll(async () => {
    await github?.stop();
    if (server) {
      await stopMariaDb(server.pid, server.dir);
      rmSync(server.dir, { recursive: true, force: true });
    }
  });

  it(`refreshes ${SIZES.join(' and ')} instances with two copies and prints the cost per instance`, async () => {
    const lines: string[] = [];
    for (const size of SIZES) {
      const first: TestApp = await createTestApp({ UPSTREAM_TIMEOUT_SECONDS: '15' });
      let second: NestExpressApplication | undefined;
      try {
        second = await startApp(first.env);
        const dataSource = first.app.get(DataSource);
        const seedStarted = performance.now();
        for (let seeded = 0; seeded < size; seeded += 5000) {
          await seedVersion(dataSource, {
            suites: [
              {
                instances: Array.from({ length: Math.min(5000, size - seeded) }, (_, i) => ({
                  type: 'github' as const,
                  url: github.url,
                  resource: GithubFake.resource('bench', `repo${seeded + i}`, 'ci.yml'),
                })),
              },
            ],
          });
        }
        const seedSeconds = (performance.now() - seedStarted) / 1000;
        const schedulers = [first.app.get(RefreshScheduler), second.get(RefreshScheduler)];

        const cycle = async (now: Date): Promise<Cycle> => {
          github.resetLog();
          const statementsBefore = await questions(dataSource);
          const dbBefore = cpuMsOf(server.pid);
          const cpu = process.cpuUsage();
          const started = performance.now();
          const reports = await Promise.all(schedulers.map((scheduler) => scheduler.tick(now)));
          const seconds = (performance.now() - started) / 1000;
          const used = process.cpuUsage(cpu);
          const result = {
            seconds,
            nodeCpuMs: (used.user + used.system) / 1000,
            dbCpuMs: cpuMsOf(server.pid) - dbBefore,
            // Less the one statement that read the counter.
            statements: (await questions(dataSource)) - statementsBefore - 1,
            requests: github.totalRequests,
            runsReads: github.countMatching(RUNS_PATH),
            stateReads: github.countMatching(STATE_PATH),
            notModified: github.notModifiedCount,
            checkedBy: reports.map((report) => report?.instancesChecked ?? 0),
          };
          expect(result.checkedBy.reduce((a, b) => a + b, 0)).toBe(size);
          return result;
        };

        const start = new Date();
        const one = await cycle(start);
        // Two intervals later every instance is due again.
        const two = await cycle(new Date(start.getTime() + 2 * I));
        const per = (value: number): string => (value / size).toFixed(3);
        lines.push(
          `${size} instances (seeded in ${seedSeconds.toFixed(1)} s):`,
          ...(
            [
              ['cycle 1 (first check)', one],
              ['cycle 2 (steady state)', two],
            ] as const
          ).map(
            ([name, c]) =>
              `  ${name}: ${c.seconds.toFixed(1)} s, copies checked ${c.checkedBy.join(' + ')}; per instance: ` +
              `Node CPU ${per(c.nodeCpuMs)} ms, MariaDB CPU ${per(c.dbCpuMs)} ms, ` +
              `SQL statements ${per(c.statements)}, upstream requests ${per(c.requests)} ` +
              `(runs ${per(c.runsReads)}, workflow state ${per(c.stateReads)}); ` +
              `${((100 * c.notModified) / Math.max(1, c.requests)).toFixed(1)} % answered 304`,
          ),
        );
        expect(one.runsReads).toBe(size);
        expect(two.runsReads).toBe(size);
      } finally {
        await second?.close();
        await first.close();
      }
    }
    process.stdout.write(
      `monitoring at scale: two copies, one MariaDB, fake GitHub answering after ${LATENCY_MS} ms\n` +
        `${lines.join('\n')}\n` +
        `goals: cost per instance flat from the smaller size to the larger, 1.0 request per instance and >= 90 % 304 in steady state\n`,
    );
  }, 3_600_000);
});
