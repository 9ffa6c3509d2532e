import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { DataSource } from 'typeorm';
import { GithubFake } from '../../test/fakes/github-fake.js';
import { TravisFake } from '../../test/fakes/travis-fake.js';
import { openMemoryDatabase } from '../../test/support/memory-database.js';
import { seedVersion, type SeedInstance } from '../../test/support/monitoring-seed.js';
import { loadConfig, type AppConfig } from '../config/app-config.js';
import {
  checkStateRows,
  monitoringRepositories,
  pausedUntil,
  type CheckStateRow,
} from '../../test/support/monitoring-repositories.js';
import { TestServiceEntity } from '../workflows/entities/test-service.entity.js';
import { BuildEntity } from './entities/build.entity.js';
import { CheckStateEntity } from './entities/check-state.entity.js';
import { InstanceChecker } from './instance-checker.js';
import { FailureClassifier } from './failures/failure-classifier.js';
import { RefreshMetrics } from './refresh-metrics.js';
import { DEFAULT_REFRESH_INTERVAL_MS, nextRegularCheck } from './refresh-schedule.js';
import { RefreshScheduler } from './refresh.scheduler.js';
import { MAX_CONCURRENCY_PER_HOST } from './refresh-run.js';
import { RefreshService } from './refresh.service.js';
import { GithubActionsService } from './testing-services/github-actions.service.js';
import { JenkinsService } from './testing-services/jenkins.service.js';
import { TestingServiceRegistry } from './testing-services/testing-service.js';
import { TravisService } from './testing-services/travis.service.js';

const T0 = new Date('2024-05-01T12:00:00.000Z');
const I = DEFAULT_REFRESH_INTERVAL_MS;

let dataDir: string;
let github: GithubFake;
let travis: TravisFake;
let dataSource: DataSource;
let metrics: RefreshMetrics;
let refresher: RefreshService;
let scheduler: RefreshScheduler;

function subjects(config: AppConfig): void {
  metrics = new RefreshMetrics();
  const { builds, checkStates } = monitoringRepositories(dataSource);
  const services = [
    new GithubActionsService(config, metrics),
    new TravisService(config, metrics),
    new JenkinsService(config, metrics),
  ];
  const clients = new TestingServiceRegistry(() => services, config);
  clients.onModuleInit();
  refresher = new RefreshService(
    builds,
    checkStates,
    new InstanceChecker(clients, config, new FailureClassifier()),
    metrics,
    config,
  );
  scheduler = new RefreshScheduler(new SchedulerRegistry(), checkStates, refresher, metrics, config);
}

function configWith(env: Record<string, string> = {}): AppConfig {
  return loadConfig({
    DATA_DIR: dataDir,
    JWT_SECRET: 'x'.repeat(40),
    ALLOW_PRIVATE_NETWORK_LINKS: 'true',
    UPSTREAM_TIMEOUT_SECONDS: '1',
    REFRESH_INTERVAL_SECONDS: '0',
    ...env,
  });
}

function githubInstances(count: number, prefix = 'r'): SeedInstance[] {
  return Array.from({ length: count }, (_, i) => {
    github.setRuns('o', `${prefix}${i}`, 'ci.yml', [{ id: 100 + i }]);
    return { type: 'github', url: github.url, resource: GithubFake.resource('o', `${prefix}${i}`, 'ci.yml') };
  });
}

function instanceRows(): Promise<CheckStateRow[]> {
  return checkStateRows(dataSource);
}

beforeAll(async () => {
  Logger.overrideLogger(false);
  dataDir = mkdtempSync(join(tmpdir(), 'refresh-spec-'));
  github = new GithubFake();
  travis = new TravisFake();
  await Promise.all([github.start(), travis.start()]);
});

