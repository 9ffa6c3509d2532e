import { Injectable } from '@nestjs/common';
import {
  DescribeImagesCommand,
  DescribeInstancesCommand,
  DescribeInstanceTypesCommand,
  EC2Client,
  EC2ServiceException,
  RebootInstancesCommand,
  RunInstancesCommand,
  StartInstancesCommand,
  StopInstancesCommand,
  TerminateInstancesCommand,
  type Instance,
} from '@aws-sdk/client-ec2';
import { DomainError } from '../../common/errors/domain-error.js';
import { AppConfig } from '../../config/app-config.js';
import type { CloudSettings } from '../../config/clouds-file.js';
import {
  planPower,
  assertStartable,
  NodeState,
  findNodeBy,
  nodeNotFound,
  redactSecrets,
  RegisterCloudProvider,
  type CloudImage,
  type CloudNode,
  type CloudProvider,
  type CloudProviderFactory,
  type CloudSize,
  type NodeQuery,
  type PowerAction,
  type StartNodeRequest,
} from './cloud-provider.js';
import { settingsReader } from './provider-settings.js';

const EC2_TYPE = 'ec2';

/** The settings of one `type: ec2` cloud of CLOUDS_FILE, validated. */
export interface Ec2Settings {
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** Another EC2 endpoint (a compatible cloud, or a test fake); the region's AWS endpoint when unset. */
  readonly endpoint?: string;
  /** Image ids listed besides the account's own images (public or shared AMIs). */
  readonly images: readonly string[];
}

/** EC2 instance state → node state: the one table of this provider (API.md 8). */
const EC2_STATES: ReadonlyMap<string, NodeState> = new Map([
  ['pending', NodeState.Pending],
  ['running', NodeState.Running],
  ['shutting-down', NodeState.Pending],
  ['terminated', NodeState.Terminated],
  ['stopping', NodeState.Pending],
  ['stopped', NodeState.Stopped],
]);

// EC2 error codes and what they mean to a caller.
const NOT_FOUND = new Set(['InvalidInstanceID.NotFound', 'InvalidInstanceID.Malformed']);
const INVALID = new Set([
  'InvalidAMIID.NotFound',
  'InvalidAMIID.Malformed',
  'InvalidParameterValue',
  'InvalidKeyPair.NotFound',
]);
const CREDENTIALS = new Set([
  'AuthFailure',
  'UnauthorizedOperation',
  'InvalidClientTokenId',
  'SignatureDoesNotMatch',
]);
const THROTTLED = new Set(['RequestLimitExceeded', 'Throttling', 'ThrottlingException']);
// Only a guard against a cloud whose tokens go round in circles.
const MAX_PAGES = 1000;

/** Validates a cloud's settings; throws ConfigError (setting CLOUDS_FILE) naming the cloud and the key. */
export function parseEc2Settings(cloud: CloudSettings): Ec2Settings {
  const { optional, required, list, problem } = settingsReader(cloud, EC2_TYPE);
  const endpoint = optional('endpoint');
  if (endpoint !== undefined && (!/^https?:\/\/[^/]/i.test(endpoint) || !URL.canParse(endpoint))) {
    throw problem(`needs 'endpoint' to be an http(s) URL`);
  }
  return {
    region: required('region'),
    accessKeyId: required('access_key_id'),
    secretAccessKey: required('secret_access_key'),
    endpoint,
    images: list('images'),
  };
}

/** The CloudNode of an EC2 instance; what the state and addresses do not carry stays in `extra`. */
export function toEc2Node(instance: Instance): CloudNode {
  const tags = Object.fromEntries((instance.Tags ?? []).map((tag) => [tag.Key ?? '', tag.Value ?? '']));
  const extra: Record<string, unknown> = {
    status: instance.State?.Name,
    instance_type: instance.InstanceType,
    image_id: instance.ImageId,
    key_name: instance.KeyName,
    launch_time: instance.LaunchTime?.toISOString(),
    availability_zone: instance.Placement?.AvailabilityZone,
    private_dns: instance.PrivateDnsName || undefined,
    public_dns: instance.PublicDnsName || undefined,
    vpc_id: instance.VpcId,
    subnet_id: instance.SubnetId,
    tags,
  };
  return {
    id: instance.InstanceId ?? '',
    name: tags.Name ?? '',
    state: EC2_STATES.get(instance.State?.Name ?? '') ?? NodeState.Unknown,
    publicIps: instance.PublicIpAddress ? [instance.PublicIpAddress] : [],
    privateIps: instance.PrivateIpAddress ? [instance.PrivateIpAddress] : [],
    extra: Object.fromEntries(Object.entries(extra).filter(([, value]) => value !== undefined)),
  };
}

