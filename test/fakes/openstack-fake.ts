import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { CloudSettings } from '../../src/config/clouds-file.js';
import { sshPublicKey } from '../support/ssh-keys.js';

/**
 * A loopback OpenStack: Keystone v3 (password auth, tokens with a catalog pointing back here),
 * Nova (servers, flavors) and Glance v2 (images), started from the real responses in
 * test/fixtures/openstack. It keeps the servers it creates, records every request, and can be made
 * to fail (500, hang, connection reset) per service or as a whole.
 *
 * Endpoints: Keystone at `<url>/identity/v3`; Nova at `<url>/<region>/<interface>/compute/v2.1/<project id>`;
 * Glance at `<url>/<region>/<interface>/image`; Neutron at `<url>/<region>/<interface>/network` (ports and
 * floating IPs), for regions RegionOne and RegionTwo and interfaces public and internal, so a recorded path
 * shows which catalog entry a client picked. Nova keeps key pairs (`os-keypairs`), and checks what a server
 * is created with (base64 user data, known key name and security groups, metadata keys as Nova's schema has
 * them); a floating IP associated in Neutron shows in the server's addresses, as in a real cloud.
 */

export type FakeService = 'identity' | 'compute' | 'image' | 'network';
/** `server_error`: 500 with a Nova/Keystone fault body; `hang`: never answers; `down`: resets the connection. */
export type FakeFailure = 'server_error' | 'hang' | 'down';

export interface RecordedRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly path: string;
  readonly service?: FakeService;
  /** Region and interface of the endpoint used (Nova and Glance only). */
  readonly region?: string;
  readonly interface?: string;
  readonly headers: IncomingHttpHeaders;
  /** The JSON body, parsed; the raw text when it is not JSON; undefined when empty. */
  readonly body: unknown;
}

export interface OpenStackFakeOptions {
  readonly username?: string;
  readonly password?: string;
  readonly userDomainName?: string;
  readonly projectName?: string;
  readonly projectDomainName?: string;
  /** Lifetime of issued tokens (`expires_at`). Default one hour. */
  readonly tokenLifetimeSeconds?: number;
  /** Glance's page size when the client gives no `limit`. Default 5, so that image lists are paged. */
  readonly imagePageSize?: number;
  /** Nova's `max_limit`. Default 1000. */
  readonly serverPageSize?: number;
  /** Key pairs Nova knows from the start (each with a fresh ed25519 key). Default `["mykey"]`. */
  readonly keypairs?: readonly string[];
  /** Security groups Nova knows. Default `["default", "web"]`. */
  readonly securityGroups?: readonly string[];
  /** Leave the network service out of the catalog (a cloud without Neutron). */
  readonly withoutNetwork?: boolean;
  /** Network ids Nova knows. Default one, `FAKE_NETWORK_ID`. */
  readonly networks?: readonly string[];
  /** Status of a newly created server. Default ACTIVE. */
  readonly newServerStatus?: string;
}

type Json = Record<string, unknown>;

export const FAKE_NETWORK_ID = '3b1c3c35-0a6b-4d8e-9d8e-6f3a1c2b7e01';
/** The external network floating IPs come from (a cloud's `floating_network`). */
export const FAKE_EXTERNAL_NETWORK_ID = '9e2d7a61-4f0c-4b8a-a1d5-2c7f3e6b9a02';
// Nova's schema for server metadata keys (nova/api/validation/parameter_types.py).
const METADATA_KEY = /^[a-zA-Z0-9-_:. ]{1,255}$/;
const NOVA_MAX_USER_DATA = 65535;

export interface FakeKeyPair {
  name: string;
  public_key: string;
  fingerprint: string;
  type: string;
}

export interface FakeFloatingIp {
  id: string;
  floating_ip_address: string;
  floating_network_id: string;
  port_id: string | null;
  fixed_ip_address: string | null;
  status: string;
}
const FIXTURES = fileURLToPath(new URL('../fixtures/openstack/', import.meta.url));
const REGIONS = ['RegionOne', 'RegionTwo'];
const INTERFACES = ['public', 'internal'];
const PROJECT_ID = 'c3b1f0e2a4d54a7f9b0e8d7c6b5a4f3e';
const USER_ID = '7a1b2c3d4e5f40718293a4b5c6d7e8f9';
const UNAUTHORIZED = {
  error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' },
};

export class OpenStackFake {
  /** Every request received, oldest first. */
  readonly requests: RecordedRequest[] = [];
  readonly username: string;
  readonly password: string;
  readonly userDomainName: string;
  readonly projectName: string;
  readonly projectDomainName: string;

