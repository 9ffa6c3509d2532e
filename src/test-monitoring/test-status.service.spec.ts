import type { DataSource } from 'typeorm';
import { openMemoryDatabase } from '../../test/support/memory-database.js';
import { seedBuilds, seedVersion, type SeededVersion } from '../../test/support/monitoring-seed.js';
import type { AuthUser } from '../auth/auth-user.js';
import { DomainError } from '../common/errors/domain-error.js';
import {
  TestInstanceEntity,
  TestSuiteEntity,
  WorkflowEntity,
} from '../workflows/entities/registry.entities.js';
import type { WorkflowAccess } from '../workflows/workflow-access.service.js';
import { NOT_AVAILABLE } from '../workflows/workflow-status-source.js';
import { monitoringRepositories } from '../../test/support/monitoring-repositories.js';
import type { CheckStateRepository } from './check-state.repository.js';
import { CheckStateEntity } from './entities/check-state.entity.js';
import { TestStatusService } from './test-status.service.js';
import { StatusSubscriptions, type WorkflowSubscription } from './status-subscriptions.js';
import { Clock } from '../common/clock.js';
import { loadConfig } from '../config/app-config.js';

const CONFIG = loadConfig({ DATA_DIR: '/tmp', JWT_SECRET: 'x'.repeat(40), NODE_ENV: 'test' });

const T0 = new Date('2024-05-01T12:00:00.000Z');
const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);
const USER: AuthUser = { id: 1, username: 'alice', roles: ['user'], jti: 'j', exp: 0, via: 'bearer' };

let dataSource: DataSource;
let service: TestStatusService;
let repo: CheckStateRepository;
let subscriptions: StatusSubscriptions;

/** The registry's lookups without its visibility rule (tested in the registry): by uuid, or not_found. */
function accessTo(
  dataSource: DataSource,
): Pick<WorkflowAccess, 'visibleVersion' | 'visibleSuite' | 'visibleInstance' | 'badgeVersion'> {
  return {
    async badgeVersion(uuid, version, user) {
      return { ...(await this.visibleVersion(uuid, version, user)), audience: 'shared' };
    },
    async visibleVersion(uuid, version) {
      const workflow = await dataSource
        .getRepository(WorkflowEntity)
        .findOne({ where: { uuid }, relations: { versions: true } });
      const found = workflow?.versions?.find((v) => version === undefined || v.version === version);
      if (!workflow || !found) {
        throw new DomainError('not_found', `No workflow ${uuid}`);
      }
      return { workflow, version: found };
    },
    async visibleSuite(uuid) {
      const suite = await dataSource.getRepository(TestSuiteEntity).findOneBy({ uuid });
      if (!suite) {
        throw new DomainError('not_found', `No test suite ${uuid}`);
      }
      return suite;
    },
    async visibleInstance(uuid) {
      const instance = await dataSource
        .getRepository(TestInstanceEntity)
        .findOne({ where: { uuid }, relations: { service: true, suite: true } });
      if (!instance) {
        throw new DomainError('not_found', `No test instance ${uuid}`);
      }
      return instance;
    },
  };
}

async function seed(instances: number, name = 'wf'): Promise<SeededVersion> {
  return seedVersion(dataSource, {
    name,
    suites: [
      {
        instances: Array.from({ length: instances }, (_, i) => ({
          type: 'github' as const,
          url: 'https://api.github.com',
          resource: `repos/o/${name}${i}/actions/workflows/ci.yml`,
        })),
      },
    ],
  });
}

beforeEach(async () => {
  dataSource = await openMemoryDatabase();
  const repositories = monitoringRepositories(dataSource);
  repo = repositories.checkStates;
  subscriptions = new StatusSubscriptions();
  service = new TestStatusService(
    repositories.builds,
    repositories.checkStates,
    repositories.registered,
    accessTo(dataSource),
    new Clock(),
    subscriptions,
    CONFIG,
  );
});

