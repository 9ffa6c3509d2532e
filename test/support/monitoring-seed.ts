import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { UserEntity } from '../../src/auth/entities/user.entity.js';
import { BuildsRepository } from '../../src/test-monitoring/builds.repository.js';
import { BuildEntity } from '../../src/test-monitoring/entities/build.entity.js';
import { VersionStatuses } from '../../src/test-monitoring/version-statuses.js';
import { RegistryEvents } from '../../src/workflows/registry-events.js';
import { StoredTestStatuses } from '../../src/workflows/stored-test-statuses.js';
import { CheckStateEntity } from '../../src/test-monitoring/entities/check-state.entity.js';
import {
  TestInstanceEntity,
  TestSuiteEntity,
  WorkflowEntity,
  WorkflowVersionEntity,
} from '../../src/workflows/entities/registry.entities.js';
import { TestServiceEntity } from '../../src/workflows/entities/test-service.entity.js';

/**
 * Inserts registry rows straight into the database, for the monitoring tests that need many
 * instances (or none of the registry's HTTP): a workflow version with suites and instances
 * pointing at CI fakes, with monitoring's check state due as a registration leaves it.
 */
export interface SeedInstance {
  type: 'github' | 'travis' | 'jenkins';
  /** The service's API base URL (a fake's `url`). */
  url: string;
  resource: string;
  name?: string;
}

export interface SeedOptions {
  /** Default: a new user. */
  ownerId?: number;
  workflowUuid?: string;
  version?: string;
  /**
   * The version's source ref (API.md 7.1); default `main`, the branch the fakes' runs are on, so
   * that a check of a seeded instance is one request for its runs (API.md 7.2); null for none.
   */
  sourceRef?: string | null;
  name?: string;
  suites: { name?: string; instances: SeedInstance[] }[];
  /** When the instances are due; default now. */
  dueAt?: Date;
  /** Readable by anybody (API.md 5.1); default private. */
  public?: boolean;
}

export interface SeededInstance {
  id: number;
  uuid: string;
  suiteUuid: string;
  serviceId: number;
  resource: string;
}

export interface SeededVersion {
  ownerId: number;
  workflowId: number;
  workflowUuid: string;
  versionId: number;
  versionUuid: string;
  suites: { id: number; uuid: string; instances: SeededInstance[] }[];
  instances: SeededInstance[];
}

/** Rows per INSERT when seeding thousands of instances. */
const CHUNK = 200;