  private readonly tokens = new Map<string, { expiresAtMs: number; revoked: boolean }>();
  private readonly servers: Json[];
  private readonly flavors: Json[];
  private readonly images: Json[];
  private readonly failures = new Map<FakeService | 'all', FakeFailure>();
  private nextCreateRejection?: { status: number; message: string };
  private failureAfterCreate?: FakeFailure;
  private refusingTokens = false;
  private created = 0;
  /** Key pairs of the cloud's user, by name. */
  readonly keypairs = new Map<string, FakeKeyPair>();
  /** Neutron's floating IPs. */
  readonly floatingIps: FakeFloatingIp[] = [];
  /** One port per server, made the first time Neutron is asked about it. */
  private readonly ports = new Map<string, string>();
  private nextAssociateFailure?: { status: number; message: string };
  private allocated = 0;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    private readonly options: OpenStackFakeOptions,
  ) {
    this.username = options.username ?? 'svc';
    this.password = options.password ?? 'S3cret-Pa55word!';
    this.userDomainName = options.userDomainName ?? 'Default';
    this.projectName = options.projectName ?? 'lab';
    this.projectDomainName = options.projectDomainName ?? 'Default';
    this.servers = fixture('_servers_detail.json', 'servers');
    this.flavors = fixture('_flavors_detail.json', 'flavors');
    this.images = fixture('_images_detail.json', 'images').map(toGlanceImage);
    for (const name of options.keypairs ?? ['mykey']) {
      this.keypairs.set(name, novaKeyPair(name, sshPublicKey('ed25519', name)));
    }
  }

  static async start(options: OpenStackFakeOptions = {}): Promise<OpenStackFake> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const fake = new OpenStackFake(server, `http://127.0.0.1:${port}`, options);
    server.on('connection', (socket: Socket) => {
      if (fake.failures.get('all') === 'down') {
        socket.destroy();
      }
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      fake.handle(req, res).catch((error: unknown) => {
        send(res, 500, { computeFault: { code: 500, message: `fake failed: ${String(error)}` } });
      });
    });
    return fake;
  }

  /** Keystone's v3 base, as `auth_url` of a cloud. */
  get authUrl(): string {
    return `${this.url}/identity/v3`;
  }

  /**
   * A cloud pointing here as an entry of a CLOUDS_FILE (to go under `clouds:`), its password read from
   * `${OPENSTACK_PASSWORD}` as operators write it; `extra` adds settings.
   */
  cloudsFileEntry(name = 'ostack', extra: Record<string, string> = {}): string {
    const settings = {
      type: 'openstack',
      auth_url: this.authUrl,
      username: this.username,
      password: `\${OPENSTACK_PASSWORD}`,
      project_name: this.projectName,
      region: 'RegionOne',
      ...extra,
    };
    return [`  ${name}:`, ...Object.entries(settings).map(([key, value]) => `    ${key}: ${value}`)].join(
      '\n',
    );
  }

  /** A cloud of CLOUDS_FILE pointing here with the right credentials; `options` adds or overrides settings. */
  cloudSettings(name = 'ostack', options: Record<string, unknown> = {}): CloudSettings {
    return {
      name,
      type: 'openstack',
      options: {
        auth_url: this.authUrl,
        username: this.username,
        password: this.password,
        project_name: this.projectName,
        user_domain_name: this.userDomainName,
        project_domain_name: this.projectDomainName,
        region: 'RegionOne',
        interface: 'public',
        ...options,
      },
    };
  }

  /** Recorded requests with this method whose path contains (or matches) `path`. */
  requestsTo(method: string, path: string | RegExp): RecordedRequest[] {
    return this.requests.filter(
      (r) => r.method === method && (typeof path === 'string' ? r.path.includes(path) : path.test(r.path)),
    );
  }

  /** How many tokens Keystone was asked for. */
  get authCount(): number {
    return this.requestsTo('POST', '/identity/v3/auth/tokens').length;
  }

  clearRequests(): void {
    this.requests.length = 0;
  }

  /** Revokes every token issued so far: the next call with one gets a 401. */
  expireTokens(): void {
    for (const token of this.tokens.values()) {
      token.revoked = true;
    }
  }

  /** Nova and Glance answer 401 to every token, also those issued from now on, until `recover()`. */
  refuseTokens(): void {
    this.refusingTokens = true;
  }

  /** Makes `service` (or everything) fail in the given way until `recover()`. */
  fail(mode: FakeFailure, service: FakeService | 'all' = 'all'): void {
    this.failures.set(service, mode);
  }

  recover(): void {
    this.failures.clear();
    this.refusingTokens = false;
  }

  /** The next `POST servers` answers this status with a Nova fault carrying `message` (e.g. 403 for quota). */
  rejectNextCreate(status: number, message: string): void {
    this.nextCreateRejection = { status, message };
  }

  /** The next association of a floating IP with a port answers this status with a Neutron error. */
  failNextAssociate(status: number, message: string): void {
    this.nextAssociateFailure = { status, message };
  }

  /** The server as Nova has it now (user data, security groups, metadata as received). */
  serverById(id: string): Json | undefined {
    return this.findServer(id);
  }

  /** Once the next server is created, Nova fails in this way (e.g. the read-back after `POST servers`). */
  failAfterNextCreate(mode: FakeFailure): void {
    this.failureAfterCreate = mode;
  }

  /** Adds a server built on a fixture server; returns its id. */
  addServer(server: { name: string; status?: string; addresses?: Json; id?: string }): string {
    const id = server.id ?? randomUUID();
    this.servers.unshift({
      ...structuredClone(this.servers.at(-1) ?? {}),
      id,
      uuid: id,
      name: server.name,
      status: server.status ?? 'ACTIVE',
      addresses: server.addresses ?? {},
      fault: undefined,
    });
    return id;
  }

  setServerStatus(id: string, status: string): void {
    const server = this.findServer(id);
    if (!server) {
      throw new Error(`no server ${id}`);
    }
    server.status = status;
  }

  /** Ids of the servers Nova has now, in its list order. */
  serverIds(): string[] {
    return this.servers.map((server) => String(server.id));
  }

  /** Image ids Glance lists, and flavor ids Nova lists, from the fixtures. */
  imageIds(): string[] {
    return this.images.map((image) => String(image.id));
  }

  flavorIds(): string[] {
    return this.flavors.map((flavor) => String(flavor.id));
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readAll(req);
    const path = req.url ?? '/';
    const url = new URL(path, this.url);
    const route = routeOf(url.pathname);
    this.requests.push({
      method: req.method ?? 'GET',
      path,
      service: route?.service,
      region: route?.region,
      interface: route?.interface,
      headers: req.headers,
      body: parse(raw),
    });
    const failure = this.failures.get('all') ?? (route ? this.failures.get(route.service) : undefined);
    if (failure === 'down') {
      req.socket.destroy();
      return;
    }
    if (failure === 'hang') {
      return;
    }
    if (failure === 'server_error') {
      const body =
        route?.service === 'identity'
          ? {
              error: {
                code: 500,
                title: 'Internal Server Error',
                message: 'An unexpected error prevented the server from fulfilling your request.',
              },
            }
          : {
              computeFault: {
                code: 500,
                message: 'Unexpected API Error. Please report this at http://bugs.launchpad.net/nova/',
              },
            };
      send(res, 500, body);
      return;
    }
    if (!route) {
      send(res, 404, { itemNotFound: { code: 404, message: 'The resource could not be found.' } });
      return;
    }
    if (route.service === 'identity') {
      this.identity(req, res, route.rest, parse(raw));
      return;
    }
    if (!this.tokenValid(req.headers['x-auth-token'])) {
      send(res, 401, UNAUTHORIZED);
      return;
    }
    if (route.service === 'image') {
      this.image(req, res, route.rest, url.searchParams);
      return;
    }
    if (route.service === 'network') {
      this.network(req.method ?? 'GET', res, route.rest, url.searchParams, parse(raw));
      return;
    }
    if (route.project !== PROJECT_ID) {
      send(res, 403, {
        forbidden: { code: 403, message: 'Policy does not allow this request to be performed.' },
      });
      return;
    }
    this.compute(req, res, route.rest, url, parse(raw));
  }

  private identity(req: IncomingMessage, res: ServerResponse, rest: string, body: unknown): void {
    if (req.method !== 'POST' || rest !== '/auth/tokens') {
      send(res, 404, {
        error: { code: 404, title: 'Not Found', message: 'The resource could not be found.' },
      });
      return;
    }
    const auth = at(body, 'auth');
    const user = at(auth, 'identity', 'password', 'user');
    const project = at(auth, 'scope', 'project');
    const methods = at(auth, 'identity', 'methods');
    const valid =
      Array.isArray(methods) &&
      methods.includes('password') &&
      at(user, 'name') === this.username &&
      at(user, 'password') === this.password &&
      at(user, 'domain', 'name') === this.userDomainName &&
      at(project, 'name') === this.projectName &&
      at(project, 'domain', 'name') === this.projectDomainName;
    if (!valid) {
      send(res, 401, UNAUTHORIZED);
      return;
    }
    const token = `gAAAAA${randomBytes(24).toString('base64url')}`;
    const now = Date.now();
    const expiresAtMs = now + (this.options.tokenLifetimeSeconds ?? 3600) * 1000;
    this.tokens.set(token, { expiresAtMs, revoked: false });
    const domain = { id: 'default', name: this.userDomainName };
    send(
      res,
      201,
      {
        token: {
          methods: ['password'],
          user: { id: USER_ID, name: this.username, domain, password_expires_at: null },
          audit_ids: [randomBytes(16).toString('base64url')],
          expires_at: keystoneTime(expiresAtMs),
          issued_at: keystoneTime(now),
          project: {
            id: PROJECT_ID,
            name: this.projectName,
            domain: { id: 'default', name: this.projectDomainName },
          },
          is_domain: false,
          roles: [{ id: '9fe2ff9ee4384b1894a90878d3e92bab', name: 'member' }],
          catalog: this.catalog(),
        },
      },
      { 'x-subject-token': token },
    );
  }

  private catalog(): Json[] {
    const service = (type: string, name: string, path: (region: string, iface: string) => string): Json => ({
      type,
      name,
      id: randomBytes(16).toString('hex'),
      endpoints: REGIONS.flatMap((region) =>
        INTERFACES.map((iface) => ({
          id: randomBytes(16).toString('hex'),
          interface: iface,
          region,
          region_id: region,
          url: `${this.url}${path(region, iface)}`,
        })),
      ),
    });
    return [
      {
        type: 'identity',
        name: 'keystone',
        id: randomBytes(16).toString('hex'),
        endpoints: INTERFACES.map((iface) => ({
          id: randomBytes(16).toString('hex'),
          interface: iface,
          region: 'RegionOne',
          region_id: 'RegionOne',
          url: this.authUrl,
        })),
      },
      service('compute', 'nova', (region, iface) => `/${region}/${iface}/compute/v2.1/${PROJECT_ID}`),
      service('image', 'glance', (region, iface) => `/${region}/${iface}/image`),
      ...(this.options.withoutNetwork
        ? []
        : [service('network', 'neutron', (region, iface) => `/${region}/${iface}/network`)]),
    ];
  }

  private tokenValid(header: string | string[] | undefined): boolean {
    const token = typeof header === 'string' ? this.tokens.get(header) : undefined;
    return token !== undefined && !token.revoked && !this.refusingTokens && Date.now() < token.expiresAtMs;
  }

  private image(req: IncomingMessage, res: ServerResponse, rest: string, query: URLSearchParams): void {
    if (req.method !== 'GET' || rest !== '/v2/images') {
      send(res, 404, '404 Not Found\n\nThe resource could not be found.\n\n', {}, 'text/plain');
      return;
    }
    const limit = Number(query.get('limit') ?? this.options.imagePageSize ?? 5);
    const marker = query.get('marker');
    const start = marker === null ? 0 : this.images.findIndex((image) => image.id === marker) + 1;
    if (marker !== null && start === 0) {
      send(res, 400, `400 Bad Request\n\nmarker not found: ${marker}\n\n`, {}, 'text/plain');
      return;
    }
    const page = this.images.slice(start, start + limit);
    const body: Json = { images: page, schema: '/v2/schemas/images', first: '/v2/images' };
    if (start + limit < this.images.length) {
      body.next = `/v2/images?marker=${String(page.at(-1)?.id)}${query.has('limit') ? `&limit=${limit}` : ''}`;
    }
    send(res, 200, body);
  }

  private compute(req: IncomingMessage, res: ServerResponse, rest: string, url: URL, body: unknown): void {
    const method = req.method ?? 'GET';
    const serverPath = /^\/servers\/([^/]+)$/.exec(rest);
    if (method === 'GET' && rest === '/servers/detail') {
      this.listServers(res, url);
    } else if (method === 'GET' && rest === '/flavors/detail') {
      send(res, 200, { flavors: this.flavors });
    } else if (method === 'POST' && rest === '/servers') {
      this.createServer(req, res, url, body);
    } else if (rest === '/os-keypairs' || rest.startsWith('/os-keypairs/')) {
      this.keypairRoute(method, res, decodeURIComponent(rest.slice('/os-keypairs/'.length)), body);
    } else if (method === 'POST' && /^\/servers\/[^/]+\/action$/.test(rest)) {
      this.serverAction(res, decodeURIComponent(rest.split('/')[2]), body);
    } else if (serverPath && (method === 'GET' || method === 'DELETE')) {
      const id = decodeURIComponent(serverPath[1]);
      const server = this.findServer(id);
      if (!server) {
        send(res, 404, { itemNotFound: { code: 404, message: `Instance ${id} could not be found.` } });
      } else if (method === 'GET') {
        send(res, 200, { server });
      } else {
        this.servers.splice(this.servers.indexOf(server), 1);
        send(res, 204, undefined);
      }
    } else {
      send(res, 404, { itemNotFound: { code: 404, message: 'The resource could not be found.' } });
    }
  }

  private listServers(res: ServerResponse, url: URL): void {
    const maxLimit = this.options.serverPageSize ?? 1000;
    const limit = Math.min(Number(url.searchParams.get('limit') ?? maxLimit), maxLimit);
    const marker = url.searchParams.get('marker');
    const start = marker === null ? 0 : this.servers.findIndex((server) => String(server.id) === marker) + 1;
    if (marker !== null && start === 0) {
      send(res, 400, { badRequest: { code: 400, message: `marker [${marker}] not found` } });
      return;
    }
    const page = this.servers.slice(start, start + limit);
    const body: Json = { servers: page };
    // Like Nova, a full page gets a next link, even when nothing follows.
    if (page.length === limit) {
      const next = new URL(url.pathname, this.url);
      next.searchParams.set('limit', String(limit));
      next.searchParams.set('marker', String(page.at(-1)?.id));
      body.servers_links = [{ rel: 'next', href: next.toString() }];
    }
    send(res, 200, body);
  }

  private createServer(req: IncomingMessage, res: ServerResponse, url: URL, body: unknown): void {
    const badRequest = (message: string): void => send(res, 400, { badRequest: { code: 400, message } });
    const server = at(body, 'server');
    if (!isJson(server)) {
      badRequest("Invalid input for field/attribute server. Value: None. 'server' is a required property");
      return;
    }
    const {
      name,
      imageRef,
      flavorRef,
      networks,
      key_name: keyName,
      metadata,
      user_data: userData,
      security_groups: securityGroups,
    } = server;
    const microversion = microversionOf(req.headers);
    if (typeof name !== 'string' || name.trim() === '') {
      badRequest(
        `Invalid input for field/attribute name. Value: ${String(name)}. '${String(name)}' does not match '^(?! )[^\\x00-\\x1f]*(?<! )$'`,
      );
      return;
    }
    if (!this.images.some((image) => image.id === imageRef)) {
      badRequest(`Image ${String(imageRef)} could not be found.`);
      return;
    }
    if (!this.flavors.some((flavor) => String(flavor.id) === flavorRef)) {
      badRequest(`Flavor ${String(flavorRef)} could not be found.`);
      return;
    }
    if (networks === 'auto' || networks === 'none') {
      if (microversion < 37) {
        badRequest(
          `Invalid input for field/attribute networks. Value: ${networks}. '${networks}' is not of type 'array'`,
        );
        return;
      }
    } else if (Array.isArray(networks)) {
      const known = this.options.networks ?? [FAKE_NETWORK_ID];
      const unknown = networks
        .map((network) => at(network, 'uuid'))
        .find((id) => typeof id !== 'string' || !known.includes(id));
      if (unknown !== undefined || networks.length === 0) {
        badRequest(`Network ${String(unknown)} could not be found.`);
        return;
      }
    } else if (microversion >= 37) {
      badRequest("Invalid input for field/attribute server. Value: {...}. 'networks' is a required property");
      return;
    }
    if (keyName !== undefined && (typeof keyName !== 'string' || !this.keypairs.has(keyName))) {
      badRequest('Invalid key_name provided.');
      return;
    }
    if (
      metadata !== undefined &&
      (!isJson(metadata) || Object.values(metadata).some((v) => typeof v !== 'string'))
    ) {
      badRequest("Invalid input for field/attribute metadata. Value: {...}. is not of type 'string'");
      return;
    }
    const badKey = isJson(metadata)
      ? Object.keys(metadata).find((key) => !METADATA_KEY.test(key))
      : undefined;
    if (badKey !== undefined) {
      badRequest(
        `Invalid input for field/attribute metadata. Value: {...}. Additional properties are not allowed ('${badKey}' was unexpected)`,
      );
      return;
    }
    if (
      userData !== undefined &&
      (typeof userData !== 'string' ||
        userData.length > NOVA_MAX_USER_DATA ||
        !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(userData))
    ) {
      badRequest('User data needs to be valid base 64.');
      return;
    }
    const knownGroups = this.options.securityGroups ?? ['default', 'web'];
    const groups = Array.isArray(securityGroups) ? securityGroups.map((group) => at(group, 'name')) : [];
    if (securityGroups !== undefined && !Array.isArray(securityGroups)) {
      badRequest("Invalid input for field/attribute security_groups. Value: {...}. is not of type 'array'");
      return;
    }
    const unknownGroup = groups.find((group) => typeof group !== 'string' || !knownGroups.includes(group));
    if (unknownGroup !== undefined) {
      badRequest(`Unable to find security_group with name or id '${JSON.stringify(unknownGroup)}'`);
      return;
    }
    const rejection = this.nextCreateRejection;
    if (rejection) {
      this.nextCreateRejection = undefined;
      const fault =
        { 400: 'badRequest', 403: 'forbidden', 409: 'conflictingRequest', 413: 'overLimit' }[
          rejection.status
        ] ?? 'computeFault';
      send(res, rejection.status, { [fault]: { code: rejection.status, message: rejection.message } });
      return;
    }
    this.created += 1;
    const n = this.created;
    const id = randomUUID();
    const base = url.origin + url.pathname.replace(/\/servers$/, '');
    const links = [
      { rel: 'self', href: `${base}/servers/${id}` },
      { rel: 'bookmark', href: `${base.replace('/v2.1', '')}/servers/${id}` },
    ];
    const label = Array.isArray(networks) ? 'private-net' : 'auto_allocated_network';
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    this.servers.unshift({
      id,
      name,
      status: this.options.newServerStatus ?? 'ACTIVE',
      tenant_id: PROJECT_ID,
      user_id: USER_ID,
      metadata: metadata ?? {},
      hostId: randomBytes(28).toString('hex'),
      image: { id: imageRef, links: [{ rel: 'bookmark', href: `${base}/images/${String(imageRef)}` }] },
      flavor: { id: flavorRef, links: [{ rel: 'bookmark', href: `${base}/flavors/${String(flavorRef)}` }] },
      created: now,
      updated: now,
      addresses: {
        [label]: [
          {
            version: 4,
            addr: `10.0.${n >> 8}.${n & 255}`,
            'OS-EXT-IPS:type': 'fixed',
            'OS-EXT-IPS-MAC:mac_addr': 'fa:16:3e:00:00:01',
          },
        ],
      },
      security_groups: (groups.length > 0 ? groups : ['default']).map((group) => ({ name: group })),
      user_data: userData,
      accessIPv4: '',
      accessIPv6: '',
      links,
      key_name: keyName ?? null,
      progress: 0,
      config_drive: '',
      'OS-DCF:diskConfig': 'MANUAL',
      'OS-EXT-STS:task_state': null,
      'OS-EXT-STS:vm_state': 'active',
      'OS-EXT-STS:power_state': 1,
    });
    send(res, 202, {
      server: {
        id,
        links,
        adminPass: randomBytes(9).toString('base64url'),
        'OS-DCF:diskConfig': 'MANUAL',
        security_groups: [{ name: 'default' }],
      },
    });
    if (this.failureAfterCreate) {
      this.failures.set('compute', this.failureAfterCreate);
      this.failureAfterCreate = undefined;
    }
  }

  /**
   * Nova's power actions, completed at once: `os-stop` → SHUTOFF, `os-start` and `reboot` → ACTIVE;
   * 409 as Nova answers when the server's state forbids the action.
   */
  private serverAction(res: ServerResponse, id: string, body: unknown): void {
    const server = this.findServer(id);
    if (!server) {
      send(res, 404, { itemNotFound: { code: 404, message: `Instance ${id} could not be found.` } });
      return;
    }
    const action = isJson(body) ? Object.keys(body)[0] : undefined;
    const conflict = (verb: string): void =>
      send(res, 409, {
        conflictingRequest: {
          code: 409,
          message: `Cannot '${verb}' instance ${id} while it is in vm_state ${String(server['OS-EXT-STS:vm_state'])}`,
        },
      });
    const set = (status: string, vmState: string, powerState: number): void => {
      server.status = status;
      server['OS-EXT-STS:vm_state'] = vmState;
      server['OS-EXT-STS:power_state'] = powerState;
      send(res, 202, undefined);
    };
    if (action === 'os-stop') {
      if (server.status === 'SHUTOFF') {
        conflict('stop');
      } else {
        set('SHUTOFF', 'stopped', 4);
      }
    } else if (action === 'os-start') {
      if (server.status !== 'SHUTOFF') {
        conflict('start');
      } else {
        set('ACTIVE', 'active', 1);
      }
    } else if (action === 'reboot') {
      if (server.status !== 'ACTIVE' || !isJson(at(body, 'reboot'))) {
        conflict('reboot');
      } else {
        set('ACTIVE', 'active', 1);
      }
    } else {
      send(res, 400, { badRequest: { code: 400, message: `There is no such action: ${String(action)}` } });
    }
  }

  /** Nova `os-keypairs`: list, create (import), read, delete, as Nova 2.1 answers them. */
  private keypairRoute(method: string, res: ServerResponse, name: string, body: unknown): void {
    if (name === '' && method === 'GET') {
      send(res, 200, { keypairs: [...this.keypairs.values()].map((keypair) => ({ keypair })) });
    } else if (name === '' && method === 'POST') {
      const keypair = at(body, 'keypair');
      const keyName = at(keypair, 'name');
      const publicKey = at(keypair, 'public_key');
      if (typeof keyName !== 'string' || !/^[a-zA-Z0-9 _.@-]{1,255}$/.test(keyName)) {
        send(res, 400, {
          badRequest: {
            code: 400,
            message: `Invalid input for field/attribute name. Value: ${String(keyName)}. '${String(keyName)}' does not match '^[a-zA-Z0-9 _.@-]+$'`,
          },
        });
      } else if (typeof publicKey !== 'string') {
        send(res, 400, {
          badRequest: { code: 400, message: 'Keypair data is invalid: public_key is required' },
        });
      } else if (this.keypairs.has(keyName)) {
        send(res, 409, {
          conflictingRequest: { code: 409, message: `Key pair '${keyName}' already exists.` },
        });
      } else {
        const created = novaKeyPair(keyName, publicKey);
        if (created.fingerprint === '') {
          send(res, 400, {
            badRequest: { code: 400, message: 'Keypair data is invalid: failed to generate fingerprint' },
          });
          return;
        }
        this.keypairs.set(keyName, created);
        send(res, 200, { keypair: { ...created, user_id: USER_ID } });
      }
    } else if (name !== '' && (method === 'GET' || method === 'DELETE')) {
      const keypair = this.keypairs.get(name);
      if (!keypair) {
        send(res, 404, {
          itemNotFound: { code: 404, message: `Keypair ${name} not found for user ${USER_ID}` },
        });
      } else if (method === 'GET') {
        send(res, 200, { keypair });
      } else {
        this.keypairs.delete(name);
        send(res, 202, undefined);
      }
    } else {
      send(res, 405, { computeFault: { code: 405, message: 'Method not allowed' } });
    }
  }

  /** Neutron: the ports of servers, and floating IPs (list, create, associate, delete). */
  private network(
    method: string,
    res: ServerResponse,
    rest: string,
    query: URLSearchParams,
    body: unknown,
  ): void {
    const neutronError = (status: number, type: string, message: string): void =>
      send(res, status, { NeutronError: { type, message, detail: '' } });
    const floatingPath = /^\/v2\.0\/floatingips\/([^/]+)$/.exec(rest);
    if (method === 'GET' && rest === '/v2.0/ports') {
      const device = query.get('device_id');
      const servers = this.servers.filter((server) => device === null || String(server.id) === device);
      send(res, 200, {
        ports: servers.map((server) => ({
          id: this.portOf(String(server.id)),
          device_id: String(server.id),
          device_owner: 'compute:nova',
          network_id: FAKE_NETWORK_ID,
          status: 'ACTIVE',
          fixed_ips: [{ ip_address: fixedAddressOf(server) }],
        })),
      });
    } else if (method === 'GET' && rest === '/v2.0/floatingips') {
      const ports = query.getAll('port_id');
      send(res, 200, {
        floatingips: this.floatingIps.filter(
          (ip) => ports.length === 0 || ports.includes(String(ip.port_id)),
        ),
      });
    } else if (method === 'POST' && rest === '/v2.0/floatingips') {
      const network = at(body, 'floatingip', 'floating_network_id');
      if (network !== FAKE_EXTERNAL_NETWORK_ID) {
        neutronError(
          404,
          'ExternalGatewayForFloatingIPNotFound',
          `Network ${String(network)} could not be found.`,
        );
        return;
      }
      this.allocated += 1;
      const ip: FakeFloatingIp = {
        id: randomUUID(),
        floating_ip_address: `203.0.113.${this.allocated & 255}`,
        floating_network_id: network,
        port_id: null,
        fixed_ip_address: null,
        status: 'DOWN',
      };
      this.floatingIps.push(ip);
      send(res, 201, { floatingip: ip });
    } else if (floatingPath && (method === 'PUT' || method === 'DELETE')) {
      const ip = this.floatingIps.find((candidate) => candidate.id === floatingPath[1]);
      if (!ip) {
        neutronError(404, 'FloatingIPNotFound', `Floating IP ${floatingPath[1]} could not be found`);
        return;
      }
      if (method === 'DELETE') {
        this.detach(ip);
        this.floatingIps.splice(this.floatingIps.indexOf(ip), 1);
        send(res, 204, undefined);
        return;
      }
      const port = at(body, 'floatingip', 'port_id');
      const server = this.servers.find((candidate) => this.ports.get(String(candidate.id)) === port);
      if (typeof port !== 'string' || !server) {
        neutronError(404, 'PortNotFound', `Port ${String(port)} could not be found.`);
        return;
      }
      const failure = this.nextAssociateFailure;
      if (failure) {
        this.nextAssociateFailure = undefined;
        neutronError(failure.status, 'FloatingIPSetupException', failure.message);
        return;
      }
      if (this.floatingIps.some((other) => other.port_id === port)) {
        neutronError(
          409,
          'FloatingIPPortAlreadyAssociated',
          `Cannot associate floating IP ${ip.floating_ip_address} (${ip.id}) with port ${port} using fixed IP ${fixedAddressOf(server)}, as that fixed IP already has a floating IP on external network ${FAKE_EXTERNAL_NETWORK_ID}.`,
        );
        return;
      }
      ip.port_id = port;
      ip.fixed_ip_address = fixedAddressOf(server);
      ip.status = 'ACTIVE';
      const addresses = isJson(server.addresses) ? server.addresses : {};
      const label = Object.keys(addresses)[0] ?? 'private-net';
      server.addresses = {
        ...addresses,
        [label]: [
          ...(Array.isArray(addresses[label]) ? addresses[label] : []),
          { version: 4, addr: ip.floating_ip_address, 'OS-EXT-IPS:type': 'floating' },
        ],
      };
      send(res, 200, { floatingip: ip });
    } else {
      neutronError(404, 'HTTPNotFound', 'The resource could not be found.');
    }
  }

  private portOf(serverId: string): string {
    let port = this.ports.get(serverId);
    if (port === undefined) {
      port = randomUUID();
      this.ports.set(serverId, port);
    }
    return port;
  }

  /** Takes a floating IP off its server's addresses (a deleted or disassociated floating IP). */
  private detach(ip: FakeFloatingIp): void {
    for (const server of this.servers) {
      if (isJson(server.addresses)) {
        server.addresses = Object.fromEntries(
          Object.entries(server.addresses).map(([label, entries]) => [
            label,
            (Array.isArray(entries) ? entries : []).filter(
              (entry) => at(entry, 'addr') !== ip.floating_ip_address,
            ),
          ]),
        );
      }
    }
    ip.port_id = null;
  }

  private findServer(id: string): Json | undefined {
    return this.servers.find((server) => String(server.id) === id);
  }
}

