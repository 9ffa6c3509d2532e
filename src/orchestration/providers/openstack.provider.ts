import { Injectable } from '@nestjs/common';
import ipaddr from 'ipaddr.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { OutboundError, readBody, sendRequest } from '../../common/net/http-client.js';
import { AppConfig } from '../../config/app-config.js';
import type { CloudSettings } from '../../config/clouds-file.js';
import { isRecord } from '../../common/is-record.js';
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
  type CloudImage,
  type CloudNode,
  type CloudProvider,
  RegisterCloudProvider,
  type CloudProviderFactory,
  type CloudSize,
  type NodeQuery,
  type PowerAction,
  type StartNodeRequest,
} from './cloud-provider.js';
import { settingsReader } from './provider-settings.js';

export const OPENSTACK_TYPE = 'openstack';

export type EndpointInterface = 'public' | 'internal' | 'admin';

/** The settings of one `type: openstack` cloud of CLOUDS_FILE, validated. */
export interface OpenStackSettings {
  /** Keystone v3 base, e.g. `https://keystone.example.org:5000/v3`. */
  readonly authUrl: string;
  readonly username: string;
  readonly password: string;
  readonly userDomainName: string;
  readonly projectName: string;
  readonly projectDomainName: string;
  /** Catalog region; the first endpoint of the interface when unset. */
  readonly region?: string;
  readonly interface: EndpointInterface;
  /** Network id new servers are attached to; Nova picks ("auto") when unset. */
  readonly network?: string;
  /** Id of the external network floating IPs are allocated from; no public addresses when unset. */
  readonly floatingNetwork?: string;
}

/** Nova server status → node state: the one table of this provider (API.md 3.1). */
const NOVA_STATES: ReadonlyMap<string, NodeState> = new Map([
  ['ACTIVE', NodeState.Running],
  ['REBOOT', NodeState.Rebooting],
  ['HARD_REBOOT', NodeState.Rebooting],
  ['DELETED', NodeState.Terminated],
  ['SOFT_DELETED', NodeState.Terminated],
  ['BUILD', NodeState.Pending],
  ['REBUILD', NodeState.Pending],
  ['PASSWORD', NodeState.Pending],
  ['RESCUE', NodeState.Pending],
  ['RESIZE', NodeState.Pending],
  ['VERIFY_RESIZE', NodeState.Pending],
  ['MIGRATING', NodeState.Pending],
  ['SHUTOFF', NodeState.Stopped],
  ['SUSPENDED', NodeState.Suspended],
  ['ERROR', NodeState.Error],
  ['PAUSED', NodeState.Paused],
]);

/** The node state of a Nova server status; anything not in the table is Unknown. */
export function novaState(status: unknown): NodeState {
  return (
    (typeof status === 'string' ? NOVA_STATES.get(status.toUpperCase()) : undefined) ?? NodeState.Unknown
  );
}

const PRIVATE_IPV4_RANGES = new Set(['private', 'loopback', 'linkLocal', 'carrierGradeNat']);
// Libcloud's fallback for addresses it cannot range-check (IPv6): trust the network label or the IP type.
const PUBLIC_NETWORK_LABELS = new Set(['public', 'internet']);

/** True for IPv4 addresses in RFC 1918, loopback, link-local or CGNAT ranges. */
export function isPrivateIpv4(address: string): boolean {
  return (
    ipaddr.IPv4.isValidFourPartDecimal(address) && PRIVATE_IPV4_RANGES.has(ipaddr.IPv4.parse(address).range())
  );
}

/**
 * Splits a Nova `addresses` map (network label → [{addr, version, OS-EXT-IPS:type}]) into public and
 * private IPs as libcloud does: an IPv4 address is private exactly when it is in a private range; an
 * IPv6 address is public when its network is labelled public/internet or it is a floating IP.
 */
export function classifyAddresses(addresses: unknown): { publicIps: string[]; privateIps: string[] } {
  const publicIps: string[] = [];
  const privateIps: string[] = [];
  if (!isRecord(addresses)) {
    return { publicIps, privateIps };
  }
  for (const [label, entries] of Object.entries(addresses)) {
    for (const entry of Array.isArray(entries) ? entries : []) {
      const address = isRecord(entry) ? entry.addr : undefined;
      if (typeof address !== 'string' || address === '') {
        continue;
      }
      const isPublic = ipaddr.IPv4.isValidFourPartDecimal(address)
        ? !isPrivateIpv4(address)
        : PUBLIC_NETWORK_LABELS.has(label) || (isRecord(entry) && entry['OS-EXT-IPS:type'] === 'floating');
      (isPublic ? publicIps : privateIps).push(address);
    }
  }
  return { publicIps, privateIps };
}

