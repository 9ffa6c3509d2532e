import { createHash, createHmac, randomBytes } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback EC2 speaking the Query API as the AWS SDK uses it: form-encoded `POST /` with
 * `Action=…&Version=2016-11-15`, a SigV4 `Authorization` header (verified: access key, scope and the
 * signature recomputed with the secret, so a wrong secret is refused as EC2 refuses it), XML replies in EC2's namespace, `NextToken` pagination, and EC2's error codes in
 * `<Response><Errors>`. Instances change state at once (stop → stopped), so tests need not wait.
 * Key pairs (Import/Describe/DeleteKeyPair) and Elastic IPs (Allocate/Associate/Disassociate/Release/
 * DescribeAddresses) are kept as EC2 keeps them; RunInstances checks its user data (base64), key name,
 * security groups (names or ids) and tags (no `aws:` prefix) as EC2 does.
 */
const NS = 'http://ec2.amazonaws.com/doc/2016-11-15/';
const STATE_CODES: Record<string, number> = {
  pending: 0,
  running: 16,
  'shutting-down': 32,
  terminated: 48,
  stopping: 64,
  stopped: 80,
};

export interface FakeKeyPair {
  id: string;
  name: string;
  fingerprint: string;
  type: 'rsa' | 'ed25519';
  publicKey: string;
}

export interface FakeAddress {
  allocationId: string;
  publicIp: string;
  associationId?: string;
  instanceId?: string;
}

export interface FakeInstance {
  id: string;
  imageId: string;
  type: string;
  state: string;
  name: string;
  tags: Record<string, string>;
  keyName?: string;
  /** The user data as it decodes from RunInstances' base64. */
  userData?: string;
  securityGroups: string[];
  privateIp: string;
  publicIp?: string;
  /** An Elastic IP associated with the instance replaces its public address. */
  elasticIp?: string;
  launchTime: string;
}

export interface FakeInstanceType {
  type: string;
  vcpus: number;
  memoryMiB: number;
  /** Instance storage in GB; undefined when EBS-only. */
  storageGB?: number;
}

export interface Ec2Request {
  readonly action: string;
  readonly params: URLSearchParams;
  readonly authorization?: string;
}