interface Route {
  service: FakeService;
  rest: string;
  region?: string;
  interface?: string;
  project?: string;
}

function routeOf(pathname: string): Route | undefined {
  const identity = /^\/identity\/v3(\/.*)$/.exec(pathname);
  if (identity) {
    return { service: 'identity', rest: identity[1] };
  }
  const compute = /^\/([^/]+)\/([^/]+)\/compute\/v2\.1\/([^/]+)(\/.*)$/.exec(pathname);
  if (compute && REGIONS.includes(compute[1]) && INTERFACES.includes(compute[2])) {
    return {
      service: 'compute',
      region: compute[1],
      interface: compute[2],
      project: compute[3],
      rest: compute[4],
    };
  }
  const network = /^\/([^/]+)\/([^/]+)\/network(\/.*)$/.exec(pathname);
  if (network && REGIONS.includes(network[1]) && INTERFACES.includes(network[2])) {
    return { service: 'network', region: network[1], interface: network[2], rest: network[3] };
  }
  const image = /^\/([^/]+)\/([^/]+)\/image(\/.*)$/.exec(pathname);
  if (image && REGIONS.includes(image[1]) && INTERFACES.includes(image[2])) {
    return { service: 'image', region: image[1], interface: image[2], rest: image[3] };
  }
  return undefined;
}

