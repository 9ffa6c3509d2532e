import { DomainError } from '../common/errors/domain-error.js';

/** A user's limits (API.md 13); undefined is no limit. */
export interface Quota {
  readonly maxNodes?: number;
  readonly maxVcpus?: number;
  readonly maxRamMib?: number;
}

/** What a user holds (or one node asks for): nodes, their virtual CPUs and RAM in MiB. */
export interface Holding {
  readonly nodes: number;
  readonly vcpus: number;
  readonly ramMib: number;
}

/**
 * Throws DomainError 'conflict' naming the first limit that one more node of `asked` would pass, with
 * the current use: `quota max_nodes 3 reached: 3 in use`.
 */
export function admitWithin(quota: Quota, held: Holding, asked: Holding): void {
  const limits: [string, number | undefined, number, number][] = [
    ['max_nodes', quota.maxNodes, held.nodes, asked.nodes],
    ['max_vcpus', quota.maxVcpus, held.vcpus, asked.vcpus],
    ['max_ram_mib', quota.maxRamMib, held.ramMib, asked.ramMib],
  ];
  for (const [name, limit, used, more] of limits) {
    if (limit !== undefined && used + more > limit) {
      const reached = used >= limit ? 'reached' : 'would be passed';
      const need = name === 'max_nodes' ? '' : `, this node needs ${more}`;
      throw new DomainError('conflict', `quota ${name} ${limit} ${reached}: ${used} in use${need}`);
    }
  }
}

/** One start as the service recorded it, for usage: from its start until its stop (or now). */
export interface StartRecord {
  readonly ownerId: number;
  readonly ownerName: string;
  readonly cloud: string;
  readonly nodeId: string | null;
  readonly vcpus: number;
  readonly ramMib: number;
  readonly startedAt: Date;
  readonly stoppedAt: Date | null;
}

/** One user's use of one cloud over a window. */
export interface CloudUsage {
  readonly ownerId: number;
  readonly user: string;
  readonly cloud: string;
  readonly nodeHours: number;
  readonly vcpuHours: number;
  /** The records of the nodes held now (not stopped). */
  readonly current: StartRecord[];
}

const HOUR_MS = 3_600_000;

/**
 * Node-hours and vCPU-hours per user and cloud of the part of each record inside [from, to], a node not
 * stopped counted up to `now`; rounded to 1/1000 h. Ordered by user name, then cloud.
 */
export function usageOf(records: readonly StartRecord[], from: Date, to: Date, now: Date): CloudUsage[] {
  const byKey = new Map<
    string,
    { ownerId: number; user: string; cloud: string; ms: number; vcpuMs: number; current: StartRecord[] }
  >();
  for (const record of records) {
    const start = Math.max(record.startedAt.getTime(), from.getTime());
    const end = Math.min((record.stoppedAt ?? now).getTime(), to.getTime());
    const key = `${record.ownerId}\u0000${record.cloud}`;
    const entry = byKey.get(key) ?? {
      ownerId: record.ownerId,
      user: record.ownerName,
      cloud: record.cloud,
      ms: 0,
      vcpuMs: 0,
      current: [],
    };
    if (end > start) {
      entry.ms += end - start;
      entry.vcpuMs += (end - start) * record.vcpus;
    }
    if (record.stoppedAt === null) {
      entry.current.push(record);
    }
    byKey.set(key, entry);
  }
  const hours = (ms: number): number => Math.round((ms / HOUR_MS) * 1000) / 1000;
  return [...byKey.values()]
    .sort((a, b) => (a.user === b.user ? (a.cloud < b.cloud ? -1 : 1) : a.user < b.user ? -1 : 1))
    .map((entry) => ({
      ownerId: entry.ownerId,
      user: entry.user,
      cloud: entry.cloud,
      nodeHours: hours(entry.ms),
      vcpuHours: hours(entry.vcpuMs),
      current: entry.current,
    }));
}
