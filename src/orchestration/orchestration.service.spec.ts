import { DomainError } from '../common/errors/domain-error.js';
import { AppConfig } from '../config/app-config.js';
import type {
  AssignRequest,
  Assignment,
  AssignmentFacility,
  ReleasedAssignment,
} from './assignment/assignment-facility.js';
import { CloudRegistry } from './cloud.registry.js';
import { OrchestrationService } from './orchestration.service.js';
import { DummyProviderFactory } from './providers/dummy.provider.js';
import { InMemoryDummyCloudStore } from './providers/in-memory-dummy-cloud.store.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { DataSource } from 'typeorm';
import { openMemoryDatabase } from '../../test/support/memory-database.js';
import { Clock } from '../common/clock.js';
import { VmLeaseEntity } from './entities/vm-lease.entity.js';
import { LeasesRepository } from './leases.repository.js';
import { AddressesRepository } from './addresses.repository.js';
import { VmAddressEntity } from './entities/vm-address.entity.js';
import { VmJobEntity } from './entities/vm-job.entity.js';
import { JobsRepository } from './jobs.repository.js';
import { NodeState } from './providers/cloud-provider.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');

/** A clock that stands still at NOW unless moved. */
class FixedClock extends Clock {
  ms = NOW;
  override nowMs(): number {
    return this.ms;
  }
}

let database: DataSource;

beforeAll(async () => {
  database = await openMemoryDatabase();
});

afterAll(async () => {
  await database.destroy();
});

/** A facility in memory that records every call; `failWith` makes every call fail. */
class RecordingFacility implements AssignmentFacility {
  readonly calls: string[] = [];
  readonly active = new Map<string, Assignment>();
  failWith?: DomainError;
  private nextId = 1;

  assign(request: AssignRequest): Promise<Assignment> {
    return this.record(`assign ${request.cloud}/${request.nodeId}`, () => {
      const key = `${request.cloud}/${request.nodeId}`;
      if (this.active.has(key)) {
        throw new DomainError('conflict', 'assigned already');
      }
      const assignment = { ...request, id: this.nextId++, assignedAt: new Date(0) };
      this.active.set(key, assignment);
      return assignment;
    });
  }

  release(cloud: string, nodeId: string): Promise<ReleasedAssignment> {
    return this.record(`release ${cloud}/${nodeId}`, () => {
      const found = this.active.get(`${cloud}/${nodeId}`);
      if (!found) {
        throw new DomainError('not_found', 'not assigned');
      }
      this.active.delete(`${cloud}/${nodeId}`);
      return { id: found.id, cloud, nodeId };
    });
  }

  listActive(cloud: string): Promise<Assignment[]> {
    return this.record(`list ${cloud}`, () => [...this.active.values()].filter((a) => a.cloud === cloud));
  }

  private record<T>(call: string, work: () => T): Promise<T> {
    this.calls.push(call);
    return new Promise((resolve) => {
      if (this.failWith) {
        throw this.failWith;
      }
      resolve(work());
    });
  }
}

function subject(): {
  service: OrchestrationService;
  registry: CloudRegistry;
  facility: RecordingFacility;
  leases: LeasesRepository;
  clock: FixedClock;
} {
  const config = Object.assign(new AppConfig(), {
    orchestration: {
      clouds: [
        { name: 'default', type: 'dummy', options: {} },
        { name: 'fake_driver', type: 'dummy', options: {} },
      ],
      upstreamTimeoutMs: 1000,
    },
  });
  const registry = new CloudRegistry(
    () => [new DummyProviderFactory(new InMemoryDummyCloudStore())],
    config,
    new MetricsService(),
  );
  registry.onModuleInit();
  const facility = new RecordingFacility();
  const leases = new LeasesRepository(database.getRepository(VmLeaseEntity));
  const clock = new FixedClock();
  const service = new OrchestrationService(
    registry,
    facility,
    leases,
    new JobsRepository(database.getRepository(VmJobEntity)),
    new AddressesRepository(database.getRepository(VmAddressEntity)),
    clock,
  );
  return { service, registry, facility, leases, clock };
}