export class Ec2Fake {
  readonly accessKeyId = 'AKIAFAKE0EXAMPLE0001';
  readonly secretAccessKey = 'fake/Secret+Key/for/Tests/0123456789abcdef';
  readonly ownerId = '123456789012';
  readonly requests: Ec2Request[] = [];
  readonly instances: FakeInstance[] = [];
  /** The account's own images, then public ones that only ImageIds names. */
  readonly images = [
    { id: 'ami-0a1b2c3d4e5f60001', name: 'lab-ubuntu-24.04', owner: 'self' },
    { id: 'ami-0a1b2c3d4e5f60002', name: 'lab-debian-12', owner: 'self' },
    { id: 'ami-0fedcba9876540003', name: 'amazon/al2023-ami-2023', owner: 'amazon' },
  ];
  readonly instanceTypes: FakeInstanceType[] = [
    { type: 't3.micro', vcpus: 2, memoryMiB: 1024 },
    { type: 't3.large', vcpus: 2, memoryMiB: 8192 },
    { type: 'm5d.large', vcpus: 2, memoryMiB: 8192, storageGB: 75 },
    { type: 'c5.xlarge', vcpus: 4, memoryMiB: 8192 },
    { type: 'r5.2xlarge', vcpus: 8, memoryMiB: 65536 },
  ];
  readonly securityGroupList = [
    { id: 'sg-0a1b2c3d4e5f60001', name: 'default' },
    { id: 'sg-0a1b2c3d4e5f60002', name: 'web' },
  ];
  readonly keyPairs = new Map<string, FakeKeyPair>();
  readonly addresses: FakeAddress[] = [];
  /** The next AssociateAddress answers this EC2 error (400). */
  failNextAssociate?: { code: string; message: string };
  private allocated = 0;
  /** Items per page of DescribeInstances and DescribeInstanceTypes (the SDK then follows NextToken). */
  pageSize = 2;
  /** The next this-many requests answer RequestLimitExceeded (503). */
  throttleNext = 0;
  private created = 0;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Ec2Fake> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const fake = new Ec2Fake(server, `http://127.0.0.1:${port}`);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      fake.handle(req, res).catch((error: unknown) => {
        fake.error(res, 500, 'InternalError', `fake failed: ${String(error)}`);
      });
    });
    return fake;
  }

  /** CLOUDS_FILE settings of a cloud on this fake. */
  cloudOptions(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      region: 'us-east-1',
      access_key_id: this.accessKeyId,
      secret_access_key: this.secretAccessKey,
      endpoint: this.url,
      images: ['ami-0fedcba9876540003'],
      ...overrides,
    };
  }

  /** Requests of this Action, oldest first. */
  actions(action: string): Ec2Request[] {
    return this.requests.filter((request) => request.action === action);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /**
   * Recomputes the SigV4 signature of the request (AWS's "Signature Version 4 signing process")
   * with this fake's secret: canonical request, string to sign, derived key.
   */
  private signedByUs(req: IncomingMessage, body: Buffer, authorization: string): boolean {
    const parts =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/ec2\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
        authorization,
      );
    const amzDate = req.headers['x-amz-date'];
    if (!parts || typeof amzDate !== 'string' || parts[1] !== this.accessKeyId) {
      return false;
    }
    const [, , date, region, signedHeaders, signature] = parts;
    const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
    const hmac = (key: string | Buffer, data: string): Buffer =>
      createHmac('sha256', key).update(data).digest();
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = [...url.searchParams]
      .map(([k, v]) => [encodeURIComponent(k), encodeURIComponent(v)])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${k}=${v}`)
      .join('&');
    const headers = signedHeaders
      .split(';')
      .map(
        (name) =>
          `${name}:${String(req.headers[name] ?? '')
            .trim()
            .replace(/\s+/g, ' ')}\n`,
      )
      .join('');
    const payloadHash = (req.headers['x-amz-content-sha256'] as string | undefined) ?? sha256(body);
    const canonical = [req.method, url.pathname, query, headers, signedHeaders, payloadHash].join('\n');
    const scope = `${date}/${region}/ec2/aws4_request`;
    const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
    let key: Buffer = hmac(`AWS4${this.secretAccessKey}`, date);
    for (const step of [region, 'ec2', 'aws4_request']) {
      key = hmac(key, step);
    }
    return createHmac('sha256', key).update(toSign).digest('hex') === signature;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) {
      chunks.push(chunk as Buffer);
    }
    const body = Buffer.concat(chunks);
    const params = new URLSearchParams(body.toString('utf8'));
    const action = params.get('Action') ?? '';
    const authorization = req.headers.authorization;
    this.requests.push({ action, params, authorization });
    if (
      req.method !== 'POST' ||
      !String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')
    ) {
      this.error(res, 400, 'InvalidAction', 'The EC2 Query API takes form-encoded POST requests');
      return;
    }
    if (!this.signedByUs(req, body, authorization ?? '')) {
      this.error(res, 401, 'AuthFailure', 'AWS was not able to validate the provided access credentials');
      return;
    }
    if (this.throttleNext > 0) {
      this.throttleNext -= 1;
      this.error(res, 503, 'RequestLimitExceeded', 'Request limit exceeded.');
      return;
    }
    switch (action) {
      case 'DescribeInstances':
        return this.describeInstances(res, params);
      case 'DescribeImages':
        return this.describeImages(res, params);
      case 'DescribeInstanceTypes':
        return this.describeInstanceTypes(res, params);
      case 'RunInstances':
        return this.runInstances(res, params);
      case 'TerminateInstances':
        return this.changeState(res, params, 'TerminateInstances', () => 'terminated');
      case 'StopInstances':
        return this.changeState(res, params, 'StopInstances', (from) =>
          from === 'running' || from === 'stopped' ? 'stopped' : undefined,
        );
      case 'StartInstances':
        return this.changeState(res, params, 'StartInstances', (from) =>
          from === 'stopped' || from === 'running' ? 'running' : undefined,
        );
      case 'RebootInstances':
        return this.reboot(res, params);
      case 'ImportKeyPair':
        return this.importKeyPair(res, params);
      case 'DescribeKeyPairs':
        return this.describeKeyPairs(res, params);
      case 'DeleteKeyPair':
        this.keyPairs.delete(params.get('KeyName') ?? '');
        // EC2 answers true whether or not the key pair existed.
        return this.reply(res, 'DeleteKeyPairResponse', '<return>true</return>');
      case 'AllocateAddress':
        return this.allocateAddress(res, params);
      case 'AssociateAddress':
        return this.associateAddress(res, params);
      case 'DisassociateAddress':
        return this.disassociateAddress(res, params);
      case 'ReleaseAddress':
        return this.releaseAddress(res, params);
      case 'DescribeAddresses':
        return this.describeAddresses(res, params);
      default:
        this.error(res, 400, 'InvalidAction', `The action ${action} is not valid for this web service.`);
    }
  }

  private describeInstances(res: ServerResponse, params: URLSearchParams): void {
    const ids = list(params, 'InstanceId');
    let selected = this.instances;
    if (ids.length > 0) {
      const unknown = this.badIds(res, ids);
      if (unknown) {
        return;
      }
      selected = this.instances.filter((instance) => ids.includes(instance.id));
    }
    const { page, next } = this.page(selected, params.get('NextToken'));
    const items = page
      .map(
        (instance) =>
          `<item><reservationId>r-${instance.id.slice(2)}</reservationId><ownerId>${this.ownerId}</ownerId><groupSet/><instancesSet>${instanceXml(instance)}</instancesSet></item>`,
      )
      .join('');
    this.reply(res, 'DescribeInstancesResponse', `<reservationSet>${items}</reservationSet>${nextXml(next)}`);
  }

  private describeImages(res: ServerResponse, params: URLSearchParams): void {
    const owners = list(params, 'Owner');
    const ids = list(params, 'ImageId');
    const unknown = ids.find((id) => !this.images.some((image) => image.id === id));
    if (unknown !== undefined) {
      this.error(res, 400, 'InvalidAMIID.NotFound', `The image id '[${unknown}]' does not exist`);
      return;
    }
    const selected = this.images.filter(
      (image) =>
        (owners.length === 0 || owners.includes(image.owner)) && (ids.length === 0 || ids.includes(image.id)),
    );
    const items = selected
      .map(
        (image) =>
          `<item><imageId>${image.id}</imageId><imageLocation>${this.ownerId}/${image.name}</imageLocation><imageState>available</imageState><imageOwnerId>${this.ownerId}</imageOwnerId><isPublic>${image.owner !== 'self'}</isPublic><architecture>x86_64</architecture><imageType>machine</imageType><name>${image.name}</name><rootDeviceType>ebs</rootDeviceType></item>`,
      )
      .join('');
    this.reply(res, 'DescribeImagesResponse', `<imagesSet>${items}</imagesSet>`);
  }

  private describeInstanceTypes(res: ServerResponse, params: URLSearchParams): void {
    const { page, next } = this.page(this.instanceTypes, params.get('NextToken'));
    const items = page
      .map(
        (type) =>
          `<item><instanceType>${type.type}</instanceType><vCpuInfo><defaultVCpus>${type.vcpus}</defaultVCpus></vCpuInfo><memoryInfo><sizeInMiB>${type.memoryMiB}</sizeInMiB></memoryInfo><instanceStorageSupported>${type.storageGB !== undefined}</instanceStorageSupported>${type.storageGB === undefined ? '' : `<instanceStorageInfo><totalSizeInGB>${type.storageGB}</totalSizeInGB></instanceStorageInfo>`}</item>`,
      )
      .join('');
    this.reply(
      res,
      'DescribeInstanceTypesResponse',
      `<instanceTypeSet>${items}</instanceTypeSet>${nextXml(next)}`,
    );
  }

  private runInstances(res: ServerResponse, params: URLSearchParams): void {
    const imageId = params.get('ImageId') ?? '';
    const type = params.get('InstanceType') ?? '';
    if (!this.images.some((image) => image.id === imageId)) {
      this.error(res, 400, 'InvalidAMIID.NotFound', `The image id '[${imageId}]' does not exist`);
      return;
    }
    if (!this.instanceTypes.some((known) => known.type === type)) {
      this.error(res, 400, 'InvalidParameterValue', `Invalid value '${type}' for InstanceType.`);
      return;
    }
    const tags: Record<string, string> = {};
    for (let i = 1; params.has(`TagSpecification.1.Tag.${i}.Key`); i++) {
      tags[params.get(`TagSpecification.1.Tag.${i}.Key`) ?? ''] =
        params.get(`TagSpecification.1.Tag.${i}.Value`) ?? '';
    }
    const reservedKey = Object.keys(tags).find((key) => key.toLowerCase().startsWith('aws:'));
    if (reservedKey !== undefined) {
      this.error(
        res,
        400,
        'InvalidParameterValue',
        `Tag keys starting with 'aws:' are reserved for internal use`,
      );
      return;
    }
    const longKey = Object.keys(tags).find((key) => key.length > 128);
    if (longKey !== undefined) {
      this.error(res, 400, 'InvalidParameterValue', `Tag key exceeds the maximum length of 128 characters`);
      return;
    }
    const keyName = params.get('KeyName') ?? undefined;
    if (keyName !== undefined && !this.keyPairs.has(keyName)) {
      this.error(res, 400, 'InvalidKeyPair.NotFound', `The key pair '${keyName}' does not exist`);
      return;
    }
    const encoded = params.get('UserData');
    if (
      encoded !== null &&
      (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(encoded) ||
        encoded.length > 21848)
    ) {
      this.error(res, 400, 'InvalidParameterValue', 'Invalid BASE64 encoding of user data.');
      return;
    }
    const groups: string[] = [];
    for (const name of list(params, 'SecurityGroup')) {
      const group = this.securityGroupList.find((known) => known.name === name);
      if (!group) {
        this.error(
          res,
          400,
          'InvalidGroup.NotFound',
          `The security group '${name}' does not exist in default VPC 'vpc-0abc1234'`,
        );
        return;
      }
      groups.push(group.id);
    }
    for (const id of list(params, 'SecurityGroupId')) {
      if (!this.securityGroupList.some((known) => known.id === id)) {
        this.error(res, 400, 'InvalidGroup.NotFound', `The security group '${id}' does not exist`);
        return;
      }
      groups.push(id);
    }
    this.created += 1;
    const instance: FakeInstance = {
      id: `i-${randomBytes(9).toString('hex').slice(0, 17)}`,
      imageId,
      type,
      state: 'running',
      name: tags.Name ?? '',
      tags,
      keyName,
      userData: encoded === null ? undefined : Buffer.from(encoded, 'base64').toString('utf8'),
      securityGroups: groups.length > 0 ? groups : [this.securityGroupList[0].id],
      privateIp: `172.31.${this.created >> 8}.${this.created & 255}`,
      publicIp: `198.51.100.${this.created & 255}`,
      launchTime: new Date().toISOString().replace(/\.\d+Z$/, '.000Z'),
    };
    this.instances.push(instance);
    this.reply(
      res,
      'RunInstancesResponse',
      `<reservationId>r-${instance.id.slice(2)}</reservationId><ownerId>${this.ownerId}</ownerId><groupSet/><instancesSet>${instanceXml({ ...instance, state: 'pending' })}</instancesSet>`,
    );
  }

  private changeState(
    res: ServerResponse,
    params: URLSearchParams,
    action: string,
    target: (from: string) => string | undefined,
  ): void {
    const ids = list(params, 'InstanceId');
    if (this.badIds(res, ids)) {
      return;
    }
    const found = ids.map((id) => this.instances.find((instance) => instance.id === id) as FakeInstance);
    const refused = found.find(
      (instance) => instance.state !== 'terminated' && target(instance.state) === undefined,
    );
    if (refused) {
      this.error(
        res,
        400,
        'IncorrectInstanceState',
        `The instance '${refused.id}' is not in a state from which it can be ${action === 'StopInstances' ? 'stopped' : 'started'}.`,
      );
      return;
    }
    const items = found
      .map((instance) => {
        const previous = instance.state;
        instance.state = instance.state === 'terminated' ? 'terminated' : (target(previous) ?? previous);
        return `<item><instanceId>${instance.id}</instanceId><currentState>${stateXml(instance.state)}</currentState><previousState>${stateXml(previous)}</previousState></item>`;
      })
      .join('');
    this.reply(res, `${action}Response`, `<instancesSet>${items}</instancesSet>`);
  }

  private reboot(res: ServerResponse, params: URLSearchParams): void {
    const ids = list(params, 'InstanceId');
    if (this.badIds(res, ids)) {
      return;
    }
    this.reply(res, 'RebootInstancesResponse', '<return>true</return>');
  }

  private importKeyPair(res: ServerResponse, params: URLSearchParams): void {
    const name = params.get('KeyName') ?? '';
    const material = Buffer.from(params.get('PublicKeyMaterial') ?? '', 'base64')
      .toString('utf8')
      .trim();
    if (this.keyPairs.has(name)) {
      this.error(res, 400, 'InvalidKeyPair.Duplicate', `The keypair '${name}' already exists.`);
      return;
    }
    const [type, data] = material.split(/\s+/);
    const blob = Buffer.from(data ?? '', 'base64');
    const typeLength = blob.length >= 4 ? blob.readUInt32BE(0) : 0;
    if (
      (type !== 'ssh-rsa' && type !== 'ssh-ed25519') ||
      blob.subarray(4, 4 + typeLength).toString('latin1') !== type
    ) {
      this.error(res, 400, 'InvalidKey.Format', 'Key is not in valid OpenSSH public key format');
      return;
    }
    // EC2's fingerprints of imported keys: MD5 (RFC 4716) for RSA, base64 SHA-256 for ed25519.
    const fingerprint =
      type === 'ssh-rsa'
        ? (createHash('md5').update(blob).digest('hex').match(/../g) ?? []).join(':')
        : createHash('sha256').update(blob).digest('base64');
    const key: FakeKeyPair = {
      id: `key-${randomBytes(9).toString('hex').slice(0, 17)}`,
      name,
      fingerprint,
      type: type === 'ssh-rsa' ? 'rsa' : 'ed25519',
      publicKey: material,
    };
    this.keyPairs.set(name, key);
    this.reply(
      res,
      'ImportKeyPairResponse',
      `<keyFingerprint>${key.fingerprint}</keyFingerprint><keyName>${escapeXml(name)}</keyName><keyPairId>${key.id}</keyPairId>`,
    );
  }

  private describeKeyPairs(res: ServerResponse, params: URLSearchParams): void {
    const names = list(params, 'KeyName');
    const unknown = names.find((name) => !this.keyPairs.has(name));
    if (unknown !== undefined) {
      this.error(res, 400, 'InvalidKeyPair.NotFound', `The key pair '${unknown}' does not exist`);
      return;
    }
    const withKey = params.get('IncludePublicKey') === 'true';
    const items = [...this.keyPairs.values()]
      .filter((key) => names.length === 0 || names.includes(key.name))
      .map(
        (key) =>
          `<item><keyPairId>${key.id}</keyPairId><keyName>${escapeXml(key.name)}</keyName><keyFingerprint>${key.fingerprint}</keyFingerprint><keyType>${key.type}</keyType>${withKey ? `<publicKey>${escapeXml(key.publicKey)}</publicKey>` : ''}<tagSet/></item>`,
      )
      .join('');
    this.reply(res, 'DescribeKeyPairsResponse', `<keySet>${items}</keySet>`);
  }

  private allocateAddress(res: ServerResponse, params: URLSearchParams): void {
    this.allocated += 1;
    const address: FakeAddress = {
      allocationId: `eipalloc-${randomBytes(9).toString('hex').slice(0, 17)}`,
      publicIp: `203.0.113.${this.allocated & 255}`,
    };
    this.addresses.push(address);
    this.reply(
      res,
      'AllocateAddressResponse',
      `<publicIp>${address.publicIp}</publicIp><domain>${params.get('Domain') ?? 'vpc'}</domain><allocationId>${address.allocationId}</allocationId>`,
    );
  }

  private associateAddress(res: ServerResponse, params: URLSearchParams): void {
    const address = this.allocation(res, params);
    if (!address) {
      return;
    }
    const instanceId = params.get('InstanceId') ?? '';
    if (this.badIds(res, [instanceId])) {
      return;
    }
    const failure = this.failNextAssociate;
    if (failure) {
      this.failNextAssociate = undefined;
      this.error(res, 400, failure.code, failure.message);
      return;
    }
    if (address.associationId !== undefined) {
      this.error(
        res,
        400,
        'Resource.AlreadyAssociated',
        `resource ${address.allocationId} is already associated`,
      );
      return;
    }
    const instance = this.instances.find((candidate) => candidate.id === instanceId) as FakeInstance;
    // Associating an address with an instance that has one moves that one off it, as EC2 does.
    for (const other of this.addresses.filter((candidate) => candidate.instanceId === instanceId)) {
      other.associationId = undefined;
      other.instanceId = undefined;
    }
    address.associationId = `eipassoc-${randomBytes(9).toString('hex').slice(0, 17)}`;
    address.instanceId = instanceId;
    instance.elasticIp = address.publicIp;
    this.reply(
      res,
      'AssociateAddressResponse',
      `<return>true</return><associationId>${address.associationId}</associationId>`,
    );
  }

  /** The address of the request's AllocationId, or EC2's error for an unknown one (answered). */
  private allocation(res: ServerResponse, params: URLSearchParams): FakeAddress | undefined {
    const address = this.addresses.find((candidate) => candidate.allocationId === params.get('AllocationId'));
    if (!address) {
      this.error(
        res,
        400,
        'InvalidAllocationID.NotFound',
        `The allocation ID '${params.get('AllocationId')}' does not exist`,
      );
    }
    return address;
  }

  private disassociateAddress(res: ServerResponse, params: URLSearchParams): void {
    const address = this.addresses.find(
      (candidate) => candidate.associationId === params.get('AssociationId'),
    );
    if (!address) {
      this.error(
        res,
        400,
        'InvalidAssociationID.NotFound',
        `The association ID '${params.get('AssociationId')}' does not exist`,
      );
      return;
    }
    const instance = this.instances.find((candidate) => candidate.id === address.instanceId);
    if (instance) {
      instance.elasticIp = undefined;
    }
    address.associationId = undefined;
    address.instanceId = undefined;
    this.reply(res, 'DisassociateAddressResponse', '<return>true</return>');
  }

  private releaseAddress(res: ServerResponse, params: URLSearchParams): void {
    const address = this.allocation(res, params);
    if (!address) {
      return;
    }
    if (address.associationId !== undefined) {
      this.error(res, 400, 'InvalidIPAddress.InUse', `Address ${address.publicIp} is in use.`);
      return;
    }
    this.addresses.splice(this.addresses.indexOf(address), 1);
    this.reply(res, 'ReleaseAddressResponse', '<return>true</return>');
  }

  private describeAddresses(res: ServerResponse, params: URLSearchParams): void {
    const filters = new Map<string, string[]>();
    for (let i = 1; params.has(`Filter.${i}.Name`); i++) {
      filters.set(params.get(`Filter.${i}.Name`) ?? '', list(params, `Filter.${i}.Value`));
    }
    const instances = filters.get('instance-id');
    const items = this.addresses
      .filter((address) => instances === undefined || instances.includes(address.instanceId ?? ''))
      .map(
        (address) =>
          `<item><publicIp>${address.publicIp}</publicIp><allocationId>${address.allocationId}</allocationId><domain>vpc</domain>` +
          (address.associationId
            ? `<instanceId>${address.instanceId}</instanceId><associationId>${address.associationId}</associationId>`
            : '') +
          '</item>',
      )
      .join('');
    this.reply(res, 'DescribeAddressesResponse', `<addressesSet>${items}</addressesSet>`);
  }

  /** Answers EC2's error for malformed or unknown ids; true when it did. */
  private badIds(res: ServerResponse, ids: string[]): boolean {
    const malformed = ids.find((id) => !/^i-[0-9a-f]{8,17}$/.test(id));
    if (malformed !== undefined) {
      this.error(res, 400, 'InvalidInstanceID.Malformed', `Invalid id: "${malformed}"`);
      return true;
    }
    const unknown = ids.find((id) => !this.instances.some((instance) => instance.id === id));
    if (unknown !== undefined) {
      this.error(res, 400, 'InvalidInstanceID.NotFound', `The instance ID '${unknown}' does not exist`);
      return true;
    }
    return false;
  }

  private page<T>(items: readonly T[], token: string | null): { page: T[]; next?: string } {
    const start =
      token === null ? 0 : Number(Buffer.from(token, 'base64url').toString('utf8').replace('offset:', ''));
    const page = items.slice(start, start + this.pageSize);
    const end = start + page.length;
    return {
      page,
      next: end < items.length ? Buffer.from(`offset:${end}`).toString('base64url') : undefined,
    };
  }

  private reply(res: ServerResponse, element: string, body: string): void {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<${element} xmlns="${NS}"><requestId>${requestId()}</requestId>${body}</${element}>`;
    res.writeHead(200, { 'content-type': 'text/xml;charset=UTF-8' }).end(xml);
  }

  private error(res: ServerResponse, status: number, code: string, message: string): void {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error></Errors><RequestID>${requestId()}</RequestID></Response>`;
    if (!res.headersSent) {
      res.writeHead(status, { 'content-type': 'text/xml;charset=UTF-8' }).end(xml);
    }
  }
}

function list(params: URLSearchParams, name: string): string[] {
  const values: string[] = [];
  for (let i = 1; params.has(`${name}.${i}`); i++) {
    values.push(params.get(`${name}.${i}`) ?? '');
  }
  return values;
}

function stateXml(state: string): string {
  return `<code>${STATE_CODES[state] ?? 0}</code><name>${state}</name>`;
}

function instanceXml(instance: FakeInstance): string {
  const tags = Object.entries(instance.tags)
    .map(([key, value]) => `<item><key>${escapeXml(key)}</key><value>${escapeXml(value)}</value></item>`)
    .join('');
  return (
    `<item><instanceId>${instance.id}</instanceId><imageId>${instance.imageId}</imageId>` +
    `<instanceState>${stateXml(instance.state)}</instanceState>` +
    `<privateDnsName>ip-${instance.privateIp.replace(/\./g, '-')}.ec2.internal</privateDnsName><dnsName/>` +
    (instance.keyName ? `<keyName>${escapeXml(instance.keyName)}</keyName>` : '') +
    `<amiLaunchIndex>0</amiLaunchIndex><instanceType>${instance.type}</instanceType><launchTime>${instance.launchTime}</launchTime>` +
    `<placement><availabilityZone>us-east-1a</availabilityZone><tenancy>default</tenancy></placement>` +
    `<privateIpAddress>${instance.privateIp}</privateIpAddress>` +
    (instance.elasticIp
      ? `<ipAddress>${instance.elasticIp}</ipAddress>`
      : instance.publicIp && instance.state === 'running'
        ? `<ipAddress>${instance.publicIp}</ipAddress>`
        : '') +
    `<groupSet>${instance.securityGroups.map((id) => `<item><groupId>${id}</groupId></item>`).join('')}</groupSet>` +
    `<vpcId>vpc-0abc1234</vpcId><subnetId>subnet-0abc1234</subnetId>` +
    `<tagSet>${tags}</tagSet></item>`
  );
}

function nextXml(next: string | undefined): string {
  return next === undefined ? '' : `<nextToken>${next}</nextToken>`;
}

function requestId(): string {
  const hex = randomBytes(16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
