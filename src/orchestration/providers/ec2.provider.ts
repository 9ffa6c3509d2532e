import { Injectable } from '@nestjs/common';
import type { EC2Client, Instance } from '@aws-sdk/client-ec2';
import { DomainError } from '../../common/errors/domain-error.js';
import { AppConfig } from '../../config/app-config.js';
import type { CloudSettings } from '../../config/clouds-file.js';
import { parseSshPublicKey } from './ssh-public-key.js';
import {
  type AttachedAddress,
  type CloudKeyPair,
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
  'InvalidKeyPair.Format',
  'InvalidKey.Format',
  'InvalidGroup.NotFound',
  'InvalidGroupId.Malformed',
  'InvalidParameterCombination',
  'InvalidUserData.Malformed',
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

type Ec2Sdk = typeof import('@aws-sdk/client-ec2');

/** An EC2 cloud's client and the SDK's commands to send it. */
interface Ec2Session {
  readonly client: EC2Client;
  readonly sdk: Ec2Sdk;
}

/**
 * The AWS SDK's EC2 package, loaded when an EC2 cloud is first called, not at start-up: its
 * command and shape definitions are 57 MiB of the service's RSS (idle, SQLite: 218 MiB with it
 * loaded, 161 without), paid by every deployment whether or not it has an EC2 cloud.
 */
let ec2Sdk: Promise<Ec2Sdk> | undefined;
/** The SDK once loaded: what translate() tells EC2's own errors by. */
let loadedSdk: Ec2Sdk | undefined;
function loadEc2Sdk(): Promise<Ec2Sdk> {
  ec2Sdk ??= import('@aws-sdk/client-ec2').then((sdk) => (loadedSdk = sdk));
  return ec2Sdk;
}

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
  private session?: Promise<Ec2Session>;

  constructor(
    readonly name: string,
    private readonly settings: Ec2Settings,
    private readonly options: { readonly timeoutMs: number },
  ) {}

  /** The client, made with the first call (the SDK loads then). */
  private connect(): Promise<Ec2Session> {
    this.session ??= loadEc2Sdk().then((sdk) => ({
      sdk,
      client: new sdk.EC2Client({
        region: this.settings.region,
        endpoint: this.settings.endpoint,
        credentials: {
          accessKeyId: this.settings.accessKeyId,
          secretAccessKey: this.settings.secretAccessKey,
        },
        requestHandler: { connectionTimeout: this.options.timeoutMs, requestTimeout: this.options.timeoutMs },
      }),
    }));
    return this.session;
  }

  /**
   * Every instance EC2 lists (DescribeInstances, all pages), terminated ones included: EC2 keeps
   * those for about an hour, and they are nodes in state 2 (API.md 8), as libcloud lists them.
   */
  async listNodes(): Promise<CloudNode[]> {
    const pages = await this.pages('listing instances', ({ client, sdk }, NextToken) =>
      client.send(new sdk.DescribeInstancesCommand({ NextToken })),
    );
    return pages.flatMap((page) =>
      (page.Reservations ?? []).flatMap((reservation) => (reservation.Instances ?? []).map(toEc2Node)),
    );
  }

  /** The account's own images plus those named in the cloud's `images` setting. */
  async listImages(): Promise<CloudImage[]> {
    const pages = await this.pages('listing images', ({ client, sdk }, NextToken) =>
      client.send(new sdk.DescribeImagesCommand({ Owners: ['self'], NextToken })),
    );
    if (this.settings.images.length > 0) {
      const ImageIds = [...this.settings.images];
      pages.push(
        ...(await this.pages('listing the configured images', ({ client, sdk }, NextToken) =>
          client.send(new sdk.DescribeImagesCommand({ ImageIds, NextToken })),
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
    const pages = await this.pages('listing instance types', ({ client, sdk }, NextToken) =>
      client.send(new sdk.DescribeInstanceTypesCommand({ NextToken })),
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
    fetch: (ec2: Ec2Session, token: string | undefined) => Promise<Page>,
  ): Promise<Page[]> {
    const pages: Page[] = [];
    let token: string | undefined;
    for (let count = 0; count < MAX_PAGES; count++) {
      const page = await this.call(what, (ec2) => fetch(ec2, token));
      pages.push(page);
      token = page.NextToken || undefined;
      if (token === undefined) {
        break;
      }
    }
    return pages;
  }

  /**
   * RunInstances of one instance, named by its `Name` tag, `metadata` and `tags` as further tags, user
   * data in base64, security groups by name or (`sg-…`) by id.
   */
  async startNode(request: StartNodeRequest): Promise<CloudNode> {
    await assertStartable(this, request);
    const tags = [
      { Key: 'Name', Value: request.name },
      ...Object.entries({ ...request.metadata, ...request.tags }).map(([Key, Value]) => ({ Key, Value })),
    ];
    const groups = request.securityGroups ?? [];
    const groupIds = groups.filter((group) => /^sg-[0-9a-f]+$/.test(group));
    const groupNames = groups.filter((group) => !groupIds.includes(group));
    const reply = await this.call('starting an instance', ({ client, sdk }) =>
      client.send(
        new sdk.RunInstancesCommand({
          ImageId: request.image,
          InstanceType: request.size as never,
          MinCount: 1,
          MaxCount: 1,
          KeyName: request.keyname,
          TagSpecifications: [{ ResourceType: 'instance', Tags: tags }],
          UserData:
            request.userData === undefined
              ? undefined
              : Buffer.from(request.userData, 'utf8').toString('base64'),
          SecurityGroupIds: groupIds.length > 0 ? groupIds : undefined,
          SecurityGroups: groupNames.length > 0 ? groupNames : undefined,
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
      ({ client, sdk }) => client.send(new sdk.TerminateInstancesCommand({ InstanceIds: [id] })),
      id,
    );
  }

  /** StopInstances, StartInstances or RebootInstances, then the instance as EC2 reports it. */
  async power(id: string, action: PowerAction): Promise<CloudNode> {
    return planPower(await this.getInstance(id), action, this.name, async () => {
      const input = { InstanceIds: [id] };
      await this.call(
        `${action} of instance ${id}`,
        ({ client, sdk }) =>
          action === 'poweroff'
            ? client.send(new sdk.StopInstancesCommand(input))
            : action === 'poweron'
              ? client.send(new sdk.StartInstancesCommand(input))
              : client.send(new sdk.RebootInstancesCommand(input)),
        id,
      );
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

  /** DescribeKeyPairs, with the public keys. */
  async listKeyPairs(): Promise<CloudKeyPair[]> {
    const reply = await this.call('listing key pairs', ({ client, sdk }) =>
      client.send(new sdk.DescribeKeyPairsCommand({ IncludePublicKey: true })),
    );
    return (reply.KeyPairs ?? []).flatMap((key) =>
      key.KeyName
        ? [
            {
              name: key.KeyName,
              fingerprint: key.KeyFingerprint ?? '',
              publicKey: key.PublicKey?.trim() ?? '',
            },
          ]
        : [],
    );
  }

  /** ImportKeyPair; EC2's fingerprint (MD5 for RSA, SHA-256 for ed25519) in the answer. */
  async importKeyPair(name: string, publicKey: string): Promise<CloudKeyPair> {
    const key = parseSshPublicKey(publicKey);
    try {
      const reply = await this.call(`importing key pair ${name}`, ({ client, sdk }) =>
        client.send(
          new sdk.ImportKeyPairCommand({ KeyName: name, PublicKeyMaterial: Buffer.from(key.line, 'utf8') }),
        ),
      );
      return { name, fingerprint: reply.KeyFingerprint ?? '', publicKey: key.line };
    } catch (error) {
      if (error instanceof DomainError && /InvalidKeyPair\.Duplicate/.test(error.message)) {
        throw new DomainError('conflict', `Key pair '${name}' exists in cloud '${this.name}'`);
      }
      throw error;
    }
  }

  /** DeleteKeyPair, after DescribeKeyPairs: EC2 answers a deletion of an unknown name with success. */
  async deleteKeyPair(name: string): Promise<void> {
    if (!(await this.listKeyPairs()).some((key) => key.name === name)) {
      throw new DomainError('not_found', `Key pair '${name}' not found in cloud '${this.name}'`);
    }
    await this.call(`deleting key pair ${name}`, ({ client, sdk }) =>
      client.send(new sdk.DeleteKeyPairCommand({ KeyName: name })),
    );
  }

  /**
   * An Elastic IP: AllocateAddress, then AssociateAddress with the instance; released again when the
   * association fails. 'conflict' when the instance has an Elastic IP already.
   */
  async attachAddress(nodeId: string): Promise<AttachedAddress> {
    const node = await this.getInstance(nodeId);
    if (node.state === NodeState.Terminated) {
      throw nodeNotFound({ id: nodeId }, this.name);
    }
    const attached = await this.addressesOf(nodeId);
    if (attached.length > 0) {
      throw new DomainError(
        'conflict',
        `Instance ${nodeId} of cloud '${this.name}' has the Elastic IP ${attached.map((a) => a.PublicIp).join(', ')} already`,
      );
    }
    const allocated = await this.call('allocating an Elastic IP', ({ client, sdk }) =>
      client.send(new sdk.AllocateAddressCommand({ Domain: 'vpc' })),
    );
    const { AllocationId, PublicIp } = allocated;
    if (!AllocationId || !PublicIp) {
      throw this.upstream('allocating an Elastic IP', 'the answer has no allocation');
    }
    try {
      await this.call(
        `attaching ${PublicIp} to instance ${nodeId}`,
        ({ client, sdk }) =>
          client.send(new sdk.AssociateAddressCommand({ AllocationId, InstanceId: nodeId })),
        nodeId,
      );
    } catch (error) {
      // Nothing half-made: the address allocated for this attach is released again.
      await this.call(`releasing ${PublicIp}`, ({ client, sdk }) =>
        client.send(new sdk.ReleaseAddressCommand({ AllocationId })),
      ).catch(() => undefined);
      throw error;
    }
    return { address: PublicIp, node: await this.getInstance(nodeId) };
  }

  /** DisassociateAddress and ReleaseAddress of each Elastic IP of the instance. */
  async releaseAddress(nodeId: string): Promise<CloudNode> {
    await this.getInstance(nodeId);
    const attached = await this.addressesOf(nodeId);
    if (attached.length === 0) {
      throw new DomainError('not_found', `Instance ${nodeId} of cloud '${this.name}' has no Elastic IP`);
    }
    for (const address of attached) {
      if (address.AssociationId) {
        const AssociationId = address.AssociationId;
        await this.call(`detaching ${address.PublicIp}`, ({ client, sdk }) =>
          client.send(new sdk.DisassociateAddressCommand({ AssociationId })),
        );
      }
      const AllocationId = address.AllocationId;
      await this.call(`releasing ${address.PublicIp}`, ({ client, sdk }) =>
        client.send(new sdk.ReleaseAddressCommand({ AllocationId })),
      );
    }
    return this.getInstance(nodeId);
  }

  private async addressesOf(
    nodeId: string,
  ): Promise<{ PublicIp?: string; AllocationId?: string; AssociationId?: string }[]> {
    const reply = await this.call(`listing the Elastic IPs of instance ${nodeId}`, ({ client, sdk }) =>
      client.send(new sdk.DescribeAddressesCommand({ Filters: [{ Name: 'instance-id', Values: [nodeId] }] })),
    );
    return reply.Addresses ?? [];
  }

  private async getInstance(id: string): Promise<CloudNode> {
    const reply = await this.call(
      `reading instance ${id}`,
      ({ client, sdk }) => client.send(new sdk.DescribeInstancesCommand({ InstanceIds: [id] })),
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
    run: (ec2: Ec2Session) => Promise<Output>,
    nodeId?: string,
  ): Promise<Output> {
    try {
      return await run(await this.connect());
    } catch (error) {
      throw this.translate(what, error, nodeId);
    }
  }

  private translate(what: string, error: unknown, nodeId: string | undefined): DomainError {
    if (!(error instanceof Error)) {
      return this.upstream(what, 'the call failed');
    }
    const code = loadedSdk && error instanceof loadedSdk.EC2ServiceException ? error.name : '';
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