/** The CloudNode of a Nova server object; what the state and IPs do not carry stays in `extra`. */
export function toOpenStackNode(server: Record<string, unknown>): CloudNode {
  const { publicIps, privateIps } = classifyAddresses(server.addresses);
  const links = Array.isArray(server.links) ? server.links.filter(isRecord) : [];
  const extra: Record<string, unknown> = {
    status: server.status,
    addresses: server.addresses,
    hostId: server.hostId,
    access_ip: server.accessIPv4,
    access_ipv6: server.accessIPv6,
    tenantId: server.tenant_id,
    userId: server.user_id,
    imageId: idOf(server.image),
    flavorId: idOf(server.flavor),
    uri: links.find((link) => link.rel === 'self')?.href,
    metadata: server.metadata,
    // Tags are sent as server metadata (API.md 13), so the metadata is the node's tags.
    tags: server.metadata,
    security_groups: Array.isArray(server.security_groups)
      ? server.security_groups.filter(isRecord).map((group) => group.name)
      : undefined,
    created: server.created,
    updated: server.updated,
    key_name: server.key_name,
    disk_config: server['OS-DCF:diskConfig'],
    config_drive: server.config_drive,
    availability_zone: server['OS-EXT-AZ:availability_zone'],
    volumes_attached: server['os-extended-volumes:volumes_attached'],
    task_state: server['OS-EXT-STS:task_state'],
    vm_state: server['OS-EXT-STS:vm_state'],
    power_state: server['OS-EXT-STS:power_state'],
    progress: server.progress,
    fault: server.fault,
  };
  return {
    id: idOf(server) ?? '',
    name: typeof server.name === 'string' ? server.name : '',
    state: novaState(server.status),
    publicIps,
    privateIps,
    extra: Object.fromEntries(Object.entries(extra).filter(([, value]) => value !== undefined)),
  };
}

/** Validates a cloud's settings; throws ConfigError (setting CLOUDS_FILE) naming the cloud and the key. */
export function parseOpenStackSettings(cloud: CloudSettings): OpenStackSettings {
  const { optional, required, problem } = settingsReader(cloud, OPENSTACK_TYPE);
  const authUrl = required('auth_url').replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]/i.test(authUrl) || !URL.canParse(authUrl)) {
    throw problem(`needs 'auth_url' to be an http(s) URL`);
  }
  const endpointInterface = optional('interface') ?? 'public';
  if (endpointInterface !== 'public' && endpointInterface !== 'internal' && endpointInterface !== 'admin') {
    throw problem(`needs 'interface' to be public, internal or admin`);
  }
  return {
    // Keystone's base is often written without its version; the token API lives under /v3.
    authUrl: /\/v3$/.test(authUrl) ? authUrl : `${authUrl}/v3`,
    username: required('username'),
    password: required('password'),
    userDomainName: optional('user_domain_name') ?? 'Default',
    projectName: required('project_name'),
    projectDomainName: optional('project_domain_name') ?? 'Default',
    region: optional('region'),
    interface: endpointInterface,
    network: optional('network'),
    floatingNetwork: optional('floating_network'),
  };
}

interface Session {
  readonly token: string;
  readonly expiresAtMs: number;
  readonly computeUrl: string;
  readonly imageUrl: string;
  /** Neutron's base (without its version), when the catalog has one. */
  readonly networkUrl?: string;
}

interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

