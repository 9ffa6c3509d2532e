import type { DataSource } from 'typeorm';
import { openMemoryDatabase } from '../../test/support/memory-database.js';
import { seedVersion, type SeededVersion } from '../../test/support/monitoring-seed.js';
import {
  checkStateRow,
  monitoringRepositories,
  pausedUntil,
} from '../../test/support/monitoring-repositories.js';
import { MAX_STORED_BUILDS } from './builds.repository.js';
import type { CheckStateRepository } from './check-state.repository.js';
import { CheckStateEntity } from './entities/check-state.entity.js';
import { BuildEntity } from './entities/build.entity.js';
import type { Build } from './testing-services/testing-service.js';
import { WorkflowEntity } from '../workflows/entities/registry.entities.js';

const T0 = new Date('2024-05-01T12:00:00.000Z');
const LEASE = 60_000;
const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);

let dataSource: DataSource;
let checkStates: CheckStateRepository;

function build(buildId: string, status: Build['status'], startedAt: Date, durationSeconds = 30): Build {
  return { buildId, status, startedAt, durationSeconds, url: `https://ci.example.org/${buildId}` };
}

async function instanceRow(id: number): Promise<CheckStateEntity> {
  return checkStateRow(dataSource, id);
}

async function buildRows(instanceId: number): Promise<BuildEntity[]> {
  return dataSource.getRepository(BuildEntity).find({ where: { instanceId }, order: { id: 'ASC' } });
}

async function seed(count: number, dueAt = T0): Promise<SeededVersion> {
  return seedVersion(dataSource, {
    dueAt,
    suites: [
      {
        instances: Array.from({ length: count }, (_, i) => ({
          type: 'github' as const,
          url: 'https://api.github.com',
          resource: `repos/o/r${i}/actions/workflows/ci.yml`,
        })),
      },
    ],
  });
}

beforeEach(async () => {
  dataSource = await openMemoryDatabase();
  ({ checkStates } = monitoringRepositories(dataSource));
});

afterEach(async () => {
  await dataSource.destroy();
});

describe('CheckStateRepository.claimDue', () => {
  it('leases due instances with their service, most overdue first, up to the batch size', async () => {
    const seeded = await seed(3);
    await dataSource
      .getRepository(CheckStateEntity)
      .update({ instanceId: seeded.instances[2].id }, { nextCheckAt: at(-60) });
    const claimed = await checkStates.claimDue(T0, 'copy-a', 2, LEASE);
    expect(claimed.map((c) => c.id)).toEqual([seeded.instances[2].id, seeded.instances[0].id]);
    expect(claimed[0]).toMatchObject({
      resource: 'repos/o/r2/actions/workflows/ci.yml',
      etag: null,
      failureCount: 0,
      service: { type: 'github', url: 'https://api.github.com' },
    });
    const row = await instanceRow(claimed[0].id);
    expect(row.leaseOwner).toBe(claimed[0].leaseToken);
    expect(row.leaseUntil).toEqual(at(60));
  });

  it('does not hand an instance to a second owner while its lease holds, and does after it ran out', async () => {
    await seed(2);
    const first = await checkStates.claimDue(T0, 'copy-a', 10, LEASE);
    expect(first).toHaveLength(2);
    await expect(checkStates.claimDue(at(30), 'copy-b', 10, LEASE)).resolves.toEqual([]);
    const taken = await checkStates.claimDue(at(61), 'copy-b', 10, LEASE);
    expect(taken.map((c) => c.id).sort()).toEqual(first.map((c) => c.id).sort());
    expect(taken[0].leaseToken).not.toBe(first[0].leaseToken);
  });

  it('splits racing claims of two owners without overlap', async () => {
    await seed(50);
    const [a, b] = await Promise.all([
      checkStates.claimDue(T0, 'copy-a', 30, LEASE),
      checkStates.claimDue(T0, 'copy-b', 30, LEASE),
    ]);
    const ids = [...a, ...b].map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(50);
  });

  it('skips instances not due yet and instances of a paused service', async () => {
    const seeded = await seed(2, at(10));
    await expect(checkStates.claimDue(T0, 'copy-a', 10, LEASE)).resolves.toEqual([]);
    await checkStates.pauseService(seeded.instances[0].serviceId, at(100));
    await expect(checkStates.claimDue(at(20), 'copy-a', 10, LEASE)).resolves.toEqual([]);
    await expect(checkStates.claimDue(at(101), 'copy-a', 10, LEASE)).resolves.toHaveLength(2);
  });
});

