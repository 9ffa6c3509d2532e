import type { DataSource } from 'typeorm';
import { openMemoryDatabase } from '../../test/support/memory-database.js';
import { seedBuilds, seedVersion, type SeededVersion } from '../../test/support/monitoring-seed.js';
import { monitoringRepositories } from '../../test/support/monitoring-repositories.js';
import { rawDate } from '../database/raw-date.js';
import { BuildsRepository } from './builds.repository.js';

const T0 = new Date('2024-05-01T12:00:00.000Z');
const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);

let dataSource: DataSource;
let repo: BuildsRepository;

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
  repo = monitoringRepositories(dataSource).builds;
});

afterEach(async () => {
  await dataSource.destroy();
});

describe('BuildsRepository reads', () => {
  it('finds each instance’s latest build and latest finished build, per version, in one query', async () => {
    const v1 = await seed(3);
    const v2 = await seed(1);
    const [a, b, c] = v1.instances;
    await seedBuilds(dataSource, a.id, [
      { buildId: 'a1', status: 'passed', startedAt: at(-200) },
      { buildId: 'a2', status: 'running', startedAt: at(-10) },
    ]);
    await seedBuilds(dataSource, b.id, [{ buildId: 'b1', status: 'waiting', startedAt: at(-5) }]);
    await seedBuilds(dataSource, v2.instances[0].id, [
      { buildId: 'd1', status: 'failed', startedAt: at(-1) },
    ]);

    const rows = await repo.latestOfVersions([v1.versionId, v2.versionId]);
    const byId = new Map(rows.map((row) => [row.instanceId, row]));
    expect(byId.get(a.id)).toMatchObject({
      versionId: v1.versionId,
      latest: { buildId: 'a2' },
      latestFinished: { buildId: 'a1', status: 'passed' },
    });
    expect(byId.get(a.id)?.latest?.startedAt).toEqual(at(-10));
    expect(byId.get(b.id)?.latest?.buildId).toBe('b1');
    expect(byId.get(b.id)?.latestFinished).toBeUndefined();
    expect(byId.has(c.id)).toBe(false);
    expect(byId.get(v2.instances[0].id)).toMatchObject({
      versionId: v2.versionId,
      latestFinished: { buildId: 'd1' },
    });

    const one = await repo.latestOfInstances([a.id]);
    expect([...one.keys()]).toEqual([a.id]);
  });

  it('lists an instance’s builds newest first and finds one by id', async () => {
    const seeded = await seed(1);
    const id = seeded.instances[0].id;
    await seedBuilds(dataSource, id, [
      { buildId: '1', status: 'passed', startedAt: at(-300) },
      { buildId: '3', status: 'failed', startedAt: at(-100) },
      { buildId: '2', status: 'passed', startedAt: at(-200) },
    ]);
    expect((await repo.latestBuilds(id, 2)).map((b) => b.buildId)).toEqual(['3', '2']);
    await expect(repo.findBuild(id, '2')).resolves.toMatchObject({ buildId: '2', startedAt: at(-200) });
    await expect(repo.findBuild(id, '9')).resolves.toBeUndefined();
  });

  it('knows the stored build ids of instances', async () => {
    const seeded = await seed(2);
    await seedBuilds(dataSource, seeded.instances[0].id, [
      { buildId: '5_1', status: 'passed', startedAt: T0 },
    ]);
    const known = await repo.buildIdsOf(seeded.instances.map((i) => i.id));
    expect(known.get(seeded.instances[0].id)).toEqual({ ids: new Set(['5_1']), classified: new Set() });
    expect(known.get(seeded.instances[1].id)).toEqual({ ids: new Set(), classified: new Set() });
  });
});

describe('rawDate', () => {
  it('reads SQLite strings as UTC and passes Dates through', () => {
    expect(rawDate('2024-05-01 12:00:00.250')).toEqual(new Date('2024-05-01T12:00:00.250Z'));
    expect(rawDate('2024-05-01 12:00:00')).toEqual(new Date('2024-05-01T12:00:00Z'));
    expect(rawDate(T0)).toBe(T0);
  });
});

describe('BuildsRepository failures (API.md 16)', () => {
  const failure = {
    class: 'test' as const,
    reason: 'failing tests reported',
    evidence: ['--- FAIL: TestMain'],
  };

  it('stores a classified failure, reads it back everywhere, and clears it when a restarted build passes', async () => {
    const [instance] = (await seed(1)).instances;
    const failed = {
      buildId: '7',
      status: 'failed' as const,
      startedAt: at(-60),
      durationSeconds: 30,
      url: 'u',
    };
    await dataSource.transaction((tx) =>
      repo.upsertBuilds(tx, [{ instanceId: instance.id, builds: [{ ...failed, failure }] }]),
    );
    await expect(repo.findBuild(instance.id, '7')).resolves.toMatchObject({ failure });
    await expect(repo.latestOfInstances([instance.id])).resolves.toEqual(
      new Map([
        [instance.id, expect.objectContaining({ latestFinished: expect.objectContaining({ failure }) })],
      ]),
    );
    const pairs = await dataSource.transaction((tx) => repo.latestFinished(tx, [instance.id]));
    expect(pairs.get(instance.id)?.latest.failure).toEqual(failure);
    expect((await repo.buildIdsOf([instance.id])).get(instance.id)?.classified).toEqual(new Set(['7']));

    // A check that does not classify it again keeps the stored failure.
    await dataSource.transaction((tx) =>
      repo.upsertBuilds(tx, [{ instanceId: instance.id, builds: [{ ...failed, durationSeconds: 31 }] }]),
    );
    await expect(repo.findBuild(instance.id, '7')).resolves.toMatchObject({ failure, durationSeconds: 31 });

    await dataSource.transaction((tx) =>
      repo.upsertBuilds(tx, [{ instanceId: instance.id, builds: [{ ...failed, status: 'passed' }] }]),
    );
    const passed = await repo.findBuild(instance.id, '7');
    expect(passed?.failure).toBeUndefined();
    expect((await repo.buildIdsOf([instance.id])).get(instance.id)?.classified).toEqual(new Set());
  });
});