interface Call {
  /** What is being done, for messages: "listing servers". */
  readonly what: string;
  readonly method: string;
  /** The URL, from the session's endpoints. */
  readonly url: (session: Session) => string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

export interface OpenStackProviderOptions {
  /** Bound of each HTTP exchange, connection to last byte. */
  readonly timeoutMs: number;
  /** Milliseconds since the epoch; replaced in tests. */
  readonly now?: () => number;
}

// A token is renewed this long before Keystone's `expires_at`, so that it cannot expire in flight.
const TOKEN_MARGIN_MS = 60_000;
// Keystone always sends `expires_at`; should one not, the token is kept this long (a 401 renews it sooner).
const TOKEN_FALLBACK_LIFETIME_MS = 5 * 60_000;
const MAX_BODY_BYTES = 16 * 1024 * 1024;
// Only a guard against a cloud whose next links go round in circles.
const MAX_PAGES = 1000;
const MAX_UPSTREAM_MESSAGE = 300;
/** The body of `POST servers/{id}/action` of each power action. */
const NOVA_ACTIONS: Readonly<Record<PowerAction, unknown>> = {
  reboot: { reboot: { type: 'SOFT' } },
  poweroff: { 'os-stop': null },
  poweron: { 'os-start': null },
};
// Nova microversion that introduced `networks: "auto"`.
const AUTO_NETWORK_MICROVERSION = '2.37';

/**
 * An OpenStack cloud: Keystone v3 password auth with a cached token, Nova for servers and flavors,
 * Glance v2 for images, the endpoints taken from the token's catalog.
 */
export class OpenStackProvider implements CloudProvider {
  readonly type = OPENSTACK_TYPE;
  private session?: Session;
  private authenticating?: Promise<Session>;
  /** The current and the previous token: a failing call may have used either. */
  private recentTokens: string[] = [];
  private readonly now: () => number;

