import { Injectable } from '@nestjs/common';
import { DomainError } from '../../common/errors/domain-error.js';
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
import { OpenStackClient, type OpenStackClientOptions, type Session } from './openstack.client.js';
import {
  field,
  idOf,
  numberOf,
  toFloatingIp,
  toKeyPair,
  toOpenStackNode,
  upstreamMessage,
  type FloatingIp,
} from './openstack-mapping.js';
import { OPENSTACK_TYPE, parseOpenStackSettings, type OpenStackSettings } from './openstack-settings.js';

// Only a guard against a cloud whose next links go round in circles.
const MAX_PAGES = 1000;
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
 * Glance v2 for images, the endpoints taken from the token's catalog. The token and the exchanges
 * are OpenStackClient's; this class holds what each operation asks and what its answers mean.
 */
export class OpenStackProvider implements CloudProvider {
  readonly type = OPENSTACK_TYPE;
  private readonly client: OpenStackClient;

  constructor(
    readonly name: string,
    private readonly settings: OpenStackSettings,
    options: OpenStackClientOptions,
  ) {
    this.client = new OpenStackClient(name, settings, options);
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
      const reply = await this.client.expect(200, {
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
    const reply = await this.client.call({
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
      throw this.client.refused(reply, 'Nova refused the server');
    }
    if (reply.status !== 202 && reply.status !== 200) {
      throw this.client.failed(what, reply);
    }
    const created = field(reply.body, 'server');
    const id = idOf(created);
    if (id === undefined) {
      throw this.client.upstream(what, 'the answer has no server id');
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
    const reply = await this.client.call({
      what,
      method: 'DELETE',
      url: (s) => `${s.computeUrl}/servers/${encodeURIComponent(id)}`,
    });
    if (reply.status === 404) {
      throw nodeNotFound({ id }, this.name);
    }
    if (reply.status !== 204 && reply.status !== 200 && reply.status !== 202) {
      throw this.client.failed(what, reply);
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
      const reply = await this.client.call({
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
        throw new DomainError('conflict', this.client.redact(`Cloud '${this.name}': ${message}`));
      }
      if (reply.status !== 202 && reply.status !== 200 && reply.status !== 204) {
        throw this.client.failed(what, reply);
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
    const reply = await this.client.expect(200, {
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
    const reply = await this.client.call({
      what,
      method: 'POST',
      url: (s) => `${s.computeUrl}/os-keypairs`,
      body: { keypair: { name, public_key: key.line } },
    });
    if (reply.status === 409) {
      throw new DomainError('conflict', `Key pair '${name}' exists in cloud '${this.name}'`);
    }
    if (reply.status === 400) {
      throw this.client.refused(reply, 'Nova refused the key pair');
    }
    const created = field(reply.body, 'keypair');
    if ((reply.status !== 200 && reply.status !== 201) || !isRecord(created)) {
      throw this.client.failed(what, reply);
    }
    return toKeyPair({ public_key: key.line, ...created, name });
  }

  async deleteKeyPair(name: string): Promise<void> {
    const what = `deleting key pair ${name}`;
    const reply = await this.client.call({
      what,
      method: 'DELETE',
      url: (s) => `${s.computeUrl}/os-keypairs/${encodeURIComponent(name)}`,
    });
    if (reply.status === 404) {
      throw new DomainError('not_found', `Key pair '${name}' not found in cloud '${this.name}'`);
    }
    if (reply.status !== 202 && reply.status !== 204 && reply.status !== 200) {
      throw this.client.failed(what, reply);
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
      throw this.client.upstream('allocating a floating IP', 'the answer has no floating IP');
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
    const reply = await this.client.call({
      what,
      method,
      url: (s) => {
        if (s.networkUrl === undefined) {
          throw this.client.upstream(what, "the token's catalog has no network endpoint (Neutron)");
        }
        return `${s.networkUrl}${path}`;
      },
      body,
    });
    if (reply.status === 409) {
      throw new DomainError(
        'conflict',
        this.client.redact(`Cloud '${this.name}': ${upstreamMessage(reply.body) ?? `${what} conflicts`}`),
      );
    }
    if (reply.status === 400) {
      throw this.client.refused(reply, `Neutron refused ${what}`);
    }
    if (!ok.includes(reply.status)) {
      throw this.client.failed(what, reply);
    }
    return reply.body;
  }

  private async getServer(id: string): Promise<CloudNode> {
    if (!isServerId(id)) {
      throw nodeNotFound({ id }, this.name);
    }
    const what = `reading server ${id}`;
    const reply = await this.client.call({
      what,
      method: 'GET',
      url: (s) => `${s.computeUrl}/servers/${encodeURIComponent(id)}`,
    });
    if (reply.status === 404) {
      throw nodeNotFound({ id }, this.name);
    }
    if (reply.status !== 200) {
      throw this.client.failed(what, reply);
    }
    const server = field(reply.body, 'server');
    if (!isRecord(server)) {
      throw this.client.upstream(what, 'the answer has no server');
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
      const reply = await this.client.expect(200, { what, method: 'GET', url: (s) => `${url(s)}${query}` });
      const list = field(reply.body, member);
      if (!Array.isArray(list)) {
        throw this.client.upstream(what, `the answer has no '${member}' list`);
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
}

/**
 * Nova ids are UUIDs (integers on old clouds). Anything else, such as `..` or `detail`, would put the id
 * on another route of the API, so it is known not to exist without asking.
 */
function isServerId(id: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(id) && id !== 'detail';
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