/** The Nova compute microversion asked for, as its minor number (2.37 → 37); 2.1 when none. */
function microversionOf(headers: IncomingHttpHeaders): number {
  const legacy = headers['x-openstack-nova-api-version'];
  const modern = headers['openstack-api-version'];
  const value =
    typeof legacy === 'string'
      ? legacy
      : typeof modern === 'string'
        ? modern.replace(/^compute\s+/i, '')
        : '2.1';
  const match = /^2\.(\d+)$/.exec(value.trim());
  return match ? Number(match[1]) : 1;
}

/** The fixtures are libcloud's Nova image list; Glance v2 lists images in its own, flatter shape. */
function toGlanceImage(image: Json): Json {
  const id = String(image.id);
  const metadata = isJson(image.metadata) ? image.metadata : {};
  return {
    id,
    name: image.name,
    status: String(image.status).toLowerCase(),
    visibility: 'public',
    protected: false,
    min_disk: image.minDisk ?? 0,
    min_ram: image.minRam ?? 0,
    disk_format: 'qcow2',
    container_format: 'bare',
    size: 1073741824,
    tags: [],
    created_at: image.created,
    updated_at: image.updated,
    self: `/v2/images/${id}`,
    file: `/v2/images/${id}/file`,
    schema: '/v2/schemas/image',
    ...metadata,
  };
}