afterEach(async () => {
  await dataSource.destroy();
});

describe('TestStatusService.workflowStatus', () => {
  it('aggregates latest finished builds, lists every latest build, and dates the last check', async () => {
    const wf = await seed(3);
    const [a, b, c] = wf.instances;
    await seedBuilds(dataSource, a.id, [
      { buildId: 'a1', status: 'passed', startedAt: at(-100) },
      { buildId: 'a2', status: 'running', startedAt: at(-10) },
    ]);
    await seedBuilds(dataSource, b.id, [{ buildId: 'b1', status: 'failed', startedAt: at(-50) }]);
    const states = dataSource.getRepository(CheckStateEntity);
    await states.update({ instanceId: a.id }, { lastCheckedAt: at(-5) });
    await states.update({ instanceId: b.id }, { lastCheckedAt: at(-1) });

    const status = await service.workflowStatus(wf.workflowUuid, undefined, USER, T0);
    expect(status.aggregate).toBe('some_passing');
    expect(status.latestBuilds.map((view) => [view.instance.id, view.build.buildId])).toEqual([
      [a.id, 'a2'],
      [b.id, 'b1'],
    ]);
    expect(status.latestBuilds[0].instance.suite?.uuid).toBe(wf.suites[0].uuid);
    expect(status.latestBuilds[0].instance.service?.type).toBe('github');
    expect(status.lastChecked).toEqual(at(-1));
    expect(status.stale).toBe(false);
    expect(status.version.id).toBe(wf.versionId);
    // The third instance has no build: it is in no list and does not count.
    expect(status.latestBuilds.some((view) => view.instance.id === c.id)).toBe(false);
  });

  it('is stale while a last check failed or the service is paused, and no longer after the pause', async () => {
    const wf = await seed(2);
    const states = dataSource.getRepository(CheckStateEntity);
    await states.update({ instanceId: wf.instances[0].id }, { lastCheckFailed: true });
    await expect(service.workflowStatus(wf.workflowUuid, undefined, USER, T0)).resolves.toMatchObject({
      stale: true,
    });
    await states.update({ instanceId: wf.instances[0].id }, { lastCheckFailed: false });
    await repo.pauseService(wf.instances[1].serviceId, at(60));
    await expect(service.workflowStatus(wf.workflowUuid, undefined, USER, T0)).resolves.toMatchObject({
      stale: true,
    });
    await expect(service.workflowStatus(wf.workflowUuid, undefined, USER, at(61))).resolves.toMatchObject({
      stale: false,
      aggregate: 'not_available',
      latestBuilds: [],
      lastChecked: null,
      lastCheck: null,
      failedChecks: [],
    });
  });

  it('is stale, saying why with the instances, while a newest build is too old or the CI disabled a workflow', async () => {
    const wf = await seed(3);
    const [a, b, c] = wf.instances;
    const DAY = 24 * 3600;
    // a: a passing build 31 days before; b: a running build 40 days before and a disabled workflow; c: none.
    await seedBuilds(dataSource, a.id, [{ buildId: 'a1', status: 'passed', startedAt: at(-31 * DAY) }]);
    await seedBuilds(dataSource, b.id, [{ buildId: 'b1', status: 'running', startedAt: at(-40 * DAY) }]);
    const states = dataSource.getRepository(CheckStateEntity);
    await states.update({ instanceId: b.id }, { workflowDisabled: true, lastCheckFailed: true });

    const status = await service.workflowStatus(wf.workflowUuid, undefined, USER, T0);
    expect(status.stale).toBe(true);
    expect(
      status.staleness.map((finding) => [finding.reason, finding.instances.map((instance) => instance.id)]),
    ).toEqual([
      ['check_failed', [b.id]],
      ['no_recent_build', [a.id, b.id]],
      ['schedule_disabled', [b.id]],
    ]);
    // Thirty days after the build it still holds; the rows of a status page say the same.
    await states.update({ instanceId: b.id }, { workflowDisabled: false, lastCheckFailed: false });
    await seedBuilds(dataSource, b.id, [{ buildId: 'b2', status: 'passed', startedAt: at(-DAY) }]);
    const fresh = await service.workflowStatus(wf.workflowUuid, undefined, USER, at(-DAY));
    expect(fresh).toMatchObject({ stale: false, staleness: [] });
    const overviews = await service.overviews([wf.versionId], 30, T0);
    expect(overviews.get(wf.versionId)).toMatchObject({ stale: true, staleReasons: ['no_recent_build'] });
    await states.update({ instanceId: c.id }, { workflowDisabled: true });
    expect((await service.overviews([wf.versionId], 30, at(-DAY))).get(wf.versionId)).toMatchObject({
      stale: true,
      staleReasons: ['schedule_disabled'],
    });
  });

  it('dates the latest check whatever its outcome, and names the instances whose last check failed', async () => {
    const wf = await seed(3);
    const [a, b, c] = wf.instances;
    const states = dataSource.getRepository(CheckStateEntity);
    await states.update({ instanceId: a.id }, { lastCheckedAt: at(-30), lastCheckAt: at(-30) });
    await states.update(
      { instanceId: b.id },
      { lastCheckFailed: true, lastCheckAt: at(-10), lastError: '127.0.0.1:9 is unreachable' },
    );
    await states.update(
      { instanceId: c.id },
      { lastCheckedAt: at(-50), lastCheckFailed: true, lastCheckAt: at(-20), lastError: 'answered 500' },
    );

    const status = await service.workflowStatus(wf.workflowUuid, undefined, USER, T0);
    expect(status.lastChecked).toEqual(at(-30));
    expect(status.lastCheck).toEqual({ at: at(-10), ok: false });
    expect(status.failedChecks.map((failed) => [failed.instance.id, failed.at, failed.error])).toEqual([
      [b.id, at(-10), '127.0.0.1:9 is unreachable'],
      [c.id, at(-20), 'answered 500'],
    ]);
  });
});