  constructor(
    readonly name: string,
    private readonly settings: OpenStackSettings,
    private readonly options: OpenStackProviderOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Every server of the project (Nova `servers/detail`, all pages). */
  async listNodes(): Promise<CloudNode[]> {
    const servers = await this.collect('listing servers', 'servers', (s) => `${s.computeUrl}/servers/detail`);
    // An entry without an id could be neither found nor destroyed; such a list is broken, not a node.
    return servers.filter((server) => idOf(server) !== undefined).map(toOpenStackNode);
  }

  /** Every image visible to the project (Glance v2, all pages). */
  async listImages(): Promise<CloudImage[]> {
    const images: CloudImage[] = [];
    let query = '';
    for (let page = 0; page < MAX_PAGES; page++) {
      const reply = await this.expect(200, {
        what: 'listing images',
        method: 'GET',
        url: (s) => `${s.imageUrl}/v2/images${query}`,
      });
      const list = field(reply.body, 'images');
      for (const image of Array.isArray(list) ? list.filter(isRecord) : []) {
        const id = idOf(image);
        if (id !== undefined) {
          images.push({ id, name: typeof image.name === 'string' ? image.name : '' });
        }
      }
      const next = field(reply.body, 'next');
      // Only the query of `next` is used: the token goes to the catalog's endpoint and nowhere else.
      const nextQuery = typeof next === 'string' ? new URL(next, 'http://glance.invalid').search : '';
      if (nextQuery === '' || nextQuery === query) {
        break;
      }
      query = nextQuery;
    }
    return images;
  }

  /** Every flavor (Nova `flavors/detail`, all pages); RAM in MiB, disk in GiB. */
  async listSizes(): Promise<CloudSize[]> {
    const flavors = await this.collect('listing flavors', 'flavors', (s) => `${s.computeUrl}/flavors/detail`);
    return flavors.flatMap((flavor) => {
      const id = idOf(flavor);
      return id === undefined
        ? []
        : [
            {
              id,
              name: typeof flavor.name === 'string' ? flavor.name : '',
              cpu: numberOf(flavor.vcpus),
              ramMiB: numberOf(flavor.ram),
              diskGiB: numberOf(flavor.disk),
            },
          ];
    });
  }

  /**
   * Creates a server (Nova `POST servers`) on the cloud's `network`, or on Nova's automatic network
   * when none is set, and returns it as Nova reports it right after (usually pending).
   * Throws DomainError 'invalid_input' for an image or flavor not in the lists, and with Nova's own
   * message when Nova rejects the request (400); a quota refusal is 'upstream_failed'.
   */
  async startNode(request: StartNodeRequest): Promise<CloudNode> {
    await assertStartable(this, request);
    const server: Record<string, unknown> = {
      name: request.name,
      imageRef: request.image,
      flavorRef: request.size,
      networks: this.settings.network === undefined ? 'auto' : [{ uuid: this.settings.network }],
    };
    if (request.keyname !== undefined) {
      server.key_name = request.keyname;
    }
    if (request.metadata !== undefined || request.tags !== undefined) {
      server.metadata = { ...request.metadata, ...request.tags };
    }
    if (request.userData !== undefined) {
      server.user_data = Buffer.from(request.userData, 'utf8').toString('base64');
    }
    if (request.securityGroups !== undefined) {
      server.security_groups = request.securityGroups.map((name) => ({ name }));
    }
    const what = 'creating a server';
    const reply = await this.call({
      what,
      method: 'POST',
      url: (s) => `${s.computeUrl}/servers`,
      body: { server },
      headers:
        this.settings.network === undefined
          ? { 'X-OpenStack-Nova-API-Version': AUTO_NETWORK_MICROVERSION }
          : {},
    });
    if (reply.status === 400) {
      throw this.refused(reply, 'Nova refused the server');
    }
    if (reply.status !== 202 && reply.status !== 200) {
      throw this.failed(what, reply);
    }
    const created = field(reply.body, 'server');
    const id = idOf(created);
    if (id === undefined) {
      throw this.upstream(what, 'the answer has no server id');
    }
    try {
      return await this.getServer(id);
    } catch (error) {
      if (!(error instanceof DomainError)) {
        throw error;
      }
      // The server exists now; failing here would hide it from the caller, so answer what is known.
      return { id, name: request.name, state: NodeState.Pending, publicIps: [], privateIps: [], extra: {} };
    }
  }

  /** Deletes the server (Nova `DELETE servers/{id}`). Throws DomainError 'not_found' when Nova has no such server. */
  async destroyNode(id: string): Promise<void> {
    if (!isServerId(id)) {
      throw nodeNotFound({ id }, this.name);
    }
    const what = `deleting server ${id}`;
    const reply = await this.call({
      what,
      method: 'DELETE',
      url: (s) => `${s.computeUrl}/servers/${encodeURIComponent(id)}`,
    });
    if (reply.status === 404) {
      throw nodeNotFound({ id }, this.name);
    }
    if (reply.status !== 204 && reply.status !== 200 && reply.status !== 202) {
      throw this.failed(what, reply);
    }
  }

  /**
   * A Nova server action (`reboot` SOFT, `os-stop`, `os-start`), then the server as Nova reports it
   * (Nova acts asynchronously: right after, the state is often still the old one, with a task state in
   * `extra`). Throws DomainError 'not_found' for an unknown server, 'conflict' when the server is
   * deleted or Nova refuses the action in the server's state (409).
   */
  async power(id: string, action: PowerAction): Promise<CloudNode> {
    return planPower(await this.getServer(id), action, this.name, async () => {
      const what = `${action} of server ${id}`;
      const reply = await this.call({
        what,
        method: 'POST',
        url: (s) => `${s.computeUrl}/servers/${encodeURIComponent(id)}/action`,
        body: NOVA_ACTIONS[action],
      });
      if (reply.status === 404) {
        throw nodeNotFound({ id }, this.name);
      }
      if (reply.status === 409) {
        const message = upstreamMessage(reply.body) ?? `Nova refused the ${action}`;
        throw new DomainError('conflict', this.redact(`Cloud '${this.name}': ${message}`));
      }
      if (reply.status !== 202 && reply.status !== 200 && reply.status !== 204) {
        throw this.failed(what, reply);
      }
      return this.getServer(id);
    });
  }

  /**
   * By id, one Nova `GET servers/{id}`; by hostname, the first listed server whose name or IP equals it.
   * Throws DomainError 'not_found' when none matches.
   */
  findNode(query: NodeQuery): Promise<CloudNode> {
    return findNodeBy(
      query,
      this.name,
      (id) => this.getServer(id),
      () => this.listNodes(),
    );
  }

  /** Nova `os-keypairs` of the cloud's user. */
  async listKeyPairs(): Promise<CloudKeyPair[]> {
    const reply = await this.expect(200, {
      what: 'listing key pairs',
      method: 'GET',
      url: (s) => `${s.computeUrl}/os-keypairs`,
    });
    const list = field(reply.body, 'keypairs');
    return (Array.isArray(list) ? list : []).flatMap((entry) => {
      const key = field(entry, 'keypair');
      return isRecord(key) && typeof key.name === 'string' ? [toKeyPair(key)] : [];
    });
  }

  /** Nova `POST os-keypairs` with the public key; Nova's fingerprint in the answer. */
  async importKeyPair(name: string, publicKey: string): Promise<CloudKeyPair> {
    const key = parseSshPublicKey(publicKey);
    const what = `importing key pair ${name}`;
    const reply = await this.call({
      what,
      method: 'POST',
      url: (s) => `${s.computeUrl}/os-keypairs`,
      body: { keypair: { name, public_key: key.line } },
    });
    if (reply.status === 409) {
      throw new DomainError('conflict', `Key pair '${name}' exists in cloud '${this.name}'`);
    }
    if (reply.status === 400) {
      throw this.refused(reply, 'Nova refused the key pair');
    }
    const created = field(reply.body, 'keypair');
    if ((reply.status !== 200 && reply.status !== 201) || !isRecord(created)) {
      throw this.failed(what, reply);
    }
    return toKeyPair({ public_key: key.line, ...created, name });
  }

  async deleteKeyPair(name: string): Promise<void> {
    const what = `deleting key pair ${name}`;
    const reply = await this.call({
      what,
      method: 'DELETE',
      url: (s) => `${s.computeUrl}/os-keypairs/${encodeURIComponent(name)}`,
    });
    if (reply.status === 404) {
      throw new DomainError('not_found', `Key pair '${name}' not found in cloud '${this.name}'`);
    }
    if (reply.status !== 202 && reply.status !== 204 && reply.status !== 200) {
      throw this.failed(what, reply);
    }
  }

  /**
   * A Neutron floating IP from the cloud's `floating_network`: allocated (`POST floatingips`), then
   * associated with the server's port (`PUT floatingips/{id}`); deleted again if that fails. 'conflict'
   * when no floating network is configured or the server has a floating IP already.
   */
  async attachAddress(nodeId: string): Promise<AttachedAddress> {
    const network = this.settings.floatingNetwork;
    if (network === undefined) {
      throw new DomainError(
        'conflict',
        `Cloud '${this.name}' has no floating_network configured: it cannot attach public addresses`,
      );
    }
    await this.getServer(nodeId);
    const ports = await this.portsOf(nodeId);
    if (ports.length === 0) {
      throw new DomainError(
        'conflict',
        `Server ${nodeId} of cloud '${this.name}' has no port to attach an address to`,
      );
    }
    const attached = await this.floatingIpsOf(ports);
    if (attached.length > 0) {
      throw new DomainError(
        'conflict',
        `Server ${nodeId} of cloud '${this.name}' has the public address ${attached.map((ip) => ip.address).join(', ')} already`,
      );
    }
    const created = await this.network('allocating a floating IP', 'POST', '/v2.0/floatingips', [201], {
      floatingip: { floating_network_id: network },
    });
    const ip = toFloatingIp(field(created, 'floatingip'));
    if (ip === undefined) {
      throw this.upstream('allocating a floating IP', 'the answer has no floating IP');
    }
    try {
      await this.network(`attaching ${ip.address}`, 'PUT', `/v2.0/floatingips/${ip.id}`, [200], {
        floatingip: { port_id: ports[0] },
      });
    } catch (error) {
      // Nothing half-made: the address allocated for this attach goes back to the pool.
      await this.network(`freeing ${ip.address}`, 'DELETE', `/v2.0/floatingips/${ip.id}`, [204, 404]).catch(
        () => undefined,
      );
      throw error;
    }
    return { address: ip.address, node: await this.getServer(nodeId) };
  }

  /** Deletes the floating IPs of the server's ports (Neutron frees and detaches them at once). */
  async releaseAddress(nodeId: string): Promise<CloudNode> {
    await this.getServer(nodeId);
    const attached = await this.floatingIpsOf(await this.portsOf(nodeId));
    if (attached.length === 0) {
      throw new DomainError('not_found', `Server ${nodeId} of cloud '${this.name}' has no floating IP`);
    }
    for (const ip of attached) {
      await this.network(`freeing ${ip.address}`, 'DELETE', `/v2.0/floatingips/${ip.id}`, [204, 404]);
    }
    return this.getServer(nodeId);
  }

  private async portsOf(serverId: string): Promise<string[]> {
    const body = await this.network(
      `listing the ports of server ${serverId}`,
      'GET',
      `/v2.0/ports?device_id=${encodeURIComponent(serverId)}`,
      [200],
    );
    const ports = field(body, 'ports');
    return (Array.isArray(ports) ? ports : []).flatMap((port) => {
      const id = idOf(port);
      return id === undefined ? [] : [id];
    });
  }

  private async floatingIpsOf(ports: readonly string[]): Promise<FloatingIp[]> {
    if (ports.length === 0) {
      return [];
    }
    const query = ports.map((port) => `port_id=${encodeURIComponent(port)}`).join('&');
    const body = await this.network('listing floating IPs', 'GET', `/v2.0/floatingips?${query}`, [200]);
    const list = field(body, 'floatingips');
    return (Array.isArray(list) ? list : []).flatMap((entry) => {
      const ip = toFloatingIp(entry);
      return ip === undefined ? [] : [ip];
    });
  }

  /**
   * One Neutron call answering one of `ok`; Neutron's 409 (an address in use, none left) is a
   * 'conflict' with its message, a 400 an 'invalid_input'.
   */
  private async network(
    what: string,
    method: string,
    path: string,
    ok: readonly number[],
    body?: unknown,
  ): Promise<unknown> {
    const reply = await this.call({
      what,
      method,
      url: (s) => {
        if (s.networkUrl === undefined) {
          throw this.upstream(what, "the token's catalog has no network endpoint (Neutron)");
        }
        return `${s.networkUrl}${path}`;
      },
      body,
    });
    if (reply.status === 409) {
      throw new DomainError(
        'conflict',
        this.redact(`Cloud '${this.name}': ${upstreamMessage(reply.body) ?? `${what} conflicts`}`),
      );
    }
    if (reply.status === 400) {
      throw this.refused(reply, `Neutron refused ${what}`);
    }
    if (!ok.includes(reply.status)) {
      throw this.failed(what, reply);
    }
    return reply.body;
  }

  /** A 400 of the cloud: the caller's request was refused, with the cloud's own message. */
  private refused(reply: Reply, fallback: string): DomainError {
    const message = upstreamMessage(reply.body) ?? fallback;
    return new DomainError('invalid_input', this.redact(`Cloud '${this.name}': ${message}`));
  }

  private async getServer(id: string): Promise<CloudNode> {
    if (!isServerId(id)) {
      throw nodeNotFound({ id }, this.name);
    }
    const what = `reading server ${id}`;
    const reply = await this.call({
      what,
      method: 'GET',
      url: (s) => `${s.computeUrl}/servers/${encodeURIComponent(id)}`,
    });
    if (reply.status === 404) {
      throw nodeNotFound({ id }, this.name);
    }
    if (reply.status !== 200) {
      throw this.failed(what, reply);
    }
    const server = field(reply.body, 'server');
    if (!isRecord(server)) {
      throw this.upstream(what, 'the answer has no server');
    }
    return toOpenStackNode(server);
  }

  /** Every item of a Nova list, following its `<member>_links` next pages. */
  private async collect(
    what: string,
    member: string,
    url: (session: Session) => string,
  ): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let query = '';
    for (let page = 0; page < MAX_PAGES; page++) {
      const reply = await this.expect(200, { what, method: 'GET', url: (s) => `${url(s)}${query}` });
      const list = field(reply.body, member);
      if (!Array.isArray(list)) {
        throw this.upstream(what, `the answer has no '${member}' list`);
      }
      items.push(...list.filter(isRecord));
      const links = field(reply.body, `${member}_links`);
      const next = Array.isArray(links)
        ? links.filter(isRecord).find((link) => link.rel === 'next')
        : undefined;
      // Nova's next link may name an internal host; only its query (marker, limit) is reused.
      const nextQuery =
        typeof next?.href === 'string' ? new URL(next.href, 'http://nova.invalid').search : '';
      if (nextQuery === '' || nextQuery === query) {
        break;
      }
      query = nextQuery;
    }
    return items;
  }