function fixture(file: string, member: string): Json[] {
  const document: unknown = JSON.parse(readFileSync(`${FIXTURES}${file}`, 'utf8'));
  const list = at(document, member);
  if (!Array.isArray(list)) {
    throw new Error(`${file} has no '${member}' list`);
  }
  return list.filter(isJson);
}

/** A key pair as Nova keeps it: its fingerprint is the MD5 of the key blob (empty when the key is unreadable). */
function novaKeyPair(name: string, publicKey: string): FakeKeyPair {
  const [type, data] = publicKey.trim().split(/\s+/);
  const blob = Buffer.from(data ?? '', 'base64');
  const typeLength = blob.length >= 4 ? blob.readUInt32BE(0) : 0;
  const readable =
    (type === 'ssh-rsa' || type === 'ssh-ed25519') &&
    /^[A-Za-z0-9+/]+={0,2}$/.test(data ?? '') &&
    blob.subarray(4, 4 + typeLength).toString('latin1') === type;
  const fingerprint = readable
    ? (createHash('md5').update(blob).digest('hex').match(/../g) ?? []).join(':')
    : '';
  return { name, public_key: publicKey.trim(), fingerprint, type: 'ssh' };
}

/** The first fixed (private) address of a server. */
function fixedAddressOf(server: Json): string {
  const all = Object.values(isJson(server.addresses) ? server.addresses : {}).flatMap((entries) =>
    Array.isArray(entries) ? entries : [],
  );
  const fixed = all.find((entry) => at(entry, 'OS-EXT-IPS:type') !== 'floating') ?? all[0];
  const address = at(fixed, 'addr');
  return typeof address === 'string' ? address : '10.0.0.254';
}

function keystoneTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function at(value: unknown, ...keys: string[]): unknown {
  let current = value;
  for (const key of keys) {
    current = isJson(current) ? current[key] : undefined;
  }
  return current;
}

function parse(raw: string): unknown {
  if (raw === '') {
    return undefined;
  }
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  contentType = 'application/json',
): void {
  if (res.headersSent) {
    return;
  }
  if (body === undefined) {
    res.writeHead(status, headers).end();
    return;
  }
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': contentType, ...headers }).end(text);
}