afterAll(async () => {
  await Promise.all([github.stop(), travis.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
});

beforeEach(async () => {
  for (const fake of [github, travis]) {
    fake.heal();
    fake.resetLog();
    fake.latencyMs = 0;
  }
  dataSource = await openMemoryDatabase();
  subjects(configWith());
});

afterEach(async () => {
  await dataSource.destroy();
});

/** GitHub runs listings: the checks themselves, without the workflow state reads that follow new ones. */
function githubRunReads(): number {
  return github.requests.filter((request) => request.path.endsWith('/runs')).length;
}

describe('RefreshScheduler.tick', () => {
  it('checks each due instance once, then sends If-None-Match at its next slot and stores nothing new', async () => {
    await seedVersion(dataSource, { dueAt: T0, suites: [{ instances: githubInstances(3) }] });

    const first = await scheduler.tick(T0);
    // Each new listing is followed by a read of the workflow's state (API.md 6.2).
    expect(first).toMatchObject({ instancesChecked: 3, upstreamRequests: 6, notModified: 0, failures: 0 });
    expect(githubRunReads()).toBe(3);
    await expect(scheduler.tick(T0)).resolves.toBeUndefined();
    expect(githubRunReads()).toBe(3);

    const rows = await instanceRows();
    for (const row of rows) {
      expect(row.nextCheckAt).toEqual(nextRegularCheck(row.id, T0, I));
      expect(row.etag).toMatch(/^W\/"/);
      expect(row.leaseOwner).toBeNull();
    }
    const builds = await dataSource.getRepository(BuildEntity).find({ order: { id: 'ASC' } });
    expect(builds).toHaveLength(3);

    github.resetLog();
    const second = await scheduler.tick(new Date(T0.getTime() + 2 * I));
    expect(second).toMatchObject({ instancesChecked: 3, upstreamRequests: 3, notModified: 3 });
    expect(github.requests.map((r) => r.headers['if-none-match']).sort()).toEqual(
      rows.map((r) => r.etag).sort(),
    );
    await expect(dataSource.getRepository(BuildEntity).find({ order: { id: 'ASC' } })).resolves.toEqual(
      builds,
    );
    expect(metrics.cycles).toBe(2);
  });

  it(`sends at most ${MAX_CONCURRENCY_PER_HOST} requests at a time to one host, and hosts in parallel`, async () => {
    const count = MAX_CONCURRENCY_PER_HOST * 3;
    const travisInstances: SeedInstance[] = Array.from({ length: MAX_CONCURRENCY_PER_HOST }, (_, i) => {
      travis.setRepo(`o/t${i}`, [{ id: 500 + i }]);
      return { type: 'travis', url: travis.url, resource: TravisFake.resource(`o/t${i}`) };
    });
    await seedVersion(dataSource, {
      dueAt: T0,
      suites: [{ instances: githubInstances(count) }, { instances: travisInstances }],
    });
    github.latencyMs = 150;
    travis.latencyMs = 150;
    await scheduler.tick(T0);
    expect(githubRunReads()).toBe(count);
    expect(travis.totalRequests).toBe(MAX_CONCURRENCY_PER_HOST);
    expect(github.peakInFlight).toBe(MAX_CONCURRENCY_PER_HOST);
    expect(travis.peakInFlight).toBe(MAX_CONCURRENCY_PER_HOST);
    // Travis's one round runs beside GitHub's three, not after them: every Travis request
    // arrived before GitHub's last round began.
    const arrivals = (requests: { seq: number }[]) => requests.map((r) => r.seq).sort((a, b) => a - b);
    const githubLastRound = arrivals(github.requests).slice(-MAX_CONCURRENCY_PER_HOST)[0];
    expect(Math.max(...arrivals(travis.requests))).toBeLessThan(githubLastRound);
  });

  it('pauses a rate-limited service: no request to it until the reset, other services still checked', async () => {
    travis.setRepo('o/t', [{ id: 7 }]);
    const seeded = await seedVersion(dataSource, {
      dueAt: T0,
      suites: [
        {
          instances: [
            ...githubInstances(1),
            { type: 'travis', url: travis.url, resource: TravisFake.resource('o/t') },
          ],
        },
      ],
    });
    const reset = new Date(T0.getTime() + 3600_000);
    github.limitRate({ resetAt: reset });

    const report = await scheduler.tick(T0);
    expect(report).toMatchObject({ rateLimited: 1, pausedServices: 1 });
    expect(githubRunReads()).toBe(1);
    expect(travis.totalRequests).toBe(1);
    const [ghRow] = await instanceRows();
    expect(ghRow).toMatchObject({
      lastCheckFailed: false,
      failureCount: 0,
      nextCheckAt: T0,
      leaseOwner: null,
    });
    await expect(pausedUntil(dataSource, seeded.instances[0].serviceId)).resolves.toEqual(reset);

    await scheduler.tick(new Date(reset.getTime() - 1000));
    expect(githubRunReads()).toBe(1);
    github.heal();
    await scheduler.tick(new Date(reset.getTime() + 1000));
    expect(githubRunReads()).toBe(2);
  });

  it('backs a failing instance off exponentially and keeps its builds', async () => {
    await seedVersion(dataSource, { dueAt: T0, suites: [{ instances: githubInstances(1) }] });
    await scheduler.tick(T0);
    github.fail({ kind: 'status', status: 500 });
    let now = new Date(T0.getTime() + 2 * I);
    const delays: number[] = [];
    for (let failure = 1; failure <= 3; failure++) {
      const report = await scheduler.tick(now);
      expect(report).toMatchObject({ failures: 1 });
      const [row] = await instanceRows();
      expect(row).toMatchObject({ failureCount: failure, lastCheckFailed: true });
      expect(row.lastError).toContain('500');
      delays.push(row.nextCheckAt.getTime() - now.getTime());
      now = row.nextCheckAt;
    }
    expect(delays[0]).toBeGreaterThanOrEqual(1.5 * I);
    expect(delays[1]).toBeGreaterThanOrEqual(3 * I);
    expect(delays[2]).toBeGreaterThanOrEqual(6 * I);
    await expect(dataSource.getRepository(BuildEntity).count()).resolves.toBe(1);

    github.heal();
    await scheduler.tick(now);
    const [row] = await instanceRows();
    expect(row).toMatchObject({ failureCount: 0, lastCheckFailed: false, lastError: null });
  });

  it('records an instance of a service type without a client as a failed check', async () => {
    await seedVersion(dataSource, {
      dueAt: T0,
      suites: [
        { instances: [{ type: 'github', url: github.url, resource: 'repos/o/r/actions/workflows/x' }] },
      ],
    });
    await dataSource.getRepository(TestServiceEntity).update({ type: 'github' }, { type: 'circleci' });
    await expect(scheduler.tick(T0)).resolves.toMatchObject({ failures: 1, upstreamRequests: 0 });
    const [row] = await instanceRows();
    expect(row.lastError).toBe("no client for service type 'circleci'");
  });

  it('waits at shutdown for the checks in flight and releases those not started', async () => {
    const count = MAX_CONCURRENCY_PER_HOST + 4;
    await seedVersion(dataSource, { dueAt: T0, suites: [{ instances: githubInstances(count) }] });
    github.latencyMs = 300;
    const cycle = scheduler.tick(T0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    scheduler.onModuleDestroy();
    await scheduler.beforeApplicationShutdown();
    await cycle;
    const rows = await instanceRows();
    expect(rows.filter((row) => row.lastCheckedAt !== null)).toHaveLength(MAX_CONCURRENCY_PER_HOST);
    expect(rows.every((row) => row.leaseOwner === null)).toBe(true);
    expect(githubRunReads()).toBe(MAX_CONCURRENCY_PER_HOST);
    await expect(scheduler.tick(T0)).resolves.toBeUndefined();
  });
});

describe('RefreshScheduler timer', () => {
  it('ticks on its own when the interval is set, and stops at shutdown', async () => {
    subjects(configWith({ REFRESH_INTERVAL_SECONDS: '2' }));
    await seedVersion(dataSource, { suites: [{ instances: githubInstances(1) }] });
    expect(scheduler.tickMs).toBe(200);
    await scheduler.onApplicationBootstrap();
    for (let wait = 0; wait < 40 && githubRunReads() === 0; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(githubRunReads()).toBe(1);
    scheduler.onModuleDestroy();
    await scheduler.beforeApplicationShutdown();
    await dataSource
      .getRepository(CheckStateEntity)
      .update({ failureCount: 0 }, { nextCheckAt: new Date(0) });
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(githubRunReads()).toBe(1);
  });

  it('checks at once, after a restart with a shorter interval, what the longer one planned later, keeping back-offs', async () => {
    subjects(configWith({ REFRESH_INTERVAL_SECONDS: '600' }));
    await seedVersion(dataSource, { dueAt: T0, suites: [{ instances: githubInstances(4) }] });
    await scheduler.tick(T0);
    const planned = await instanceRows();
    expect(planned.every((row) => row.nextCheckAt.getTime() > T0.getTime() + 60_000)).toBe(true);
    // One instance failing, backed off under the old interval: its back-off stands.
    const backedOff = new Date(T0.getTime() + 40 * 60_000);
    await dataSource
      .getRepository(CheckStateEntity)
      .update(
        { instanceId: planned[0].id },
        { failureCount: 2, lastCheckFailed: true, nextCheckAt: backedOff },
      );
    github.resetLog();

    const restart = new Date(T0.getTime() + 5000);
    subjects(configWith({ REFRESH_INTERVAL_SECONDS: '2' }));
    const { checkStates } = monitoringRepositories(dataSource);
    scheduler = new RefreshScheduler(
      new SchedulerRegistry(),
      checkStates,
      refresher,
      metrics,
      configWith({
        REFRESH_INTERVAL_SECONDS: '2',
      }),
      { nowMs: () => restart.getTime() },
    );
    await scheduler.onApplicationBootstrap();
    for (let wait = 0; wait < 100 && githubRunReads() < 3; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    scheduler.onModuleDestroy();
    await scheduler.beforeApplicationShutdown();
    expect(githubRunReads()).toBe(3);
    const rows = await instanceRows();
    expect(rows.find((row) => row.id === planned[0].id)?.nextCheckAt).toEqual(backedOff);
    for (const row of rows.filter((row) => row.id !== planned[0].id)) {
      expect(row.lastCheckedAt).toEqual(restart);
      expect(row.nextCheckAt).toEqual(nextRegularCheck(row.id, restart, 2000));
    }
  });

  it('keeps the due times of a restart with the same interval', async () => {
    subjects(configWith({ REFRESH_INTERVAL_SECONDS: '600' }));
    await seedVersion(dataSource, { dueAt: T0, suites: [{ instances: githubInstances(4) }] });
    await scheduler.tick(T0);
    const planned = await instanceRows();
    await expect(refresher.keepToInterval(new Date(T0.getTime() + 5000))).resolves.toBe(0);
    await expect(instanceRows()).resolves.toEqual(planned);
  });

  it('does not tick on its own when REFRESH_INTERVAL_SECONDS=0', async () => {
    await seedVersion(dataSource, { suites: [{ instances: githubInstances(1) }] });
    await scheduler.onApplicationBootstrap();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(githubRunReads()).toBe(0);
    scheduler.onModuleDestroy();
  });
});

describe('RefreshService.refresh', () => {
  it('leaves instances whose lease may have run out to other copies', async () => {
    await seedVersion(dataSource, { dueAt: T0, suites: [{ instances: githubInstances(2) }] });
    const { checkStates } = monitoringRepositories(dataSource);
    const claimed = await checkStates.claimDue(T0, 'copy-a', 10, 60_000);
    await refresher.refresh(
      { instances: claimed, now: T0, leaseDeadline: Date.now() - 1 },
      { stopping: () => false },
    );
    expect(githubRunReads()).toBe(0);
    expect((await instanceRows()).every((row) => row.leaseOwner === null && row.lastCheckedAt === null)).toBe(
      true,
    );
  });
});
