import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config/app-config.js';
import { dataSourceOptions, openDataSource } from '../../src/database/data-source.js';
import { DummyCloudRepository } from '../../src/orchestration/dummy-cloud.repository.js';
import { DummyCloudEntity } from '../../src/orchestration/entities/dummy-cloud.entity.js';
import { DummyKeyPairEntity } from '../../src/orchestration/entities/dummy-key-pair.entity.js';
import { DummyNodeEntity } from '../../src/orchestration/entities/dummy-node.entity.js';
import { NodeState } from '../../src/orchestration/providers/cloud-provider.js';
import { DummyProvider } from '../../src/orchestration/providers/dummy.provider.js';
import {
  cloudProviderContract,
  cloudProviderMachinesContract,
} from '../contracts/cloud-provider.contract.js';
import { baseTestEnv, createTestDatabase, testDatabase } from '../support/create-test-app.js';

/**
 * The shared CloudProvider contract, and the races of several copies, against the DummyCloudStore the
 * service really uses: DummyCloudRepository on the migrated database (SQLite or MariaDB).
 */
let dataDir: string;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
const sources: DataSource[] = [];

/** One more connection pool on the test database: another copy of the service, as far as the store sees. */
async function copy(): Promise<DummyCloudRepository> {
  const config = loadConfig(baseTestEnv(dataDir, database.url));
  const source = await openDataSource({
    ...dataSourceOptions(config),
    entities: [DummyCloudEntity, DummyNodeEntity, DummyKeyPairEntity],
  });
  sources.push(source);
  return new DummyCloudRepository(
    source.getRepository(DummyCloudEntity),
    source.getRepository(DummyNodeEntity),
    source.getRepository(DummyKeyPairEntity),
  );
}

const freshCloudName = (): string => `c_${randomBytes(6).toString('hex')}`;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'dummy-store-'));
  database = await createTestDatabase(dataDir);
});

afterAll(async () => {
  await Promise.all(sources.map((source) => source.destroy()));
  await database.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

let store: DummyCloudRepository | undefined;

cloudProviderContract(`dummy (database store, ${testDatabase()})`, async () => {
  store ??= await copy();
  // Each test its own cloud, so each starts from the fresh state.
  return { provider: new DummyProvider(freshCloudName(), store), image: '1', size: '2' };
});

cloudProviderMachinesContract(`dummy (database store, ${testDatabase()})`, async () => {
  store ??= await copy();
  return {
    provider: new DummyProvider(freshCloudName(), store),
    image: '1',
    size: '2',
    fingerprints: { rsa: /^SHA256:[A-Za-z0-9+/]{43}$/, ed25519: /^SHA256:[A-Za-z0-9+/]{43}$/ },
    addresses: true,
  };
});

describe(`DummyCloudRepository shared by several copies (${testDatabase()})`, () => {
  it('seeds a cloud once when copies race to use it first', async () => {
    const a = await copy();
    // better-sqlite3 waits for a lock synchronously, so a second SQLite connection in this process
    // would block the very thread that holds the lock: on SQLite the race runs within one copy.
    const b = testDatabase() === 'mariadb' ? await copy() : a;
    const cloud = freshCloudName();
    const seed = [
      { id: '1', name: 'dummy-1', state: NodeState.Running, publicIps: ['127.0.0.1'], extra: { foo: 'bar' } },
    ];
    await Promise.all([
      a.ensureCloud(cloud, seed, 3),
      b.ensureCloud(cloud, seed, 3),
      a.ensureCloud(cloud, seed, 3),
    ]);
    expect(await b.listNodes(cloud)).toEqual(seed);
    await expect(a.allocateId(cloud)).resolves.toBe(3);
  });

  it('never hands out one id twice, across copies, deletions and new providers', async () => {
    const [a, b] = await Promise.all([copy(), copy()]);
    const cloud = freshCloudName();
    const first = new DummyProvider(cloud, a);
    const started = await first.startNode({ name: 'n', image: '1', size: '1' });
    expect(started.id).toBe('3');
    await first.destroyNode(started.id);
    const ids = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).allocateId(cloud)),
    );
    expect(new Set(ids).size).toBe(10);
    expect(Math.min(...ids)).toBe(4);
    const restarted = new DummyProvider(cloud, b);
    await expect(restarted.startNode({ name: 'm', image: '1', size: '1' })).resolves.toMatchObject({
      id: '14',
    });
    expect((await restarted.listNodes()).map((node) => node.id)).toEqual(['1', '2', '14']);
  });

  it('treats ids that are not stored integers as unknown', async () => {
    const a = await copy();
    const provider = new DummyProvider(freshCloudName(), a);
    await provider.listNodes();
    for (const id of ['0', '-1', '1.0', '01', '99999999999', 'abc', '']) {
      await expect(provider.destroyNode(id)).rejects.toMatchObject({ kind: 'not_found' });
    }
    expect(await provider.listNodes()).toHaveLength(2);
  });
});