describe('TestStatusService.currentWorkflowStatus', () => {
  const STRANGER: AuthUser = { ...USER, id: 2, username: 'bob' };

  /** A service whose access lets only USER see a workflow, counting the lookups. */
  function guarded(): { service: TestStatusService; lookups: (AuthUser | undefined)[] } {
    const lookups: (AuthUser | undefined)[] = [];
    const open = accessTo(dataSource);
    const repositories = monitoringRepositories(dataSource);
    const access: ReturnType<typeof accessTo> = {
      ...open,
      async badgeVersion(uuid, version, user, badgeToken) {
        if (badgeToken !== 'the-badge-token') {
          return { ...(await this.visibleVersion(uuid, version, user)), audience: 'personal' };
        }
        return { ...(await open.visibleVersion(uuid, version, user)), audience: 'shared' };
      },
      async visibleVersion(uuid, version, user) {
        lookups.push(user);
        if (user?.id !== USER.id) {
          throw new DomainError('not_found', `No workflow ${uuid}`);
        }
        return open.visibleVersion(uuid, version, user);
      },
    };
    return {
      service: new TestStatusService(
        repositories.builds,
        repositories.checkStates,
        repositories.registered,
        access,
        new Clock(),
        new StatusSubscriptions(),
        CONFIG,
      ),
      lookups,
    };
  }

  it('computes reads asked for together once per viewer, each by its own visibility', async () => {
    const wf = await seed(1);
    await seedBuilds(dataSource, wf.instances[0].id, [
      { buildId: 'a1', status: 'passed', startedAt: at(-100) },
    ]);
    const { service, lookups } = guarded();

    const [first, second, stranger, anonymous] = await Promise.allSettled([
      service.currentWorkflowStatus(wf.workflowUuid, undefined, USER),
      service.currentWorkflowStatus(wf.workflowUuid, undefined, USER),
      service.currentWorkflowStatus(wf.workflowUuid, undefined, STRANGER),
      service.currentWorkflowStatus(wf.workflowUuid, undefined, undefined),
    ]);
    expect(first).toMatchObject({ status: 'fulfilled', value: { aggregate: 'all_passing' } });
    // One computation: the same answer, not an equal one.
    expect(second).toMatchObject({ status: 'fulfilled' });
    expect((second as PromiseFulfilledResult<unknown>).value).toBe(
      (first as PromiseFulfilledResult<unknown>).value,
    );
    expect(stranger).toMatchObject({ status: 'rejected', reason: { kind: 'not_found' } });
    expect(anonymous).toMatchObject({ status: 'rejected', reason: { kind: 'not_found' } });
    expect(lookups.map((user) => user?.id)).toEqual([USER.id, STRANGER.id, undefined]);
  });

  it("carries the caller's subscriptions to the workflow; none for anonymous callers and registry tokens", async () => {
    const wf = await seed(1);
    const asked: [number, number][] = [];
    subscriptions.readWith((user, workflowId): Promise<WorkflowSubscription[]> => {
      asked.push([user.id, workflowId]);
      return Promise.resolve([
        {
          user: { id: user.id, username: user.username },
          resource: { uuid: wf.workflowUuid, type: 'workflow' },
          created: '1714564800',
          modified: '1714564800',
          events: ['ALL'],
        },
      ]);
    });
    const registry: AuthUser = { ...USER, registry: { id: 3, uuid: 'a-registry' } };

    const [own, anonymous, forRegistry] = await Promise.all([
      service.currentWorkflowStatus(wf.workflowUuid, undefined, USER),
      service.currentWorkflowStatus(wf.workflowUuid, undefined, undefined),
      service.currentWorkflowStatus(wf.workflowUuid, undefined, registry),
    ]);
    expect(own.subscriptions).toEqual([
      expect.objectContaining({ user: { id: USER.id, username: 'alice' } }),
    ]);
    expect(anonymous.subscriptions).toEqual([]);
    expect(forRegistry.subscriptions).toEqual([]);
    expect(asked).toEqual([[USER.id, own.workflow.id]]);
  });

  it('keeps badge reads with different badge tokens apart', async () => {
    const wf = await seed(1);
    const { service } = guarded();
    const [opened, wrong, none] = await Promise.allSettled([
      service.currentBadge(wf.workflowUuid, undefined, undefined, 'the-badge-token'),
      service.currentBadge(wf.workflowUuid, undefined, undefined, 'a-wrong-token'),
      service.currentBadge(wf.workflowUuid, undefined, undefined, undefined),
    ]);
    expect(opened).toMatchObject({ status: 'fulfilled', value: { audience: 'shared' } });
    expect(wrong).toMatchObject({ status: 'rejected', reason: { kind: 'not_found' } });
    expect(none).toMatchObject({ status: 'rejected', reason: { kind: 'not_found' } });
  });

  it('computes again for a read asked for after a write', async () => {
    const wf = await seed(1);
    const { service } = guarded();
    await expect(service.currentWorkflowStatus(wf.workflowUuid, undefined, USER)).resolves.toMatchObject({
      aggregate: 'not_available',
    });
    await seedBuilds(dataSource, wf.instances[0].id, [
      { buildId: 'a1', status: 'failed', startedAt: at(-100) },
    ]);
    await expect(service.currentWorkflowStatus(wf.workflowUuid, undefined, USER)).resolves.toMatchObject({
      aggregate: 'all_failing',
    });
  });
});

