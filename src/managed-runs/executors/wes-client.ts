import { isRecord } from '../../common/is-record.js';
import { OutboundError, readBody, sendRequest, type OutboundResponse } from '../../common/net/http-client.js';
import { OutputTail } from './output-tail.js';

/** Largest JSON answer read from a WES endpoint: a run log with many task logs stays well under it. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/** Error bodies are read only for their message. */
const MAX_ERROR_BYTES = 64 * 1024;
/** A log served without range support is read through to its end, up to this much. */
export const MAX_LOG_READ_BYTES = 64 * 1024 * 1024;
/** Endpoints behind a proxy redirect (`/ga4gh/wes/v1` → `/ga4gh/wes/v1/`); more hops are a loop. */
const MAX_REDIRECTS = 3;

/** Where a WES endpoint is and how to reach it. */
export interface WesEndpoint {
  /** The API base, `…/ga4gh/wes/v1`, without a trailing slash. */
  url: string;
  /** The `Authorization` header value, sent to the endpoint's own origin only. */
  authorization?: string;
  timeoutMs: number;
  /** Log URLs on another origin pass the private-address guard unless this is set (ALLOW_PRIVATE_NETWORK_LINKS). */
  allowPrivateLinks: boolean;
}

/**
 * The endpoint could not be asked, or answered what WES does not: the message is one line a
 * person can read, naming the endpoint's host and never a credential.
 */
export class WesError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WesError';
  }
}

/** A 2xx answer's JSON, or the endpoint's 404 (a run it does not know). */
export type WesAnswer = { kind: 'json'; body: Record<string, unknown> } | { kind: 'not_found' };

/**
 * The calls of GA4GH WES 1.1 the executor makes, each bounded by the endpoint's timeout and by
 * MAX_ANSWER_BYTES. The configured endpoint is trusted (it may live on the cluster's private
 * network, as TESTING_SERVICES_FILE's services may); its credential goes to its own origin only.
 */
export class WesClient {
  private readonly secrets: string[];

  constructor(private readonly endpoint: WesEndpoint) {
    this.secrets = secretsOf(endpoint.authorization);
  }

  get host(): string {
    return new URL(this.endpoint.url).host;
  }

  /** `GET /service-info`. */
  async serviceInfo(): Promise<Record<string, unknown>> {
    const answer = await this.json('GET', '/service-info');
    if (answer.kind === 'not_found') {
      throw new WesError(
        `${this.host} has no /service-info (404): is the url the WES API's base (…/ga4gh/wes/v1)?`,
      );
    }
    return answer.body;
  }

  /** `POST /runs` with a multipart form (WES 1.1); resolves the new run's id. */
  async runWorkflow(form: FormData): Promise<string> {
    // Node's fetch types serialise a form with its boundary; the bytes go through our bounded client.
    const request = new Request('http://form.invalid/', { method: 'POST', body: form });
    const body = Buffer.from(await request.arrayBuffer());
    const answer = await this.json('POST', '/runs', {
      body,
      contentType: request.headers.get('content-type') ?? 'multipart/form-data',
    });
    if (answer.kind === 'not_found') {
      throw new WesError(`${this.host} answered POST /runs with 404: is the url the WES API's base?`);
    }
    const runId = answer.body.run_id;
    if (typeof runId !== 'string' || runId === '') {
      throw new WesError(`${this.host} accepted the run but its answer has no run_id`);
    }
    return runId;
  }

  /** `GET /runs/{run_id}/status`: the run's state as the endpoint words it; undefined when it knows no such run (404). */
  async runStatus(runId: string): Promise<string | undefined> {
    const answer = await this.json('GET', `/runs/${encodeURIComponent(runId)}/status`);
    if (answer.kind === 'not_found') {
      return undefined;
    }
    const state = answer.body.state;
    if (typeof state !== 'string') {
      throw new WesError(`the status of run ${runId} from ${this.host} has no state`);
    }
    return state;
  }

  /** `GET /runs/{run_id}`: the run's log object, or `not_found`. */
  runLog(runId: string): Promise<WesAnswer> {
    return this.json('GET', `/runs/${encodeURIComponent(runId)}`);
  }

  /** `POST /runs/{run_id}/cancel`; a run the endpoint does not know (404) is left as it is. */
  async cancelRun(runId: string): Promise<void> {
    await this.json('POST', `/runs/${encodeURIComponent(runId)}/cancel`);
  }