describe('CheckStateRepository.recordChecks', () => {
  it('stores builds, the ETag and the next check, and releases the lease', async () => {
    const seeded = await seed(1);
    const [claim] = await checkStates.claimDue(T0, 'copy-a', 10, LEASE);
    await checkStates.recordChecks([
      {
        kind: 'builds',
        instanceId: claim.id,
        leaseToken: claim.leaseToken,
        checkedAt: T0,
        nextCheckAt: at(300),
        etag: 'W/"abc"',
        builds: [build('2_1', 'running', at(-10), 0), build('1_1', 'passed', at(-100))],
      },
    ]);
    const row = await instanceRow(seeded.instances[0].id);
    expect(row).toMatchObject({
      leaseOwner: null,
      leaseUntil: null,
      etag: 'W/"abc"',
      nextCheckAt: at(300),
      lastCheckedAt: T0,
      lastCheckFailed: false,
      failureCount: 0,
    });
    expect((await buildRows(claim.id)).map((b) => [b.buildId, b.status])).toEqual([
      ['2_1', 'running'],
      ['1_1', 'passed'],
    ]);
  });

  it('updates changed builds in place and leaves unchanged ones untouched', async () => {
    await seed(1);
    let [claim] = await checkStates.claimDue(T0, 'copy-a', 10, LEASE);
    const first = [build('2', 'running', at(-10), 0), build('1', 'passed', at(-100))];
    await checkStates.recordChecks([
      {
        kind: 'builds',
        instanceId: claim.id,
        leaseToken: claim.leaseToken,
        checkedAt: T0,
        nextCheckAt: T0,
        etag: null,
        builds: first,
      },
    ]);
    const before = await buildRows(claim.id);
    [claim] = await checkStates.claimDue(T0, 'copy-a', 10, LEASE);
    await checkStates.recordChecks([
      {
        kind: 'builds',
        instanceId: claim.id,
        leaseToken: claim.leaseToken,
        checkedAt: T0,
        nextCheckAt: at(300),
        etag: null,
        builds: [build('2', 'failed', at(-10), 42), build('1', 'passed', at(-100))],
      },
    ]);
    const after = await buildRows(claim.id);
    expect(after.map((b) => b.id)).toEqual(before.map((b) => b.id));
    expect(after[0]).toMatchObject({ buildId: '2', status: 'failed', durationSeconds: 42 });
    expect(after[1]).toEqual(before[1]);
  });

  it('changes only the check bookkeeping on a 304', async () => {
    await seed(1);
    let [claim] = await checkStates.claimDue(T0, 'copy-a', 10, LEASE);
    await checkStates.recordChecks([
      {
        kind: 'builds',
        instanceId: claim.id,
        leaseToken: claim.leaseToken,
        checkedAt: T0,
        nextCheckAt: T0,
        etag: '"e1"',
        builds: [build('1', 'passed', at(-100))],
      },
    ]);
    const buildsBefore = await buildRows(claim.id);
    [claim] = await checkStates.claimDue(T0, 'copy-a', 10, LEASE);
    await checkStates.recordChecks([
      {
        kind: 'not_modified',
        instanceId: claim.id,
        leaseToken: claim.leaseToken,
        checkedAt: at(5),
        nextCheckAt: at(300),
      },
    ]);
    expect(await buildRows(claim.id)).toEqual(buildsBefore);
    expect(await instanceRow(claim.id)).toMatchObject({
      etag: '"e1"',
      lastCheckedAt: at(5),
      nextCheckAt: at(300),
      leaseOwner: null,
    });
  });

  it("keeps the workflow's state as a check read it, until a check reads it again", async () => {
    await seed(1);
    const record = async (
      kind: 'builds' | 'not_modified' | 'failed',
      checkedAt: Date,
      workflowDisabled?: boolean,
    ): Promise<void> => {
      const [claim] = await checkStates.claimDue(checkedAt, 'copy-a', 10, LEASE);
      const base = { instanceId: claim.id, leaseToken: claim.leaseToken, checkedAt, nextCheckAt: checkedAt };
      await checkStates.recordChecks([
        kind === 'failed'
          ? { ...base, kind, failureCount: 1, reason: 'HTTP 502' }
          : kind === 'builds'
            ? { ...base, kind, etag: null, builds: [build('1', 'passed', at(-100))], workflowDisabled }
            : { ...base, kind, workflowDisabled },
      ]);
    };
    const disabled = async (): Promise<boolean> => (await instanceRow((await seedIds())[0])).workflowDisabled;
    const seedIds = async (): Promise<number[]> =>
      (await dataSource.getRepository(CheckStateEntity).find()).map((row) => row.instanceId);

    expect(await disabled()).toBe(false);
    await record('builds', T0, true);
    expect(await disabled()).toBe(true);
    // Checks that did not read the state (a 304 outside its period, a failure) leave it as read.
    await record('not_modified', at(300));
    await record('failed', at(600));
    expect(await disabled()).toBe(true);
    await record('not_modified', at(900), false);
    expect(await disabled()).toBe(false);
  });

  it('keeps builds and ETag on a failure and stores the back-off and the reason', async () => {
    await seed(1);
    let [claim] = await checkStates.claimDue(T0, 'copy-a', 10, LEASE);
    await checkStates.recordChecks([
      {
        kind: 'builds',
        instanceId: claim.id,
        leaseToken: claim.leaseToken,
        checkedAt: T0,
        nextCheckAt: T0,
        etag: '"e1"',
        builds: [build('1', 'passed', at(-100))],
      },
    ]);
    [claim] = await checkStates.claimDue(T0, 'copy-a', 10, LEASE);
    await checkStates.recordChecks([
      {
        kind: 'failed',
        instanceId: claim.id,
        leaseToken: claim.leaseToken,
        checkedAt: at(5),
        failureCount: 3,
        nextCheckAt: at(900),
        reason: 'x'.repeat(600),
      },
    ]);
    const row = await instanceRow(claim.id);
    expect(row).toMatchObject({
      etag: '"e1"',
      lastCheckedAt: T0,
      lastCheckAt: at(5),
      lastCheckFailed: true,
      failureCount: 3,
      nextCheckAt: at(900),
    });
    expect(row.lastError).toHaveLength(512);
    expect(await buildRows(claim.id)).toHaveLength(1);
  });

  it('releases an instance it did not check without changing when it is due', async () => {
    await seed(1);
    const [claim] = await checkStates.claimDue(T0, 'copy-a', 10, LEASE);
    await checkStates.recordChecks([
      { kind: 'released', instanceId: claim.id, leaseToken: claim.leaseToken },
    ]);
    expect(await instanceRow(claim.id)).toMatchObject({ leaseOwner: null, nextCheckAt: T0 });
    await expect(checkStates.claimDue(T0, 'copy-b', 10, LEASE)).resolves.toHaveLength(1);
  });

  it('writes nothing for a claim whose lease another copy took over', async () => {
    await seed(1);
    const [stale] = await checkStates.claimDue(T0, 'copy-a', 10, LEASE);
    const [fresh] = await checkStates.claimDue(at(61), 'copy-b', 10, LEASE);
    await checkStates.recordChecks([
      {
        kind: 'builds',
        instanceId: stale.id,
        leaseToken: stale.leaseToken,
        checkedAt: T0,
        nextCheckAt: at(300),
        etag: '"old"',
        builds: [build('1', 'passed', at(-100))],
      },
    ]);
    expect(await buildRows(stale.id)).toEqual([]);
    expect(await instanceRow(stale.id)).toMatchObject({ leaseOwner: fresh.leaseToken, etag: null });
  });

  it('writes mixed outcomes of several claims in one call, each row with its own values', async () => {
    const seeded = await seed(5);
    const first = await checkStates.claimDue(T0, 'copy-a', 3, LEASE);
    const second = await checkStates.claimDue(T0, 'copy-b', 3, LEASE);
    const [a, b, c] = first;
    const [d, e] = second;
    await dataSource
      .getRepository(CheckStateEntity)
      .update({ instanceId: e.id }, { leaseOwner: 'someone-else' });
    await checkStates.recordChecks([
      {
        kind: 'failed',
        instanceId: c.id,
        leaseToken: c.leaseToken,
        checkedAt: at(2),
        failureCount: 2,
        nextCheckAt: at(900),
        reason: 'down',
      },
      {
        kind: 'builds',
        instanceId: a.id,
        leaseToken: a.leaseToken,
        checkedAt: at(1),
        nextCheckAt: at(301),
        etag: '"a"',
        builds: [build('a1', 'passed', at(-9))],
      },
      {
        kind: 'not_modified',
        instanceId: b.id,
        leaseToken: b.leaseToken,
        checkedAt: at(2),
        nextCheckAt: at(302),
      },
      { kind: 'released', instanceId: d.id, leaseToken: d.leaseToken },
      {
        kind: 'builds',
        instanceId: e.id,
        leaseToken: e.leaseToken,
        checkedAt: at(3),
        nextCheckAt: at(303),
        etag: '"e"',
        builds: [build('e1', 'passed', at(-9))],
      },
    ]);
    expect(await instanceRow(a.id)).toMatchObject({
      etag: '"a"',
      nextCheckAt: at(301),
      lastCheckedAt: at(1),
      lastCheckAt: at(1),
      leaseOwner: null,
    });
    expect(await instanceRow(b.id)).toMatchObject({
      etag: null,
      nextCheckAt: at(302),
      lastCheckedAt: at(2),
      failureCount: 0,
    });
    expect(await instanceRow(c.id)).toMatchObject({
      nextCheckAt: at(900),
      lastCheckedAt: null,
      lastCheckAt: at(2),
      failureCount: 2,
      lastCheckFailed: true,
      lastError: 'down',
    });
    expect(await instanceRow(d.id)).toMatchObject({
      nextCheckAt: T0,
      lastCheckedAt: null,
      lastCheckAt: null,
      leaseOwner: null,
    });
    expect(await instanceRow(e.id)).toMatchObject({
      etag: null,
      lastCheckedAt: null,
      leaseOwner: 'someone-else',
    });
    expect((await buildRows(a.id)).map((row) => row.buildId)).toEqual(['a1']);
    expect(await buildRows(e.id)).toEqual([]);
    expect(seeded.instances).toHaveLength(5);
  });

  it(`keeps the newest ${MAX_STORED_BUILDS} builds of an instance`, async () => {
    await seed(1);
    const [claim] = await checkStates.claimDue(T0, 'copy-a', 10, LEASE);
    const many = Array.from({ length: MAX_STORED_BUILDS + 5 }, (_, i) =>
      build(String(i + 1), 'passed', at(i)),
    );
    await checkStates.recordChecks([
      {
        kind: 'builds',
        instanceId: claim.id,
        leaseToken: claim.leaseToken,
        checkedAt: T0,
        nextCheckAt: at(300),
        etag: null,
        builds: many,
      },
    ]);
    const kept = await buildRows(claim.id);
    expect(kept).toHaveLength(MAX_STORED_BUILDS);
    expect(kept.map((b) => Number(b.buildId)).sort((a, b) => a - b)[0]).toBe(6);
  });
});