describe('TestStatusService builds', () => {
  it('lists an instance’s builds newest first and finds one, not_found for an unknown build', async () => {
    const wf = await seed(1);
    const instance = wf.instances[0];
    await seedBuilds(dataSource, instance.id, [
      { buildId: '1', status: 'passed', startedAt: at(-30) },
      { buildId: '2', status: 'failed', startedAt: at(-20) },
    ]);
    const latest = await service.latestBuilds(instance.uuid, 10, USER);
    expect(latest.map((view) => view.build.buildId)).toEqual(['2', '1']);
    await expect(service.build(instance.uuid, '1', USER)).resolves.toMatchObject({
      build: { buildId: '1', status: 'passed' },
      instance: { uuid: instance.uuid },
    });
    await expect(service.build(instance.uuid, '3', USER)).rejects.toMatchObject({ kind: 'not_found' });
  });

  it('answers the status of a suite', async () => {
    const wf = await seed(2);
    await seedBuilds(dataSource, wf.instances[1].id, [{ buildId: 'x', status: 'passed', startedAt: T0 }]);
    const status = await service.suiteStatus(wf.suites[0].uuid, USER, T0);
    expect(status).toMatchObject({ aggregate: 'all_passing', stale: false });
    expect(status.suite.uuid).toBe(wf.suites[0].uuid);
    expect(status.latestBuilds).toHaveLength(1);
  });
});

