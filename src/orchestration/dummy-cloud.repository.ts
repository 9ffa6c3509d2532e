import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { isUniqueViolation } from '../common/errors/unique-violation.js';
import { DummyCloudEntity } from './entities/dummy-cloud.entity.js';
import { DummyNodeEntity } from './entities/dummy-node.entity.js';
import type { DummyCloudStore, DummyNodeRecord } from './providers/dummy.provider.js';

// Node ids are stored in an INTEGER column (32-bit signed on MariaDB); anything else names no node.
const MAX_NODE_ID = 2_147_483_647;

/**
 * The DummyCloudStore of the running service: dummy clouds live in the database, so their nodes
 * survive a restart and several copies of the service sharing the database see one cloud.
 */
@Injectable()
export class DummyCloudRepository implements DummyCloudStore {
  constructor(
    @InjectRepository(DummyCloudEntity) private readonly clouds: Repository<DummyCloudEntity>,
    @InjectRepository(DummyNodeEntity) private readonly nodes: Repository<DummyNodeEntity>,
  ) {}

  /** The counter row and the seed nodes go in one transaction; a copy that loses the race finds the row taken. */
  async ensureCloud(cloud: string, seed: readonly DummyNodeRecord[], firstFreeId: number): Promise<void> {
    if (await this.clouds.existsBy({ name: cloud })) {
      return;
    }
    try {
      await this.clouds.manager.transaction(async (tx) => {
        await tx.insert(DummyCloudEntity, { name: cloud, nextId: firstFreeId });
        if (seed.length > 0) {
          await tx.insert(
            DummyNodeEntity,
            seed.map((node) => toEntity(cloud, node)),
          );
        }
      });
    } catch (error) {
      if (!isUniqueViolation(error)) {
        throw error;
      }
    }
  }

  async listNodes(cloud: string): Promise<DummyNodeRecord[]> {
    const rows = await this.nodes.find({ where: { cloud }, order: { nodeId: 'ASC' } });
    return rows.map(toRecord);
  }

  /**
   * Increments the counter and reads it back in one transaction: the UPDATE holds the row (MariaDB) or
   * the database (SQLite) until commit, so no two callers, in this process or another, get one id.
   */
  allocateId(cloud: string): Promise<number> {
    return this.clouds.manager.transaction(async (tx) => {
      const result = await tx.increment(DummyCloudEntity, { name: cloud }, 'nextId', 1);
      if (result.affected === 0) {
        throw new Error(`dummy cloud '${cloud}' used before ensureCloud`);
      }
      const row = await tx.findOneByOrFail(DummyCloudEntity, { name: cloud });
      return row.nextId - 1;
    });
  }

  async insertNode(cloud: string, node: DummyNodeRecord): Promise<void> {
    await this.nodes.insert(toEntity(cloud, node));
  }

  async deleteNode(cloud: string, id: string): Promise<boolean> {
    const nodeId = parseNodeId(id);
    if (nodeId === undefined) {
      return false;
    }
    const result = await this.nodes.delete({ cloud, nodeId });
    return (result.affected ?? 0) > 0;
  }
}

function parseNodeId(id: string): number | undefined {
  if (!/^[1-9]\d{0,9}$/.test(id)) {
    return undefined;
  }
  const value = Number(id);
  return value <= MAX_NODE_ID ? value : undefined;
}

function toEntity(cloud: string, node: DummyNodeRecord): DummyNodeEntity {
  const nodeId = parseNodeId(node.id);
  if (nodeId === undefined) {
    throw new Error(`dummy node id '${node.id}' is not a positive integer`);
  }
  return Object.assign(new DummyNodeEntity(), {
    cloud,
    nodeId,
    name: node.name,
    publicIps: JSON.stringify(node.publicIps),
    extra: JSON.stringify(node.extra),
  });
}

function toRecord(row: DummyNodeEntity): DummyNodeRecord {
  return {
    id: String(row.nodeId),
    name: row.name,
    publicIps: JSON.parse(row.publicIps) as string[],
    extra: JSON.parse(row.extra) as Record<string, unknown>,
  };
}