export async function seedVersion(dataSource: DataSource, options: SeedOptions): Promise<SeededVersion> {
  return dataSource.transaction(async (tx) => {
    const ownerId = options.ownerId ?? (await createUser(tx));
    const workflowUuid = options.workflowUuid ?? randomUUID();
    let workflow = await tx.findOneBy(WorkflowEntity, { uuid: workflowUuid });
    if (!workflow) {
      workflow = await tx.save(
        tx.create(WorkflowEntity, {
          uuid: workflowUuid,
          ownerId,
          createdAt: new Date(),
          public: options.public ?? false,
        }),
      );
    }
    const version = await tx.save(
      tx.create(WorkflowVersionEntity, {
        uuid: randomUUID(),
        workflowId: workflow.id,
        version: options.version ?? '1.0',
        name: options.name ?? 'seeded workflow',
        rocLink: 'http://127.0.0.1/seeded.crate.zip',
        archiveSha256: randomBytes(32).toString('hex'),
        archiveSize: 1,
        sourceRef: options.sourceRef === undefined ? 'main' : options.sourceRef,
        sourceCommit: options.sourceRef === null ? null : 'acb5820ced9479c074f688cc328bf03f341a511d',
        submitterId: ownerId,
        registeredAt: new Date(),
      }),
    );
    await tx.update(
      WorkflowEntity,
      { id: workflow.id },
      { latestVersionId: version.id, testStatus: 'not_available' },
    );
    const services = new Map<string, number>();
    const seeded: SeededVersion = {
      ownerId,
      workflowId: workflow.id,
      workflowUuid,
      versionId: version.id,
      versionUuid: version.uuid,
      suites: [],
      instances: [],
    };
    for (const [index, suiteSpec] of options.suites.entries()) {
      const suite = await tx.save(
        tx.create(TestSuiteEntity, {
          uuid: randomUUID(),
          versionId: version.id,
          rocSuite: `#suite${index + 1}`,
          name: suiteSpec.name ?? `suite${index + 1}`,
          definitionPath: null,
          engineType: null,
          engineVersion: null,
        }),
      );
      const rows: Partial<TestInstanceEntity>[] = [];
      for (const [position, spec] of suiteSpec.instances.entries()) {
        rows.push({
          uuid: randomUUID(),
          suiteId: suite.id,
          serviceId: await serviceId(tx, services, spec.type, spec.url),
          rocInstance: `#suite${index + 1}_${position + 1}`,
          name: spec.name ?? `instance${position + 1}`,
          resource: spec.resource,
          managed: false,
        });
      }
      for (let at = 0; at < rows.length; at += CHUNK) {
        await tx.insert(TestInstanceEntity, rows.slice(at, at + CHUNK));
      }
      const stored = await tx.find(TestInstanceEntity, {
        where: { suiteId: suite.id },
        order: { id: 'ASC' },
      });
      const states: Partial<CheckStateEntity>[] = stored.map((row) => ({
        instanceId: row.id,
        serviceId: row.serviceId,
        versionId: version.id,
        nextCheckAt: options.dueAt ?? new Date(),
        failureCount: 0,
        lastCheckFailed: false,
      }));
      for (let at = 0; at < states.length; at += CHUNK) {
        await tx.insert(CheckStateEntity, states.slice(at, at + CHUNK));
      }
      const instances = stored.map((row) => ({
        id: row.id,
        uuid: row.uuid,
        suiteUuid: suite.uuid,
        serviceId: row.serviceId,
        resource: row.resource,
      }));
      seeded.suites.push({ id: suite.id, uuid: suite.uuid, instances });
      seeded.instances.push(...instances);
    }
    return seeded;
  });
}

/** Inserts builds for an instance directly (status reads without a check). */
export async function seedBuilds(
  dataSource: DataSource,
  instanceId: number,
  builds: { buildId: string; status: string; startedAt: Date; durationSeconds?: number; url?: string }[],
): Promise<void> {
  // With the version's stored status (what the wall orders by), as recording a check keeps it.
  const statuses = new VersionStatuses(
    new BuildsRepository(dataSource.getRepository(BuildEntity)),
    new StoredTestStatuses(dataSource),
    new RegistryEvents(),
  );
  await dataSource.transaction(async (tx) => {
    await tx.insert(
      BuildEntity,
      builds.map((build) => ({
        instanceId,
        buildId: build.buildId,
        status: build.status,
        startedAt: build.startedAt,
        durationSeconds: build.durationSeconds ?? 60,
        url: build.url ?? `https://ci.example.org/builds/${build.buildId}`,
      })),
    );
    await statuses.buildsChanged(tx, [instanceId]);
  });
}

async function createUser(tx: EntityManager): Promise<number> {
  const user = await tx.save(
    tx.create(UserEntity, {
      username: `seed-${randomBytes(4).toString('hex')}`,
      passwordHash: 'not-a-real-hash',
      roles: ['user'],
      active: true,
    }),
  );
  return user.id;
}

async function serviceId(
  tx: EntityManager,
  cache: Map<string, number>,
  type: string,
  url: string,
): Promise<number> {
  const key = `${type} ${url}`;
  const cached = cache.get(key);
  if (cached !== undefined) {
    return cached;
  }
  const existing = await tx.findOneBy(TestServiceEntity, { type, url });
  const id =
    existing?.id ?? (await tx.save(tx.create(TestServiceEntity, { uuid: randomUUID(), type, url }))).id;
  cache.set(key, id);
  return id;
}