describe('CheckStateRepository pauses', () => {
  it('keeps a later pause and counts paused services', async () => {
    const seeded = await seed(1);
    const serviceId = seeded.instances[0].serviceId;
    await checkStates.pauseService(serviceId, at(100));
    await checkStates.pauseService(serviceId, at(50));
    await expect(pausedUntil(dataSource, serviceId)).resolves.toEqual(at(100));
    await expect(checkStates.pausedServiceCount(at(99))).resolves.toBe(1);
    await expect(checkStates.pausedServiceCount(at(100))).resolves.toBe(0);
    // Rounded up to the second, so that MariaDB's DATETIME cannot end it early.
    await checkStates.pauseService(serviceId, new Date(at(200).getTime() + 1));
    await expect(pausedUntil(dataSource, serviceId)).resolves.toEqual(at(201));
  });

  it('names, of the given services, those paused at a moment: until the pause ends, not at its end', async () => {
    const seeded = await seed(2);
    const serviceId = seeded.instances[0].serviceId;
    await checkStates.pauseService(serviceId, at(100));
    await expect(checkStates.pausedServices([serviceId, serviceId + 1000], at(99))).resolves.toEqual(
      new Set([serviceId]),
    );
    await expect(checkStates.pausedServices([serviceId], at(100))).resolves.toEqual(new Set());
    await expect(checkStates.pausedServices([serviceId + 1000], at(0))).resolves.toEqual(new Set());
    await expect(checkStates.pausedServices([], at(0))).resolves.toEqual(new Set());
  });
});

