import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { RefreshMetrics } from '../../src/test-monitoring/refresh-metrics.js';
import { GithubFake } from '../fakes/github-fake.js';
import { baseTestEnv, createTestDatabase, startApp, testDatabase } from '../support/create-test-app.js';
import { seedVersion } from '../support/monitoring-seed.js';

/**
 * Two copies of the service on one database with the scheduler on share the monitoring work:
 * across three refresh cycles, each of 200 instances is fetched exactly once per cycle, counted
 * at the fake. A cycle is a window of REFRESH_INTERVAL_SECONDS aligned on the epoch, in which
 * every instance has its fixed slot (src/test-monitoring/refresh-schedule.ts).
 *
 * What it proves on MariaDB is the real deployment (docker/: two copies, one MariaDB). On SQLite
 * it runs too, with the two copies on one database file in one process: the same leases, the
 * same claims, only SQLite serialises the writers.
 */

const INSTANCES = 200;
const INTERVAL_SECONDS = 10;
const I = INTERVAL_SECONDS * 1000;
const CYCLES = 3;

describe(`monitoring shared by two copies of the service (${testDatabase()})`, () => {
  let github: GithubFake;
  let dataDir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const apps: NestExpressApplication[] = [];

  beforeAll(async () => {
    github = new GithubFake();
    github.recordLimit = 100_000;
    await github.start();
    github.defaultRuns = (_owner, repo) => [{ id: 10_000 + Number(repo.replace(/\D/g, '')) }];
    dataDir = mkdtempSync(join(tmpdir(), 'monitoring-scale-'));
    database = await createTestDatabase(dataDir);
  });

  afterAll(async () => {
    for (const app of apps) {
      await app.close();
    }
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
    await github.stop();
  });

  it(
    `fetches each of ${INSTANCES} instances exactly once per cycle over ${CYCLES} cycles`,
    async () => {
      const env = {
        ...baseTestEnv(dataDir, database.url),
        REFRESH_INTERVAL_SECONDS: String(INTERVAL_SECONDS),
        UPSTREAM_TIMEOUT_SECONDS: '2',
      };
      apps.push(await startApp(env), await startApp(env));

      // Seeded at the start of a cycle's window, so that the first checks (at once) have the
      // whole window: seeded near its end, the instances checked first are due again while the
      // last are still having their first check, which is right, but not what this test shows.
      await new Promise((resolve) => setTimeout(resolve, I - (Date.now() % I) + 100));
      const seededAt = Date.now();
      const seeded = await seedVersion(apps[0].get(DataSource), {
        suites: [
          {
            instances: Array.from({ length: INSTANCES }, (_, i) => ({
              type: 'github' as const,
              url: github.url,
              resource: GithubFake.resource('octo', `r${i}`, 'ci.yml'),
            })),
          },
        ],
      });
      expect(seeded.instances).toHaveLength(INSTANCES);

      // The first check is at once (new instances are due now); the cycles counted start after
      // the window it may fall into, and the test waits until the last counted window is over.
      const firstCounted = Math.floor(seededAt / I) + 2;
      const end = (firstCounted + CYCLES) * I;
      await new Promise((resolve) => setTimeout(resolve, end - Date.now() + 300));
      const metrics = apps.map((app) => app.get(RefreshMetrics));
      for (const app of apps.splice(0)) {
        await app.close();
      }

      // Both copies took part, and every runs read at the fake was one of their checks (the
      // workflow state reads of API.md 6.2 come on top, a changed listing's and a few on 304s).
      const checked = metrics.map((m) => m.snapshot().instancesChecked);
      expect(checked.every((count) => count > 0)).toBe(true);
      const runReads = [...github.arrivals(/\/runs$/).values()].reduce((sum, at) => sum + at.length, 0);
      expect(checked[0] + checked[1]).toBe(runReads);
      expect(metrics.map((m) => m.snapshot().failures)).toEqual([0, 0]);

      const fetches = github.arrivals(/\/runs$/);
      expect(fetches.size).toBe(INSTANCES);
      const perCycle: number[][] = [];
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const from = (firstCounted + cycle) * I;
        const counts = [...fetches.values()].map(
          (times) => times.filter((time) => time >= from && time < from + I).length,
        );
        perCycle.push(counts);
      }
      for (const counts of perCycle) {
        expect(counts.filter((count) => count !== 1)).toEqual([]);
      }
      // The first check came at once: every instance was checked before any was checked again.
      // After the second, checks are one interval apart throughout.
      const firstChecks = [...fetches.values()].map((times) => times[0]);
      const secondChecks = [...fetches.values()].map((times) => times[1]);
      expect(Math.max(...firstChecks)).toBeLessThan(Math.min(...secondChecks));
      for (const times of fetches.values()) {
        for (let i = 2; i < times.length; i++) {
          expect(Math.abs(times[i] - times[i - 1] - I)).toBeLessThan(0.5 * I);
        }
      }
      process.stdout.write(
        `monitoring-scale (${testDatabase()}): ${github.totalRequests} fetches, ` +
          `copies checked ${checked.join(' + ')}\n`,
      );
    },
    (CYCLES + 4) * I + 60_000,
  );
});
