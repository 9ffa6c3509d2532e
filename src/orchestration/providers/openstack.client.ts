import { DomainError } from '../../common/errors/domain-error.js';
import { isRecord } from '../../common/is-record.js';
import { OutboundError, readBody, sendRequest } from '../../common/net/http-client.js';
import { redactSecrets } from './cloud-provider.js';
import { field, upstreamMessage } from './openstack-mapping.js';
import type { OpenStackSettings } from './openstack-settings.js';

/** A Keystone token and the endpoints of its catalog. */
export interface Session {
  readonly token: string;
  readonly expiresAtMs: number;
  readonly computeUrl: string;
  readonly imageUrl: string;
  /** Neutron's base (without its version), when the catalog has one. */
  readonly networkUrl?: string;
}

export interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface Call {
  /** What is being done, for messages: "listing servers". */
  readonly what: string;
  readonly method: string;
  /** The URL, from the session's endpoints. */
  readonly url: (session: Session) => string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

export interface OpenStackClientOptions {
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

/**
 * The exchanges with one OpenStack cloud: Keystone v3 password auth with a cached token, each call
 * sent with it to an endpoint of the token's catalog, and the cloud's failures as DomainErrors
 * whose messages never carry the password or a token.
 */
export class OpenStackClient {
  private session?: Session;
  private authenticating?: Promise<Session>;
  /** The current and the previous token: a failing call may have used either. */
  private recentTokens: string[] = [];
  private readonly now: () => number;

  constructor(
    private readonly name: string,
    private readonly settings: OpenStackSettings,
    private readonly options: OpenStackClientOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** One authenticated call; a 401 renews the token once and repeats the call. */
  async call(call: Call): Promise<Reply> {
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

  /** One authenticated call answering `status`; any other status is 'upstream_failed'. */
  async expect(status: number, call: Call): Promise<Reply> {
    const reply = await this.call(call);
    if (reply.status !== status) {
      throw this.failed(call.what, reply);
    }
    return reply;
  }

  /** The error of an unexpected status: the cloud failed, is over quota, or refused us. */
  failed(what: string, reply: Reply): DomainError {
    const message = upstreamMessage(reply.body);
    return this.upstream(
      what,
      `the cloud answered ${reply.status}${message === undefined ? '' : ` (${message})`}`,
    );
  }

  /** The error of a call the cloud did not carry out (`what`), for a reason of its own (`detail`). */
  upstream(what: string, detail: string): DomainError {
    return new DomainError('upstream_failed', this.redact(`Cloud '${this.name}': ${what} failed: ${detail}`));
  }

  /** A 400 of the cloud: the caller's request was refused, with the cloud's own message. */
  refused(reply: Reply, fallback: string): DomainError {
    const message = upstreamMessage(reply.body) ?? fallback;
    return new DomainError('invalid_input', this.redact(`Cloud '${this.name}': ${message}`));
  }

  /** Whatever a cloud echoes back, neither the password nor a token may reach a message. */
  redact(message: string): string {
    return redactSecrets(message, [this.settings.password, ...this.recentTokens]);
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