describe('CheckStateRepository periodic re-run keys', () => {
  const dueDefault = (cutoff: Date) => checkStates.dueReruns({ own: false, days: 30 }, cutoff, T0, 10);
  const dueWeekly = (cutoff: Date) => checkStates.dueReruns({ own: true, days: 7 }, cutoff, T0, 10);

  it('finds an instance due from the later of its latest build and its last trigger, under its interval', async () => {
    const seeded = await seed(1);
    const id = seeded.instances[0].id;
    await expect(dueDefault(at(1000))).resolves.toEqual([]); // no builds: nothing to re-run
    const [claim] = await checkStates.claimDue(T0, 'copy-a', 10, LEASE);
    await checkStates.recordChecks([
      {
        kind: 'builds',
        instanceId: claim.id,
        leaseToken: claim.leaseToken,
        checkedAt: T0,
        nextCheckAt: at(300),
        etag: null,
        builds: [build('1_1', 'passed', at(-200)), build('2_1', 'failed', at(-100))],
      },
    ]);
    await expect(dueDefault(at(-150))).resolves.toEqual([]);
    await expect(dueDefault(at(-100))).resolves.toEqual([id]);

    await expect(checkStates.takeTrigger(id, at(0), at(-600))).resolves.toMatchObject({ taken: true });
    await expect(dueDefault(at(-50))).resolves.toEqual([]);
    await expect(dueDefault(at(0))).resolves.toEqual([id]);
    await checkStates.giveBackTrigger(id, at(0), null);
    await expect(dueDefault(at(-50))).resolves.toEqual([id]);

    await dataSource.transaction((tx) => checkStates.setRerunInterval(tx, seeded.workflowId, 7));
    await expect(dueDefault(at(-50))).resolves.toEqual([]);
    await expect(dueWeekly(at(-50))).resolves.toEqual([id]);

    await dataSource.transaction((tx) => checkStates.startOver(tx, id, T0));
    await expect(dueWeekly(at(1000))).resolves.toEqual([]);
  });

  it('gives an instance added to a workflow with an interval of its own that interval, oldest due first', async () => {
    const seeded = await seed(2);
    await dataSource
      .getRepository(WorkflowEntity)
      .update({ id: seeded.workflowId }, { rerunIntervalDays: 7 });
    const [first, second] = seeded.instances;
    await dataSource.getRepository(CheckStateEntity).delete({ versionId: seeded.versionId });
    await dataSource.transaction((tx) =>
      checkStates.addDue(
        tx,
        [first, second].map((instance) => ({
          instanceId: instance.id,
          versionId: seeded.versionId,
          serviceId: instance.serviceId,
          serviceType: 'github',
          serviceUrl: 'https://api.github.com',
          resource: instance.resource,
        })),
        T0,
      ),
    );
    await expect(checkStateRow(dataSource, first.id)).resolves.toMatchObject({ rerunIntervalDays: 7 });
    await dataSource.getRepository(CheckStateEntity).update({ instanceId: first.id }, { rerunFrom: at(-10) });
    await dataSource
      .getRepository(CheckStateEntity)
      .update({ instanceId: second.id }, { rerunFrom: at(-20) });
    await expect(dueWeekly(at(0))).resolves.toEqual([second.id, first.id]);
    await expect(dueDefault(at(0))).resolves.toEqual([]);
  });
});