/**
 * An EC2 cloud through the AWS SDK (which signs with SigV4 and retries throttled and failed calls).
 * Terminated instances, which EC2 keeps listing for a while, are gone as far as this provider goes:
 * not listed, not found, not destroyed twice.
 */
export class Ec2Provider implements CloudProvider {
  readonly type = EC2_TYPE;
  private readonly client: EC2Client;

  constructor(
    readonly name: string,
    private readonly settings: Ec2Settings,
    options: { readonly timeoutMs: number },
  ) {
    this.client = new EC2Client({
      region: settings.region,
      endpoint: settings.endpoint,
      credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
      requestHandler: { connectionTimeout: options.timeoutMs, requestTimeout: options.timeoutMs },
    });
  }

  /**
   * Every instance EC2 lists (DescribeInstances, all pages), terminated ones included: EC2 keeps
   * those for about an hour, and they are nodes in state 2 (API.md 8), as libcloud lists them.
   */
  async listNodes(): Promise<CloudNode[]> {
    const pages = await this.pages('listing instances', (client, NextToken) =>
      client.send(new DescribeInstancesCommand({ NextToken })),
    );
    return pages.flatMap((page) =>
      (page.Reservations ?? []).flatMap((reservation) => (reservation.Instances ?? []).map(toEc2Node)),
    );
  }

  /** The account's own images plus those named in the cloud's `images` setting. */
  async listImages(): Promise<CloudImage[]> {
    const pages = await this.pages('listing images', (client, NextToken) =>
      client.send(new DescribeImagesCommand({ Owners: ['self'], NextToken })),
    );
    if (this.settings.images.length > 0) {
      const ImageIds = [...this.settings.images];
      pages.push(
        ...(await this.pages('listing the configured images', (client, NextToken) =>
          client.send(new DescribeImagesCommand({ ImageIds, NextToken })),
        )),
      );
    }
    const images = new Map<string, CloudImage>();
    for (const image of pages.flatMap((page) => page.Images ?? [])) {
      if (image.ImageId) {
        images.set(image.ImageId, { id: image.ImageId, name: image.Name ?? '' });
      }
    }
    return [...images.values()];
  }

  /** Every instance type (DescribeInstanceTypes, all pages): vCPUs, RAM in MiB, instance storage in GiB (0 when EBS-only). */
  async listSizes(): Promise<CloudSize[]> {
    const pages = await this.pages('listing instance types', (client, NextToken) =>
      client.send(new DescribeInstanceTypesCommand({ NextToken })),
    );
    return pages.flatMap((page) =>
      (page.InstanceTypes ?? []).flatMap((type) =>
        type.InstanceType
          ? [
              {
                id: type.InstanceType,
                name: type.InstanceType,
                cpu: type.VCpuInfo?.DefaultVCpus ?? 0,
                ramMiB: type.MemoryInfo?.SizeInMiB ?? 0,
                diskGiB: type.InstanceStorageSupported ? (type.InstanceStorageInfo?.TotalSizeInGB ?? 0) : 0,
              },
            ]
          : [],
      ),
    );
  }

  /** Every page of a listing, following `NextToken`. */
  private async pages<Page extends { NextToken?: string }>(
    what: string,
    fetch: (client: EC2Client, token: string | undefined) => Promise<Page>,
  ): Promise<Page[]> {
    const pages: Page[] = [];
    let token: string | undefined;
    for (let count = 0; count < MAX_PAGES; count++) {
      const page = await this.call(what, (client) => fetch(client, token));
      pages.push(page);
      token = page.NextToken || undefined;
      if (token === undefined) {
        break;
      }
    }
    return pages;
  }

  /** RunInstances of one instance, named by its `Name` tag, `metadata` as further tags. */
  async startNode(request: StartNodeRequest): Promise<CloudNode> {
    await assertStartable(this, request);
    const tags = [
      { Key: 'Name', Value: request.name },
      ...Object.entries(request.metadata ?? {}).map(([Key, Value]) => ({ Key, Value })),
    ];
    const reply = await this.call('starting an instance', (client) =>
      client.send(
        new RunInstancesCommand({
          ImageId: request.image,
          InstanceType: request.size as never,
          MinCount: 1,
          MaxCount: 1,
          KeyName: request.keyname,
          TagSpecifications: [{ ResourceType: 'instance', Tags: tags }],
        }),
      ),
    );
    const instance = reply.Instances?.[0];
    if (!instance?.InstanceId) {
      throw this.upstream('starting an instance', 'the answer has no instance');
    }
    return toEc2Node(instance);
  }

