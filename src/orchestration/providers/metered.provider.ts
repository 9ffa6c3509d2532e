import { DomainError } from '../../common/errors/domain-error.js';
import type { MetricsService } from '../../metrics/metrics.service.js';
import type {
  AttachedAddress,
  CloudKeyPair,
  CloudImage,
  CloudNode,
  CloudProvider,
  CloudSize,
  NodeQuery,
  PowerAction,
  StartNodeRequest,
} from './cloud-provider.js';

/**
 * Counts every call to a cloud by provider type, operation and result: `ok`; `refused` when
 * the cloud answered but said no (an unknown node, image or size); `error` when it failed
 * (unreachable, timed out, 5xx). Wraps any provider, so a new cloud type is counted for free.
 */
export class MeteredCloudProvider implements CloudProvider {
  readonly name: string;
  readonly type: string;

  constructor(
    private readonly inner: CloudProvider,
    private readonly metrics: MetricsService,
  ) {
    this.name = inner.name;
    this.type = inner.type;
  }

  listNodes(): Promise<CloudNode[]> {
    return this.count('list_nodes', () => this.inner.listNodes());
  }

  listImages(): Promise<CloudImage[]> {
    return this.count('list_images', () => this.inner.listImages());
  }

  listSizes(): Promise<CloudSize[]> {
    return this.count('list_sizes', () => this.inner.listSizes());
  }

  startNode(request: StartNodeRequest): Promise<CloudNode> {
    return this.count('start_node', () => this.inner.startNode(request));
  }

  destroyNode(id: string): Promise<void> {
    return this.count('destroy_node', () => this.inner.destroyNode(id));
  }

  power(id: string, action: PowerAction): Promise<CloudNode> {
    return this.count(`power_${action}`, () => this.inner.power(id, action));
  }

  findNode(query: NodeQuery): Promise<CloudNode> {
    return this.count('find_node', () => this.inner.findNode(query));
  }

  listKeyPairs(): Promise<CloudKeyPair[]> {
    return this.count('list_key_pairs', () => this.inner.listKeyPairs());
  }

  importKeyPair(name: string, publicKey: string): Promise<CloudKeyPair> {
    return this.count('import_key_pair', () => this.inner.importKeyPair(name, publicKey));
  }

  deleteKeyPair(name: string): Promise<void> {
    return this.count('delete_key_pair', () => this.inner.deleteKeyPair(name));
  }

  attachAddress(nodeId: string): Promise<AttachedAddress> {
    return this.count('attach_address', () => this.inner.attachAddress(nodeId));
  }

  releaseAddress(nodeId: string): Promise<CloudNode> {
    return this.count('release_address', () => this.inner.releaseAddress(nodeId));
  }

  private async count<T>(operation: string, call: () => Promise<T>): Promise<T> {
    const labels = { provider: this.type, operation };
    try {
      const result = await call();
      this.metrics.cloudCalls.inc({ ...labels, result: 'ok' });
      return result;
    } catch (error) {
      const refused =
        error instanceof DomainError &&
        (error.kind === 'not_found' || error.kind === 'invalid_input' || error.kind === 'conflict');
      this.metrics.cloudCalls.inc({ ...labels, result: refused ? 'refused' : 'error' });
      throw error;
    }
  }
}