describe('TestStatusService.summaries', () => {
  it('summarises many versions: aggregate and the most recent build over their instances', async () => {
    const passing = await seed(2, 'p');
    const mixed = await seed(2, 'm');
    const empty = await seed(1, 'e');
    await seedBuilds(dataSource, passing.instances[0].id, [
      { buildId: 'p1', status: 'passed', startedAt: at(-90) },
    ]);
    await seedBuilds(dataSource, passing.instances[1].id, [
      { buildId: 'p2', status: 'passed', startedAt: at(-80) },
      { buildId: 'p3', status: 'waiting', startedAt: at(-5), durationSeconds: 0 },
    ]);
    await seedBuilds(dataSource, mixed.instances[0].id, [
      { buildId: 'm1', status: 'aborted', startedAt: at(-40) },
    ]);
    await seedBuilds(dataSource, mixed.instances[1].id, [
      { buildId: 'm2', status: 'passed', startedAt: at(-60) },
    ]);

    const summaries = await service.summaries([passing.versionId, mixed.versionId, empty.versionId, 9999]);
    expect(summaries.get(passing.versionId)).toEqual({
      aggregate: 'all_passing',
      latestBuild: {
        instanceId: passing.instances[1].id,
        buildId: 'p3',
        status: 'waiting',
        startedAt: at(-5),
        durationSeconds: 0,
        url: 'https://ci.example.org/builds/p3',
      },
    });
    expect(summaries.get(mixed.versionId)).toMatchObject({
      aggregate: 'some_passing',
      latestBuild: { buildId: 'm1', status: 'aborted' },
    });
    expect(summaries.get(empty.versionId)).toEqual(NOT_AVAILABLE);
    expect(summaries.get(9999)).toEqual(NOT_AVAILABLE);
  });

  it('reads the builds of all versions with one query', async () => {
    const versions = await Promise.all([seed(2, 'a'), seed(2, 'b'), seed(2, 'c')]);
    for (const version of versions) {
      await seedBuilds(dataSource, version.instances[0].id, [
        { buildId: '1', status: 'failed', startedAt: T0 },
      ]);
    }
    const statements: string[] = [];
    const logger = dataSource.logger;
    // Every query passes the data source's logger, whatever path it takes.
    dataSource.logger = Object.assign(Object.create(logger) as typeof logger, {
      logQuery: (query: string) => {
        statements.push(query);
      },
    });
    const summaries = await service.summaries(versions.map((v) => v.versionId));
    expect([...summaries.values()].map((s) => s.aggregate)).toEqual([
      'all_failing',
      'all_failing',
      'all_failing',
    ]);
    dataSource.logger = logger;
    expect(statements).toHaveLength(1);
  });
});
