import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { GithubFake } from '../../test/fakes/github-fake.js';
import { openMemoryDatabase } from '../../test/support/memory-database.js';
import {
  checkStateRows,
  monitoringRepositories,
  pausedUntil,
  type MonitoringRepositories,
} from '../../test/support/monitoring-repositories.js';
import { seedVersion } from '../../test/support/monitoring-seed.js';
import { loadConfig, type AppConfig } from '../config/app-config.js';
import { TestServiceEntity } from '../workflows/entities/test-service.entity.js';
import { BuildEntity } from './entities/build.entity.js';
import { InstanceChecker } from './instance-checker.js';
import { FailureClassifier } from './failures/failure-classifier.js';
import { RefreshMetrics } from './refresh-metrics.js';
import { DEFAULT_REFRESH_INTERVAL_MS, nextRegularCheck } from './refresh-schedule.js';
import { RefreshService } from './refresh.service.js';
import { GithubActionsService } from './testing-services/github-actions.service.js';
import { TestingServiceRegistry } from './testing-services/testing-service.js';

const T0 = new Date('2024-05-01T12:00:00.000Z');
const FAR = Number.MAX_SAFE_INTEGER;
const RUNNING = { stopping: () => false };

let dataDir: string;
let github: GithubFake;
let dataSource: DataSource;
let repositories: MonitoringRepositories;
let metrics: RefreshMetrics;

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

function serviceFor(config: AppConfig): RefreshService {
  const clients = new TestingServiceRegistry(() => [new GithubActionsService(config, metrics)], config);
  clients.onModuleInit();
  return new RefreshService(
    repositories.builds,
    repositories.checkStates,
    new InstanceChecker(clients, config, new FailureClassifier()),
    metrics,
    config,
  );
}

async function seedGithub(count: number): Promise<void> {
  await seedVersion(dataSource, {
    dueAt: T0,
    suites: [
      {
        instances: Array.from({ length: count }, (_, i) => {
          github.setRuns('o', `r${i}`, 'ci.yml', [{ id: 100 + i }]);
          return {
            type: 'github' as const,
            url: github.url,
            resource: GithubFake.resource('o', `r${i}`, 'ci.yml'),
          };
        }),
      },
    ],
  });
}

beforeAll(async () => {
  Logger.overrideLogger(false);
  dataDir = mkdtempSync(join(tmpdir(), 'refresh-service-spec-'));
  github = new GithubFake();
  await github.start();
});