  private async expect(status: number, call: Call): Promise<Reply> {
    const reply = await this.call(call);
    if (reply.status !== status) {
      throw this.failed(call.what, reply);
    }
    return reply;
  }

  /** One authenticated call; a 401 renews the token once and repeats the call. */
  private async call(call: Call): Promise<Reply> {
    const attempt = async (session: Session): Promise<Reply> =>
      this.send(call.what, call.method, call.url(session), session.token, call.body, call.headers);
    const first = await this.currentSession();
    const reply = await attempt(first);
    if (reply.status !== 401) {
      return reply;
    }
    // Keystone may revoke a token before its expiry (password change, restart without persistence).
    this.forget(first);
    const retried = await attempt(await this.currentSession());
    if (retried.status === 401) {
      throw this.upstream(call.what, 'the cloud refused a freshly issued token');
    }
    return retried;
  }

  private currentSession(): Promise<Session> {
    if (this.session && this.now() < this.session.expiresAtMs - TOKEN_MARGIN_MS) {
      return Promise.resolve(this.session);
    }
    // Concurrent calls share one authentication instead of each asking Keystone for a token.
    this.authenticating ??= this.authenticate().finally(() => {
      this.authenticating = undefined;
    });
    return this.authenticating;
  }

  private forget(session: Session): void {
    if (this.session === session) {
      this.session = undefined;
    }
  }