  /**
   * The last `maxBytes` of a log a run log points to (`stdout`, `stderr`): asked as a suffix range;
   * an endpoint that ignores ranges sends it whole, read through a bounded tail, at most
   * MAX_LOG_READ_BYTES. The endpoint's credential goes with URLs of its own origin only; URLs
   * elsewhere pass the private-address guard. Rejects with a WesError naming what failed.
   */
  async logTail(location: string, maxBytes: number): Promise<Buffer> {
    let url: URL;
    try {
      url = new URL(location, `${this.endpoint.url}/`);
    } catch {
      throw new WesError(`'${location.slice(0, 200)}' is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new WesError(`${url.protocol} URLs are not read (only http and https)`);
    }
    const own = url.origin === new URL(this.endpoint.url).origin;
    const response = await this.send(url.toString(), {
      method: 'GET',
      headers: { accept: 'text/plain, */*', range: `bytes=-${Math.max(1, maxBytes)}` },
      allowPrivate: own || this.endpoint.allowPrivateLinks,
      authorization: own ? this.endpoint.authorization : undefined,
    });
    if (response.status === 416) {
      // No byte to range over: the log is empty so far.
      response.body.resume();
      return Buffer.alloc(0);
    }
    if (response.status < 200 || response.status >= 300) {
      throw await this.refusal(response, `GET ${url.pathname}`);
    }
    const tail = new OutputTail(maxBytes);
    try {
      for await (const chunk of response.body) {
        tail.push(chunk as Buffer);
        if (tail.total > MAX_LOG_READ_BYTES) {
          response.body.destroy();
          const note = `\n[wes] the log is longer than ${MAX_LOG_READ_BYTES} bytes and its server sends no ranges: this is where reading stopped\n`;
          return Buffer.concat([tail.bytes(), Buffer.from(note)]).subarray(-maxBytes);
        }
      }
    } catch (error) {
      throw this.failure(error);
    }
    return tail.bytes();
  }

  private async json(
    method: 'GET' | 'POST',
    path: string,
    payload?: { body: Buffer; contentType: string },
  ): Promise<WesAnswer> {
    const response = await this.send(`${this.endpoint.url}${path}`, {
      method,
      headers: {
        accept: 'application/json',
        ...(payload ? { 'content-type': payload.contentType } : {}),
      },
      body: payload?.body,
      allowPrivate: true,
      authorization: this.endpoint.authorization,
    });
    if (response.status === 404) {
      response.body.resume();
      return { kind: 'not_found' };
    }
    if (response.status < 200 || response.status >= 300) {
      throw await this.refusal(response, `${method} ${path}`);
    }
    let text: string;
    try {
      text = (await readBody(response.body, MAX_ANSWER_BYTES)).toString('utf8');
    } catch (error) {
      throw this.failure(error);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new WesError(`${this.host} answered ${method} ${path} with something that is not JSON`);
    }
    if (!isRecord(body)) {
      throw new WesError(`${this.host} answered ${method} ${path} with JSON that is not an object`);
    }
    return { kind: 'json', body };
  }

  private async send(
    url: string,
    request: {
      method: string;
      headers: Record<string, string>;
      body?: Buffer;
      allowPrivate: boolean;
      authorization?: string;
    },
  ): Promise<OutboundResponse> {
    try {
      return await sendRequest(url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        originOnlyHeaders: request.authorization ? { authorization: request.authorization } : undefined,
        timeoutMs: this.endpoint.timeoutMs,
        allowPrivate: request.allowPrivate,
        // A POST is not repeated elsewhere: only reads follow redirects.
        maxRedirects: request.method === 'GET' ? MAX_REDIRECTS : 0,
      });
    } catch (error) {
      throw this.failure(error);
    }
  }

  private failure(error: unknown): WesError {
    if (error instanceof OutboundError) {
      return new WesError(this.redact(error.message));
    }
    throw error;
  }

  /** An error answer as a WesError: the status and WES's `msg` (ErrorResponse), credentials taken out. */
  private async refusal(response: OutboundResponse, what: string): Promise<WesError> {
    let message = '';
    try {
      const json: unknown = JSON.parse((await readBody(response.body, MAX_ERROR_BYTES)).toString('utf8'));
      const said = isRecord(json) ? (json.msg ?? json.message ?? json.detail) : undefined;
      message = typeof said === 'string' ? said.replace(/\s+/g, ' ').trim().slice(0, 200) : '';
    } catch {
      // Proxies answer HTML; only a JSON message is worth repeating.
    }
    const host = new URL(response.url).host;
    return new WesError(
      this.redact(`${host} answered ${what} with ${response.status}${message ? `: ${message}` : ''}`),
    );
  }

  private redact(text: string): string {
    return this.secrets.reduce((redacted, secret) => redacted.split(secret).join('[redacted]'), text);
  }
}

/** What of an `Authorization` value must never be repeated: the whole, the credential, Basic's pair and password. */
function secretsOf(authorization: string | undefined): string[] {
  if (authorization === undefined) {
    return [];
  }
  const credential = authorization.replace(/^\S+\s+/, '');
  const secrets = [authorization, credential];
  if (/^basic\s/i.test(authorization)) {
    const pair = Buffer.from(credential, 'base64').toString('utf8');
    secrets.push(pair, pair.slice(pair.indexOf(':') + 1));
  }
  return secrets.filter((secret) => secret.length >= 4).sort((a, b) => b.length - a.length);
}