afterAll(async () => {
  await github.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

beforeEach(async () => {
  github.heal();
  github.resetLog();
  dataSource = await openMemoryDatabase();
  repositories = monitoringRepositories(dataSource);
  metrics = new RefreshMetrics();
});

afterEach(async () => {
  await dataSource.destroy();
});

/** GitHub runs listings: the checks themselves, without the workflow state reads that follow new ones. */
function githubRunReads(): number {
  return github.requests.filter((request) => request.path.endsWith('/runs')).length;
}

describe('RefreshService', () => {
  it('uses the configured interval, or the default while the timer is off', () => {
    expect(serviceFor(configWith()).intervalMs).toBe(DEFAULT_REFRESH_INTERVAL_MS);
    expect(serviceFor(configWith({ REFRESH_INTERVAL_SECONDS: '60' })).intervalMs).toBe(60_000);
  });

  it('checks a claimed batch with its service’s client and records each outcome with its next slot', async () => {
    const service = serviceFor(configWith({ REFRESH_INTERVAL_SECONDS: '60' }));
    await seedGithub(2);
    const claimed = await repositories.checkStates.claimDue(T0, 'copy-a', 10, 60_000);
    await service.refresh({ instances: claimed, now: T0, leaseDeadline: FAR }, RUNNING);
    expect(githubRunReads()).toBe(2);
    for (const row of await checkStateRows(dataSource)) {
      expect(row).toMatchObject({ leaseOwner: null, lastCheckedAt: T0, failureCount: 0 });
      expect(row.nextCheckAt).toEqual(nextRegularCheck(row.id, T0, 60_000));
      expect(row.etag).toMatch(/^W\/"/);
    }
    await expect(dataSource.getRepository(BuildEntity).count()).resolves.toBe(2);
    expect(metrics.snapshot()).toMatchObject({ instancesChecked: 2, failures: 0 });
  });

  it('classifies new failing builds once: the CI field first, else the tail of the log read once', async () => {
    const service = serviceFor(configWith());
    await seedGithub(1);
    github.setRuns('o', 'r0', 'ci.yml', [
      { id: 200, conclusion: 'failure' },
      { id: 201, conclusion: 'cancelled' },
      { id: 202, conclusion: 'success' },
    ]);
    github.setRunLogs('o', 'r0', 200, [
      { name: 'build', text: '2024-05-01T11:00:00.0000000Z ##[error]No space left on device : /tmp\n' },
    ]);
    const logReads = () => github.requests.filter((request) => request.path.endsWith('/logs')).length;
    const claimed = await repositories.checkStates.claimDue(T0, 'copy-a', 10, 60_000);
    await service.refresh({ instances: claimed, now: T0, leaseDeadline: FAR }, RUNNING);
    const stored = async () =>
      (await repositories.builds.latestBuilds(claimed[0].id, 10)).map((build) => [
        build.buildId,
        build.failure,
      ]);
    await expect(stored()).resolves.toEqual(
      expect.arrayContaining([
        [
          '200_1',
          {
            class: 'infrastructure',
            reason: 'no space left on the runner',
            evidence: ['##[error]No space left on device : /tmp'],
          },
        ],
        [
          '201_1',
          { class: 'infrastructure', reason: 'cancelled on the CI', evidence: ['conclusion: cancelled'] },
        ],
        ['202_1', undefined],
      ]),
    );
    expect(logReads()).toBe(1);

    // A new run changes the listing: the failures stored are not classified, nor their logs read, again.
    github.addRun('o', 'r0', 'ci.yml', { id: 203, conclusion: 'success' });
    const again = await repositories.checkStates.claimDue(
      new Date(T0.getTime() + 3_600_000),
      'copy-a',
      10,
      60_000,
    );
    await service.refresh(
      { instances: again, now: new Date(T0.getTime() + 3_600_000), leaseDeadline: FAR },
      RUNNING,
    );
    expect(logReads()).toBe(1);
    await expect(stored()).resolves.toContainEqual(['203_1', undefined]);
    await expect(stored()).resolves.toContainEqual([
      '200_1',
      expect.objectContaining({ class: 'infrastructure', reason: 'no space left on the runner' }),
    ]);
  });

  it('records a check of a service type without a client as a failure, backed off', async () => {
    const service = serviceFor(configWith());
    await seedGithub(1);
    await dataSource.getRepository(TestServiceEntity).update({ type: 'github' }, { type: 'circleci' });
    const claimed = await repositories.checkStates.claimDue(T0, 'copy-a', 10, 60_000);
    await service.refresh({ instances: claimed, now: T0, leaseDeadline: FAR }, RUNNING);
    expect(githubRunReads()).toBe(0);
    const [row] = await checkStateRows(dataSource);
    expect(row).toMatchObject({
      failureCount: 1,
      lastCheckFailed: true,
      lastError: "no client for service type 'circleci'",
      leaseOwner: null,
    });
    expect(row.nextCheckAt.getTime()).toBeGreaterThan(T0.getTime() + DEFAULT_REFRESH_INTERVAL_MS);
    expect(metrics.snapshot()).toMatchObject({ failures: 1 });
  });

  it('pauses a rate-limited service for every copy and releases its instances still due', async () => {
    const service = serviceFor(configWith());
    await seedGithub(1);
    const reset = new Date(T0.getTime() + 3600_000);
    github.limitRate({ resetAt: reset });
    const claimed = await repositories.checkStates.claimDue(T0, 'copy-a', 10, 60_000);
    await service.refresh({ instances: claimed, now: T0, leaseDeadline: FAR }, RUNNING);
    await expect(pausedUntil(dataSource, claimed[0].service.id)).resolves.toEqual(reset);
    const [row] = await checkStateRows(dataSource);
    expect(row).toMatchObject({ leaseOwner: null, failureCount: 0, lastCheckFailed: false, nextCheckAt: T0 });
    expect(metrics.snapshot()).toMatchObject({ rateLimited: 1, failures: 0 });
    await expect(repositories.checkStates.claimDue(T0, 'copy-b', 10, 60_000)).resolves.toEqual([]);
  });

  it('releases, without a request, the checks of a stopping copy and those past the lease deadline', async () => {
    const service = serviceFor(configWith());
    await seedGithub(2);
    const [first, second] = await repositories.checkStates.claimDue(T0, 'copy-a', 10, 60_000);
    await service.refresh({ instances: [first], now: T0, leaseDeadline: FAR }, { stopping: () => true });
    await service.refresh({ instances: [second], now: T0, leaseDeadline: Date.now() - 1 }, RUNNING);
    expect(githubRunReads()).toBe(0);
    const rows = await checkStateRows(dataSource);
    expect(rows.every((row) => row.leaseOwner === null && row.lastCheckedAt === null)).toBe(true);
    await expect(repositories.checkStates.claimDue(T0, 'copy-b', 10, 60_000)).resolves.toHaveLength(2);
  });

  it('shares one run between batches added to it, and writes every outcome by the time it finishes', async () => {
    const service = serviceFor(configWith());
    await seedGithub(3);
    const run = service.start(RUNNING);
    await run.add({
      instances: await repositories.checkStates.claimDue(T0, 'copy-a', 2, 60_000),
      now: T0,
      leaseDeadline: FAR,
    });
    await run.add({
      instances: await repositories.checkStates.claimDue(T0, 'copy-a', 2, 60_000),
      now: T0,
      leaseDeadline: FAR,
    });
    await run.finish();
    expect(run.backlog).toBe(0);
    expect(githubRunReads()).toBe(3);
    expect(
      (await checkStateRows(dataSource)).every((row) => row.lastCheckedAt?.getTime() === T0.getTime()),
    ).toBe(true);
  });
});
