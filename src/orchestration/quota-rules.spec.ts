import { DomainError } from '../common/errors/domain-error.js';
import { admitWithin, usageOf, type StartRecord } from './quota-rules.js';

const one = { nodes: 1, vcpus: 2, ramMib: 512 };

describe('admitWithin', () => {
  it('admits anything without limits, and a node that fits exactly', () => {
    expect(() => admitWithin({}, { nodes: 99, vcpus: 99, ramMib: 99 }, one)).not.toThrow();
    expect(() =>
      admitWithin({ maxNodes: 3, maxVcpus: 6, maxRamMib: 1536 }, { nodes: 2, vcpus: 4, ramMib: 1024 }, one),
    ).not.toThrow();
  });

  it('names the limit and the current use', () => {
    expect(() => admitWithin({ maxNodes: 3 }, { nodes: 3, vcpus: 3, ramMib: 0 }, one)).toThrow(
      new DomainError('conflict', 'quota max_nodes 3 reached: 3 in use'),
    );
    expect(() => admitWithin({ maxVcpus: 4 }, { nodes: 1, vcpus: 3, ramMib: 0 }, one)).toThrow(
      'quota max_vcpus 4 would be passed: 3 in use, this node needs 2',
    );
    expect(() => admitWithin({ maxRamMib: 0 }, { nodes: 0, vcpus: 0, ramMib: 0 }, one)).toThrow(
      'quota max_ram_mib 0 reached: 0 in use, this node needs 512',
    );
  });
});

describe('usageOf', () => {
  const at = (iso: string): Date => new Date(iso);
  const record = (over: Partial<StartRecord>): StartRecord => ({
    ownerId: 1,
    ownerName: 'alice',
    cloud: 'default',
    nodeId: '3',
    vcpus: 2,
    ramMib: 512,
    startedAt: at('2026-01-01T00:00:00Z'),
    stoppedAt: at('2026-01-01T03:00:00Z'),
    ...over,
  });

  it('counts the part of each record inside the window, running nodes up to now, per user and cloud', () => {
    const usage = usageOf(
      [
        record({}),
        record({ nodeId: '4', vcpus: 4, startedAt: at('2026-01-01T02:30:00Z'), stoppedAt: null }),
        record({
          cloud: 'ostack',
          nodeId: 'x',
          startedAt: at('2025-12-31T23:00:00Z'),
          stoppedAt: at('2026-01-01T01:00:00Z'),
        }),
        record({ ownerId: 2, ownerName: 'bob', nodeId: '9', vcpus: 1 }),
      ],
      at('2026-01-01T00:00:00Z'),
      at('2026-01-02T00:00:00Z'),
      at('2026-01-01T04:00:00Z'),
    );
    expect(usage.map(({ current, ...rest }) => ({ ...rest, current: current.map((r) => r.nodeId) }))).toEqual(
      [
        { ownerId: 1, user: 'alice', cloud: 'default', nodeHours: 4.5, vcpuHours: 12, current: ['4'] },
        { ownerId: 1, user: 'alice', cloud: 'ostack', nodeHours: 1, vcpuHours: 2, current: [] },
        { ownerId: 2, user: 'bob', cloud: 'default', nodeHours: 3, vcpuHours: 3, current: [] },
      ],
    );
  });
});