  private async authenticate(): Promise<Session> {
    const what = 'authentication';
    const { settings } = this;
    const body = {
      auth: {
        identity: {
          methods: ['password'],
          password: {
            user: {
              name: settings.username,
              domain: { name: settings.userDomainName },
              password: settings.password,
            },
          },
        },
        scope: { project: { name: settings.projectName, domain: { name: settings.projectDomainName } } },
      },
    };
    const reply = await this.send(what, 'POST', `${settings.authUrl}/auth/tokens`, undefined, body);
    if (reply.status === 401) {
      throw this.upstream(what, `Keystone refused the credentials of user '${settings.username}'`);
    }
    if (reply.status !== 201 && reply.status !== 200) {
      throw this.failed(what, reply);
    }
    const token = reply.headers['x-subject-token'];
    if (typeof token !== 'string' || token === '') {
      throw this.upstream(what, 'Keystone sent no X-Subject-Token');
    }
    const details = field(reply.body, 'token');
    const expiresAt = field(details, 'expires_at');
    const expiresAtMs = typeof expiresAt === 'string' ? Date.parse(expiresAt) : Number.NaN;
    const catalog = field(details, 'catalog');
    const session: Session = {
      token,
      expiresAtMs: Number.isNaN(expiresAtMs) ? this.now() + TOKEN_FALLBACK_LIFETIME_MS : expiresAtMs,
      computeUrl: this.endpoint(catalog, 'compute'),
      // Glance's paths and `next` links carry the version, so the base is kept without it.
      imageUrl: this.endpoint(catalog, 'image').replace(/\/v2(\.\d+)?$/, ''),
      // Only public addresses need Neutron: a cloud without it works for everything else.
      networkUrl: this.endpoint(catalog, 'network', false)?.replace(/\/v2\.0$/, ''),
    };
    this.session = session;
    this.recentTokens = [token, ...this.recentTokens].slice(0, 2);
    return session;
  }

