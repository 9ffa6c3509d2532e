import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { isUniqueViolation } from '../common/errors/unique-violation.js';
import { incrementAndRead } from '../database/dialect.js';
import { DummyCloudEntity } from './entities/dummy-cloud.entity.js';
import { DummyKeyPairEntity } from './entities/dummy-key-pair.entity.js';
import { DummyNodeEntity } from './entities/dummy-node.entity.js';
import { NodeState, type CloudKeyPair } from './providers/cloud-provider.js';
import type { DummyCloudStore, DummyNodeRecord } from './providers/dummy.provider.js';

// Node ids are stored in an INTEGER column (32-bit signed on MariaDB); anything else names no node.
const MAX_NODE_ID = 2_147_483_647;

/**
 * The DummyCloudStore of the running service: dummy clouds live in the database, so their nodes
 * survive a restart and several copies of the service sharing the database see one cloud.
 *
 * On SQLite, TypeORM runs every query of the process over one connection, where a second transaction
 * opened while one is running fails ("cannot start a transaction within a transaction") and any other
 * query lands inside the open one. So this store avoids transactions there: the id counter moves in one
 * `UPDATE … RETURNING` statement, and the only transaction (the first seeding of a cloud, once in the
 * database's life) is queued behind any other of this store.
 */
@Injectable()
export class DummyCloudRepository implements DummyCloudStore {
  /** The tail of this store's queue of seeding transactions. */
  private seeding: Promise<unknown> = Promise.resolve();

  constructor(
    @InjectRepository(DummyCloudEntity) private readonly clouds: Repository<DummyCloudEntity>,
    @InjectRepository(DummyNodeEntity) private readonly nodes: Repository<DummyNodeEntity>,
    @InjectRepository(DummyKeyPairEntity) private readonly keyPairs: Repository<DummyKeyPairEntity>,
  ) {}

  /** The counter row and the seed nodes go in one transaction; a copy that loses the race finds the row taken. */
  ensureCloud(cloud: string, seed: readonly DummyNodeRecord[], firstFreeId: number): Promise<void> {
    const run = this.seeding.then(() => this.seed(cloud, seed, firstFreeId));
    this.seeding = run.catch(() => undefined);
    return run;
  }

  async listNodes(cloud: string): Promise<DummyNodeRecord[]> {
    const rows = await this.nodes.find({ where: { cloud }, order: { nodeId: 'ASC' } });
    return rows.map(toRecord);
  }

  /** Increments the counter and reads it back atomically, so no two callers, in this process or another copy, get one id. */
  async allocateId(cloud: string): Promise<number> {
    const next = await incrementAndRead(this.clouds.manager, 'dummy_clouds', 'next_id', 'name', cloud);
    if (next === undefined) {
      throw new Error(`dummy cloud '${cloud}' used before ensureCloud`);
    }
    return next - 1;
  }

  async insertNode(cloud: string, node: DummyNodeRecord): Promise<void> {
    await this.nodes.insert(toEntity(cloud, node));
  }

  async setState(cloud: string, id: string, state: NodeState): Promise<boolean> {
    const nodeId = parseNodeId(id);
    if (nodeId === undefined) {
      return false;
    }
    const result = await this.nodes.update({ cloud, nodeId }, { state });
    return (result.affected ?? 0) > 0;
  }

  async setPublicIps(cloud: string, id: string, publicIps: readonly string[]): Promise<boolean> {
    const nodeId = parseNodeId(id);
    if (nodeId === undefined) {
      return false;
    }
    const result = await this.nodes.update({ cloud, nodeId }, { publicIps: JSON.stringify(publicIps) });
    return (result.affected ?? 0) > 0;
  }

  async deleteNode(cloud: string, id: string): Promise<boolean> {
    const nodeId = parseNodeId(id);
    if (nodeId === undefined) {
      return false;
    }
    const result = await this.nodes.delete({ cloud, nodeId });
    return (result.affected ?? 0) > 0;
  }

  async listKeyPairs(cloud: string): Promise<CloudKeyPair[]> {
    const rows = await this.keyPairs.find({ where: { cloud }, order: { name: 'ASC' } });
    return rows.map((row) => ({ name: row.name, fingerprint: row.fingerprint, publicKey: row.publicKey }));
  }

  /** The primary key (cloud, name) decides between two copies inserting one name at once. */
  async insertKeyPair(cloud: string, keyPair: CloudKeyPair): Promise<boolean> {
    try {
      await this.keyPairs.insert({ cloud, ...keyPair });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) {
        return false;
      }
      throw error;
    }
  }

  async deleteKeyPair(cloud: string, name: string): Promise<boolean> {
    const result = await this.keyPairs.delete({ cloud, name });
    return (result.affected ?? 0) > 0;
  }

  private async seed(cloud: string, seed: readonly DummyNodeRecord[], firstFreeId: number): Promise<void> {
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
      // Another copy of the service seeded the cloud between the check and the insert.
      if (!isUniqueViolation(error)) {
        throw error;
      }
    }
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
    state: node.state,
    publicIps: JSON.stringify(node.publicIps),
    extra: JSON.stringify(node.extra),
  });
}

function toRecord(row: DummyNodeEntity): DummyNodeRecord {
  return {
    id: String(row.nodeId),
    name: row.name,
    state: row.state === Number(NodeState.Stopped) ? NodeState.Stopped : NodeState.Running,
    publicIps: JSON.parse(row.publicIps) as string[],
    extra: JSON.parse(row.extra) as Record<string, unknown>,
  };
}