  /** TerminateInstances. Throws DomainError 'not_found' for an unknown or terminated instance. */
  async destroyNode(id: string): Promise<void> {
    if ((await this.getInstance(id)).state === NodeState.Terminated) {
      throw nodeNotFound({ id }, this.name);
    }
    await this.call(
      `terminating instance ${id}`,
      (client) => client.send(new TerminateInstancesCommand({ InstanceIds: [id] })),
      id,
    );
  }

  /** StopInstances, StartInstances or RebootInstances, then the instance as EC2 reports it. */
  async power(id: string, action: PowerAction): Promise<CloudNode> {
    return planPower(await this.getInstance(id), action, this.name, async () => {
      const input = { InstanceIds: [id] };
      const command =
        action === 'poweroff'
          ? new StopInstancesCommand(input)
          : action === 'poweron'
            ? new StartInstancesCommand(input)
            : new RebootInstancesCommand(input);
      await this.call(`${action} of instance ${id}`, (client) => client.send(command), id);
      return this.getInstance(id);
    });
  }

  findNode(query: NodeQuery): Promise<CloudNode> {
    return findNodeBy(
      query,
      this.name,
      (id) => this.getInstance(id),
      () => this.listNodes(),
    );
  }

  private async getInstance(id: string): Promise<CloudNode> {
    const reply = await this.call(
      `reading instance ${id}`,
      (client) => client.send(new DescribeInstancesCommand({ InstanceIds: [id] })),
      id,
    );
    const instance = reply.Reservations?.flatMap((reservation) => reservation.Instances ?? []).find(
      (candidate) => candidate.InstanceId === id,
    );
    if (!instance) {
      throw nodeNotFound({ id }, this.name);
    }
    return toEc2Node(instance);
  }

  /**
   * One SDK call, its failures turned into DomainErrors: an unknown instance (`nodeId` given) is
   * 'not_found'; a refused parameter 'invalid_input'; a state EC2 forbids 'conflict'; throttling that
   * outlasts the SDK's retries, or no answer in time, 'upstream_timeout' (503); refused credentials and
   * anything else 'upstream_failed' (502).
   */
  private async call<Output>(
    what: string,
    run: (client: EC2Client) => Promise<Output>,
    nodeId?: string,
  ): Promise<Output> {
    try {
      return await run(this.client);
    } catch (error) {
      throw this.translate(what, error, nodeId);
    }
  }

  private translate(what: string, error: unknown, nodeId: string | undefined): DomainError {
    if (!(error instanceof Error)) {
      return this.upstream(what, 'the call failed');
    }
    const code = error instanceof EC2ServiceException ? error.name : '';
    if (nodeId !== undefined && NOT_FOUND.has(code)) {
      return nodeNotFound({ id: nodeId }, this.name);
    }
    if (INVALID.has(code)) {
      return new DomainError('invalid_input', this.redact(`Cloud '${this.name}': ${error.message}`));
    }
    if (code === 'IncorrectInstanceState') {
      return new DomainError('conflict', this.redact(`Cloud '${this.name}': ${error.message}`));
    }
    if (CREDENTIALS.has(code)) {
      return this.upstream(
        what,
        `EC2 refused the credentials of access key ${this.settings.accessKeyId} (${code})`,
      );
    }
    if (THROTTLED.has(code)) {
      return new DomainError(
        'upstream_timeout',
        this.redact(
          `Cloud '${this.name}': ${what} failed: EC2 is throttling requests (${code}) beyond the retries`,
        ),
      );
    }
    if (error.name === 'TimeoutError' || /timed? ?out/i.test(error.message)) {
      return new DomainError(
        'upstream_timeout',
        this.redact(`Cloud '${this.name}': ${what} failed: no answer in time`),
      );
    }
    const detail = code === '' ? error.message : `EC2 answered ${code}: ${error.message}`;
    return this.upstream(what, detail);
  }

  private upstream(what: string, detail: string): DomainError {
    return new DomainError(
      'upstream_failed',
      this.redact(`Cloud '${this.name}': ${what} failed: ${detail}`.slice(0, 500)),
    );
  }

  private redact(message: string): string {
    return redactSecrets(message, [this.settings.secretAccessKey]);
  }
}

@RegisterCloudProvider()
@Injectable()
export class Ec2ProviderFactory implements CloudProviderFactory {
  readonly type = EC2_TYPE;

  constructor(private readonly config: AppConfig) {}

  /** Throws ConfigError (CLOUDS_FILE) when `region`, `access_key_id` or `secret_access_key` is missing. */
  create(cloud: CloudSettings): CloudProvider {
    return new Ec2Provider(cloud.name, parseEc2Settings(cloud), {
      timeoutMs: this.config.orchestration.upstreamTimeoutMs,
    });
  }
}