  private endpoint(catalog: unknown, type: string): string;
  private endpoint(catalog: unknown, type: string, required: false): string | undefined;
  private endpoint(catalog: unknown, type: string, required = true): string | undefined {
    const { region } = this.settings;
    const where = `interface ${this.settings.interface}${region === undefined ? '' : `, region ${region}`}`;
    const service = Array.isArray(catalog)
      ? catalog.filter(isRecord).find((entry) => entry.type === type)
      : undefined;
    const endpoints = Array.isArray(service?.endpoints) ? service.endpoints.filter(isRecord) : [];
    const found = endpoints.find(
      (endpoint) =>
        endpoint.interface === this.settings.interface &&
        (region === undefined ||
          (endpoint.region_id ?? endpoint.region) === region ||
          endpoint.region === region),
    );
    if (typeof found?.url !== 'string' || !URL.canParse(found.url)) {
      if (!required) {
        return undefined;
      }
      throw this.upstream('authentication', `the token's catalog has no ${type} endpoint (${where})`);
    }
    return found.url.replace(/\/+$/, '');
  }

  private async send(
    what: string,
    method: string,
    url: string,
    token: string | undefined,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> {
    const outgoing: Record<string, string> = { accept: 'application/json', ...headers };
    if (token !== undefined) {
      outgoing['x-auth-token'] = token;
    }
    if (body !== undefined) {
      outgoing['content-type'] = 'application/json';
    }
    try {
      const response = await sendRequest(url, {
        method,
        headers: outgoing,
        body: body === undefined ? undefined : JSON.stringify(body),
        timeoutMs: this.options.timeoutMs,
        allowPrivate: true,
      });
      const raw = await readBody(response.body, MAX_BODY_BYTES);
      const parsed = parseBody(raw);
      if (parsed.json === false && response.status >= 200 && response.status < 300) {
        throw this.upstream(what, 'the answer is not JSON');
      }
      return { status: response.status, headers: response.headers, body: parsed.value };
    } catch (error) {
      if (error instanceof OutboundError) {
        throw new DomainError(
          error.reason === 'timeout' ? 'upstream_timeout' : 'upstream_failed',
          this.redact(`Cloud '${this.name}': ${what} failed: ${error.message}`),
        );
      }
      throw error;
    }
  }

  /** The error of an unexpected status: the cloud failed, is over quota, or refused us. */
  private failed(what: string, reply: Reply): DomainError {
    const message = upstreamMessage(reply.body);
    return this.upstream(
      what,
      `the cloud answered ${reply.status}${message === undefined ? '' : ` (${message})`}`,
    );
  }

  private upstream(what: string, detail: string): DomainError {
    return new DomainError('upstream_failed', this.redact(`Cloud '${this.name}': ${what} failed: ${detail}`));
  }

  /** Whatever a cloud echoes back, neither the password nor a token may reach a message. */
  private redact(message: string): string {
    return redactSecrets(message, [this.settings.password, ...this.recentTokens]);
  }
}

/** JSON when it parses; error pages of proxies and Glance are often text or HTML, kept for their message. */
function parseBody(raw: Buffer): { json: boolean; value: unknown } {
  if (raw.length === 0) {
    return { json: true, value: undefined };
  }
  const text = raw.toString('utf8');
  try {
    return { json: true, value: JSON.parse(text) as unknown };
  } catch {
    return { json: false, value: text };
  }
}

/**
 * The message of an OpenStack error body: Nova `{"badRequest": {"message": …}}`, Keystone
 * `{"error": {"message": …}}`, or a short plain-text body.
 */
function upstreamMessage(body: unknown): string | undefined {
  let message: string | undefined;
  if (typeof body === 'string') {
    message = body.replace(/<[^>]*>/g, ' ');
  } else if (isRecord(body)) {
    const fault = Object.values(body).find((value) => isRecord(value) && typeof value.message === 'string');
    message =
      typeof body.message === 'string' ? body.message : isRecord(fault) ? String(fault.message) : undefined;
  }
  const compact = message?.replace(/\s+/g, ' ').trim();
  return compact ? compact.slice(0, MAX_UPSTREAM_MESSAGE) : undefined;
}

/**
 * Nova ids are UUIDs (integers on old clouds). Anything else, such as `..` or `detail`, would put the id
 * on another route of the API, so it is known not to exist without asking.
 */
function isServerId(id: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(id) && id !== 'detail';
}

interface FloatingIp {
  readonly id: string;
  readonly address: string;
}

function toFloatingIp(value: unknown): FloatingIp | undefined {
  const id = idOf(value);
  const address = field(value, 'floating_ip_address');
  return id !== undefined && typeof address === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(id)
    ? { id, address }
    : undefined;
}

function toKeyPair(key: Record<string, unknown>): CloudKeyPair {
  return {
    name: String(key.name),
    fingerprint: typeof key.fingerprint === 'string' ? key.fingerprint : '',
    publicKey: typeof key.public_key === 'string' ? key.public_key.trim() : '',
  };
}

function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

function idOf(value: unknown): string | undefined {
  const id = field(value, 'id');
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
}

function numberOf(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

@RegisterCloudProvider()
@Injectable()
export class OpenStackProviderFactory implements CloudProviderFactory {
  readonly type = OPENSTACK_TYPE;

  constructor(private readonly config: AppConfig) {}

  /** Throws ConfigError (CLOUDS_FILE) when `auth_url`, `username`, `password` or `project_name` is missing. */
  create(cloud: CloudSettings): CloudProvider {
    return new OpenStackProvider(cloud.name, parseOpenStackSettings(cloud), {
      timeoutMs: this.config.orchestration.upstreamTimeoutMs,
    });
  }
}