describe('OrchestrationService', () => {
  it('lists the clouds by name and type only', () => {
    expect(subject().service.clouds()).toEqual([
      { name: 'default', type: 'dummy' },
      { name: 'fake_driver', type: 'dummy' },
    ]);
  });

  it('names the cloud its lists come from', async () => {
    const { service } = subject();
    const listing = await service.nodes('fake_driver');
    expect(listing.cloud).toEqual({ name: 'fake_driver', type: 'dummy' });
    expect(listing.items.map((node) => node.id)).toEqual(['1', '2']);
  });

  it('answers invalid_route for an unknown cloud before anything else, emulate included', async () => {
    const { service, facility } = subject();
    const calls = [
      service.nodes('nope'),
      service.stop('nope', { id: '1' }),
      service.assign('nope', { node: { id: '1' }, user: 'u', vmType: 't', emulate: true }),
      service.release('nope', { node: { id: '1' }, emulate: false }),
      service.activeAssignments('nope'),
    ];
    for (const call of calls) {
      await expect(call).rejects.toMatchObject({ kind: 'invalid_route' });
    }
    expect(facility.calls).toEqual([]);
  });

  it('answers emulated assign and release with the fixed reply, calling no facility and no cloud', async () => {
    const { service, facility } = subject();
    const byId = { node: { id: '77' }, user: 'u', vmType: 't', emulate: true };
    await expect(service.assign('default', byId)).resolves.toEqual({
      id: 0,
      nodeId: '77',
      result: 'VM 77 assigned (emulated)',
    });
    await expect(service.release('default', { node: { hostname: 'h' }, emulate: true })).resolves.toEqual({
      id: 0,
      nodeId: 'h',
      result: 'VM h assigned (emulated)',
    });
    expect(facility.calls).toEqual([]);
  });

  it('assigns a node found by hostname, under its id and name, and releases it', async () => {
    const { service, facility } = subject();
    await expect(
      service.assign('default', { node: { hostname: '127.0.0.1' }, user: 'u', vmType: 't', emulate: false }),
    ).resolves.toEqual({ id: 1, nodeId: '1', result: 'VM 1 assigned' });
    expect([...facility.active.values()]).toEqual([
      expect.objectContaining({ cloud: 'default', nodeId: '1', hostname: 'dummy-1', user: 'u', vmType: 't' }),
    ]);
    await expect(service.release('default', { node: { id: '1' }, emulate: false })).resolves.toEqual({
      id: 1,
      nodeId: '1',
      result: 'VM 1 released',
    });
  });

  it('does not call the facility for a node the cloud does not have', async () => {
    const { service, facility } = subject();
    await expect(
      service.assign('default', { node: { id: '9' }, user: 'u', vmType: 't', emulate: false }),
    ).rejects.toMatchObject({ kind: 'not_found' });
    await expect(
      service.release('default', { node: { hostname: 'x' }, emulate: false }),
    ).rejects.toMatchObject({
      kind: 'not_found',
    });
    expect(facility.calls).toEqual([]);
  });

  it('ends the assignment of a stopped node, and stops it even when the facility fails', async () => {
    const { service, facility } = subject();
    await service.assign('default', { node: { id: '2' }, user: 'u', vmType: 't', emulate: false });
    await expect(service.stop('default', { hostname: 'dummy-2' })).resolves.toBe('2');
    expect(facility.active.size).toBe(0);
    facility.failWith = new DomainError('upstream_failed', 'facility down');
    await expect(service.stop('default', { id: '1' })).resolves.toBe('1');
    expect((await service.nodes('default')).items).toEqual([]);
  });

  describe('leases', () => {
    // Each subject has its own in-memory dummy cloud but the database is shared: a cloud name per test.
    beforeEach(async () => {
      await database.getRepository(VmLeaseEntity).clear();
    });

    it('gives an assignment a lease ending ttl_seconds from now, shown with the assignment', async () => {
      const { service } = subject();
      await service.assign('default', {
        node: { id: '1' },
        user: 'u',
        vmType: 't',
        emulate: false,
        lease: { ttlSeconds: 120 },
        onExpiry: 'poweroff',
      });
      const [active] = await service.activeAssignments('default');
      expect(active.lease).toMatchObject({ expiresAt: new Date(NOW + 120_000), onExpiry: 'poweroff' });
    });

    it('refuses a lease in the past before assigning anything', async () => {
      const { service, facility } = subject();
      const assign = service.assign('default', {
        node: { id: '1' },
        user: 'u',
        vmType: 't',
        emulate: false,
        lease: { expiresAt: '2026-11-23T11:00:00Z' },
      });
      await expect(assign).rejects.toMatchObject({ kind: 'invalid_input' });
      expect(facility.calls).toEqual([]);
    });

    it('refuses on_expiry without a lease', async () => {
      const { service } = subject();
      await expect(
        service.assign('default', {
          node: { id: '1' },
          user: 'u',
          vmType: 't',
          emulate: false,
          onExpiry: 'destroy',
        }),
      ).rejects.toMatchObject({
        kind: 'invalid_input',
        message: 'on_expiry needs ttl_seconds or expires_at',
      });
    });

    it('extends the lease of an assigned node, and answers not_found for an unassigned one', async () => {
      const { service, clock } = subject();
      await service.assign('default', {
        node: { id: '1' },
        user: 'u',
        vmType: 't',
        emulate: false,
        lease: { ttlSeconds: 60 },
      });
      clock.ms += 30_000;
      const extended = await service.extend('default', {
        node: { hostname: 'dummy-1' },
        end: { ttlSeconds: 3600 },
      });
      expect(extended.lease).toMatchObject({
        expiresAt: new Date(NOW + 30_000 + 3_600_000),
        onExpiry: 'release',
      });
      await expect(
        service.extend('default', { node: { id: '2' }, end: { ttlSeconds: 60 } }),
      ).rejects.toMatchObject({
        kind: 'not_found',
        message: "Node 2 of cloud 'default' is not assigned",
      });
    });

    it('carries out each kind of expiry once: release, poweroff, destroy', async () => {
      const { service, registry, facility, leases } = subject();
      const started = {
        node: await registry.get('default').startNode({ name: 'n3', image: '1', size: '1' }),
      };
      for (const [id, onExpiry] of [
        ['1', 'release'],
        ['2', 'poweroff'],
        [started.node.id, 'destroy'],
      ] as const) {
        await service.assign('default', {
          node: { id },
          user: 'u',
          vmType: 't',
          emulate: false,
          lease: { ttlSeconds: 60 },
          onExpiry,
        });
      }
      expect(await leases.claimExpired(new Date(NOW + 59_000), 'copy', 10, 60_000)).toEqual([]);
      const claimed = await leases.claimExpired(new Date(NOW + 60_000), 'copy', 10, 60_000);
      expect(claimed.map((lease) => lease.onExpiry).sort()).toEqual(['destroy', 'poweroff', 'release']);
      // Claimed once: another copy finds nothing while the claim holds.
      expect(await leases.claimExpired(new Date(NOW + 61_000), 'other', 10, 60_000)).toEqual([]);
      for (const lease of claimed) {
        await service.expire(lease);
        await leases.finish(lease);
      }
      expect(await service.activeAssignments('default')).toEqual([]);
      const nodes = (await service.nodes('default')).items;
      expect(nodes.map((node) => [node.id, node.state])).toEqual([
        ['1', NodeState.Running],
        ['2', NodeState.Stopped],
      ]);
      expect(facility.calls.filter((call) => call.startsWith('release'))).toHaveLength(3);
      expect(await leases.claimExpired(new Date(NOW + 10 * 60_000), 'other', 10, 60_000)).toEqual([]);
    });

    it('ends the lease with a release or a stop', async () => {
      const { service, leases } = subject();
      for (const id of ['1', '2']) {
        await service.assign('default', {
          node: { id },
          user: 'u',
          vmType: 't',
          emulate: false,
          lease: { ttlSeconds: 60 },
        });
      }
      await service.release('default', { node: { id: '1' }, emulate: false });
      await service.stop('default', { id: '2' });
      expect(await leases.claimExpired(new Date(NOW + 3_600_000), 'copy', 10, 60_000)).toEqual([]);
    });
  });
});
