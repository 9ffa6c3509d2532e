import { Injectable, Module } from '@nestjs/common';
import { DomainError } from '../../src/common/errors/domain-error.js';
import type { CloudSettings } from '../../src/config/clouds-file.js';
import { ConfigError } from '../../src/config/config-error.js';
import {
  NodeState,
  nodeNotFound,
  pickNode,
  planPower,
  RegisterCloudProvider,
  UnsupportedOperation,
  type AttachedAddress,
  type CloudKeyPair,
  type CloudImage,
  type CloudNode,
  type CloudProvider,
  type CloudProviderFactory,
  type CloudSize,
  type NodeQuery,
  type PowerAction,
  type StartNodeRequest,
} from '../../src/orchestration/providers/cloud-provider.js';

/**
 * A cloud provider that lives only in the tests: the walk-through of docs/extending.md ("a new
 * cloud provider") done for real. Its nodes live in the memory of the provider, one list per cloud.
 */
export const SCRATCH_TYPE = 'scratch';

const IMAGES: readonly CloudImage[] = [{ id: 'img-debian', name: 'Debian 12' }];
const SIZES: readonly CloudSize[] = [{ id: 'tiny', name: 'Tiny', cpu: 1, ramMiB: 512, diskGiB: 10 }];

export class ScratchProvider implements CloudProvider {
  readonly type = SCRATCH_TYPE;
  private readonly nodes = new Map<string, CloudNode>();
  private started = 0;

  constructor(
    readonly name: string,
    /** The `zone:` setting of the cloud, shown in each node's `extra`. */
    private readonly zone: string,
  ) {}

  listNodes(): Promise<CloudNode[]> {
    return Promise.resolve([...this.nodes.values()]);
  }

  listImages(): Promise<CloudImage[]> {
    return Promise.resolve([...IMAGES]);
  }

  listSizes(): Promise<CloudSize[]> {
    return Promise.resolve([...SIZES]);
  }

  startNode(request: StartNodeRequest): Promise<CloudNode> {
    if (!IMAGES.some((image) => image.id === request.image)) {
      return Promise.reject(
        new DomainError('invalid_input', `No image ${request.image} in cloud '${this.name}'`),
      );
    }
    if (!SIZES.some((size) => size.id === request.size)) {
      return Promise.reject(
        new DomainError('invalid_input', `No size ${request.size} in cloud '${this.name}'`),
      );
    }
    this.started += 1;
    const node: CloudNode = {
      id: `scratch-${this.started}`,
      name: request.name,
      state: NodeState.Running,
      publicIps: [],
      privateIps: [`10.9.0.${this.started}`],
      extra: {
        zone: this.zone,
        image: request.image,
        size: request.size,
        ...(request.userData === undefined ? {} : { user_data: request.userData }),
        ...(request.securityGroups === undefined ? {} : { security_groups: [...request.securityGroups] }),
        ...(request.tags === undefined ? {} : { tags: { ...request.tags } }),
      },
    };
    this.nodes.set(node.id, node);
    return Promise.resolve(node);
  }

  destroyNode(id: string): Promise<void> {
    if (!this.nodes.delete(id)) {
      return Promise.reject(nodeNotFound({ id }, this.name));
    }
    return Promise.resolve();
  }

  async power(id: string, action: PowerAction): Promise<CloudNode> {
    return planPower(await this.findNode({ id }), action, this.name, () => {
      const node = this.nodes.get(id);
      if (node === undefined) {
        return Promise.reject(nodeNotFound({ id }, this.name));
      }
      const powered = { ...node, state: action === 'poweroff' ? NodeState.Stopped : NodeState.Running };
      this.nodes.set(id, powered);
      return Promise.resolve(powered);
    });
  }

  findNode(query: NodeQuery): Promise<CloudNode> {
    // pickNode throws 'not_found'; inside then() that becomes the rejection the contract asks for.
    return Promise.resolve().then(() => pickNode([...this.nodes.values()], query, this.name));
  }

  // What this cloud cannot do it says with UnsupportedOperation: the caller gets a 409, never a 500.
  listKeyPairs(): Promise<CloudKeyPair[]> {
    return Promise.reject(new UnsupportedOperation(this, 'keep SSH key pairs'));
  }

  importKeyPair(): Promise<CloudKeyPair> {
    return Promise.reject(new UnsupportedOperation(this, 'keep SSH key pairs'));
  }

  deleteKeyPair(): Promise<void> {
    return Promise.reject(new UnsupportedOperation(this, 'keep SSH key pairs'));
  }

  attachAddress(): Promise<AttachedAddress> {
    return Promise.reject(new UnsupportedOperation(this, 'attach public addresses'));
  }

  releaseAddress(): Promise<CloudNode> {
    return Promise.reject(new UnsupportedOperation(this, 'release public addresses'));
  }
}

/** Step 2 of the guide: the factory, marked for the registry; it checks the cloud's settings. */
@RegisterCloudProvider()
@Injectable()
export class ScratchProviderFactory implements CloudProviderFactory {
  readonly type = SCRATCH_TYPE;

  create(cloud: CloudSettings): CloudProvider {
    const zone = cloud.options.zone;
    if (typeof zone !== 'string' || zone === '') {
      throw new ConfigError('CLOUDS_FILE', `cloud '${cloud.name}' (type ${SCRATCH_TYPE}) needs 'zone'`);
    }
    return new ScratchProvider(cloud.name, zone);
  }
}

/** Step 3: the one registration line, here in a test module instead of OrchestrationModule. */
@Module({ providers: [ScratchProviderFactory] })
export class ScratchCloudModule {}
