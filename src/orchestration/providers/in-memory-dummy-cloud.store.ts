import type { CloudKeyPair, NodeState } from './cloud-provider.js';
import type { DummyCloudStore, DummyNodeRecord } from './dummy.provider.js';

interface CloudState {
  nextId: number;
  readonly nodes: Map<string, DummyNodeRecord>;
  readonly keyPairs: Map<string, CloudKeyPair>;
}

/**
 * A DummyCloudStore in process memory, for unit and contract tests: its state lives as long as the
 * object, so "a restart" in a test is a new DummyProvider over the same store. Not for production,
 * where the database-backed store keeps dummy clouds across restarts and copies of the service.
 */
export class InMemoryDummyCloudStore implements DummyCloudStore {
  private readonly clouds = new Map<string, CloudState>();

  ensureCloud(cloud: string, seed: readonly DummyNodeRecord[], firstFreeId: number): Promise<void> {
    return settle(() => {
      if (!this.clouds.has(cloud)) {
        this.clouds.set(cloud, {
          nextId: firstFreeId,
          nodes: new Map(seed.map((node) => [node.id, copy(node)])),
          keyPairs: new Map(),
        });
      }
    });
  }

  listNodes(cloud: string): Promise<DummyNodeRecord[]> {
    return settle(() =>
      [...this.state(cloud).nodes.values()].sort((a, b) => Number(a.id) - Number(b.id)).map(copy),
    );
  }

  allocateId(cloud: string): Promise<number> {
    return settle(() => {
      const state = this.state(cloud);
      const id = state.nextId;
      state.nextId += 1;
      return id;
    });
  }

  insertNode(cloud: string, node: DummyNodeRecord): Promise<void> {
    return settle(() => {
      const { nodes } = this.state(cloud);
      if (nodes.has(node.id)) {
        throw new Error(`dummy cloud '${cloud}' has a node ${node.id} already`);
      }
      nodes.set(node.id, copy(node));
    });
  }

  setState(cloud: string, id: string, state: NodeState): Promise<boolean> {
    return settle(() => {
      const { nodes } = this.state(cloud);
      const node = nodes.get(id);
      if (node) {
        nodes.set(id, { ...node, state });
      }
      return node !== undefined;
    });
  }

  setPublicIps(cloud: string, id: string, publicIps: readonly string[]): Promise<boolean> {
    return settle(() => {
      const { nodes } = this.state(cloud);
      const node = nodes.get(id);
      if (node) {
        nodes.set(id, { ...node, publicIps: [...publicIps] });
      }
      return node !== undefined;
    });
  }

  deleteNode(cloud: string, id: string): Promise<boolean> {
    return settle(() => this.state(cloud).nodes.delete(id));
  }

  listKeyPairs(cloud: string): Promise<CloudKeyPair[]> {
    return settle(() =>
      [...this.state(cloud).keyPairs.values()]
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map((key) => ({ ...key })),
    );
  }

  insertKeyPair(cloud: string, keyPair: CloudKeyPair): Promise<boolean> {
    return settle(() => {
      const { keyPairs } = this.state(cloud);
      if (keyPairs.has(keyPair.name)) {
        return false;
      }
      keyPairs.set(keyPair.name, { ...keyPair });
      return true;
    });
  }

  deleteKeyPair(cloud: string, name: string): Promise<boolean> {
    return settle(() => this.state(cloud).keyPairs.delete(name));
  }

  private state(cloud: string): CloudState {
    const state = this.clouds.get(cloud);
    if (!state) {
      throw new Error(`dummy cloud '${cloud}' used before ensureCloud`);
    }
    return state;
  }
}

/** Runs `work` now and reports its result or error through a promise, as a real store would. */
function settle<T>(work: () => T): Promise<T> {
  return new Promise((resolve) => resolve(work()));
}

// Copies keep callers from changing the stored state through a returned or given object, as a database would.
function copy(node: DummyNodeRecord): DummyNodeRecord {
  return structuredClone(node);
}
