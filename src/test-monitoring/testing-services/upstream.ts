import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { Injectable, Optional } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import type { CredentialKey, TestingServiceCredentials } from '../../config/testing-services-file.js';
import { RefreshMetrics } from '../refresh-metrics.js';
import { OutboundError, openStreamed, readBody, sendRequest } from '../../common/net/http-client.js';
import {
  DEFAULT_BUILD_LIMIT,
  findConfiguredService,
  LogStreamError,
  MAX_BUILD_LIMIT,
  normalizeServiceUrl,
  type BuildCheckRequest,
  type BuildCheckResult,
  type BuildLogRequest,
  type BuildLogResult,
  type CancelRequest,
  type CancelResult,
  type BuildDetailsRequest,
  type BuildDetailsResult,
  type ResourceTarget,
  type TestingService,
  type TriggerHow,
  type TriggerRequest,
  type TriggerResult,
  type Unavailable,
  type UpstreamFault,
} from './testing-service.js';
import { isRecord } from '../../common/is-record.js';
import { parseRateLimit, parseRetryAfter } from '../../common/net/rate-limit.js';
import { minuteUp, utcMinute } from '../../common/utc-minute.js';

// Read by every CI client, and by the registry for GitHub's API: they live in common/.
export { DEFAULT_RATE_LIMIT_PAUSE_MS, parseRateLimit, parseRetryAfter } from '../../common/net/rate-limit.js';

/** Largest answer read from a CI service: a page of 100 builds is well under 1 MiB. */
export const MAX_ANSWER_BYTES = 5 * 1024 * 1024;
/** Error bodies are read only for their message. */
const MAX_ERROR_BYTES = 64 * 1024;
/** Renamed repositories answer 301; a few hops are normal, more is a loop. */
const MAX_REDIRECTS = 3;

/** The outcomes that do not carry builds, shared by every client. */
export type UpstreamTrouble = Exclude<BuildCheckResult, { kind: 'builds' }>;

/** A parsed 2xx answer. */
export interface UpstreamJson {
  kind: 'json';
  body: unknown;
  etag?: string;
}

export interface UpstreamGet {
  url: string;
  headers: Record<string, string>;
  /** Sent only to the service's own origin, never after a cross-origin redirect. */
  authorization?: string;
  etag?: string;
  /** Configured services and development set-ups may live on private addresses. */
  allowPrivate: boolean;
  timeoutMs: number;
  /** The failure reason of a 404, e.g. `workflow not found`. */
  notFound: string;
  now: Date;
}

/** A request of a trigger or a log read (see UpstreamHttp.call and UpstreamHttp.open). */
export interface UpstreamCall {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  /** Sent only to the service's own origin, never after a cross-origin redirect. */
  authorization?: string;
  /** Sent as JSON (with its content type). */
  json?: unknown;
  allowPrivate: boolean;
  now: Date;
  /** Redirects followed; default MAX_REDIRECTS. */
  maxRedirects?: number;
  /** Aborts the call, and the reading of a log, when nobody waits for it any more. */
  signal?: AbortSignal;
}

/** An answer whose body is still to be read (or drained). */
export interface UpstreamAnswer {
  kind: 'answer';
  status: number;
  headers: IncomingHttpHeaders;
  /** The URL that answered, after redirects. */
  url: string;
  body: IncomingMessage;
}

/**
 * An opened log: the answer, and its body as chunks with every pause bounded by the upstream
 * timeout. Each chunk is valid until the next is asked for (one buffer is reused: see
 * openStreamed). A caller that does not read the chunks (an error answer: read `fault` first)
 * calls `done`, which ends the bound and the connection.
 */
export interface UpstreamStream {
  kind: 'answer';
  status: number;
  headers: IncomingHttpHeaders;
  url: string;
  chunks: AsyncIterable<Buffer>;
  done(): void;
}

/** Longer than any log could take to arrive: a stream is bounded by its pauses, not by its length. */
const NO_TOTAL_LIMIT_MS = 24 * 3600_000;

/** Aborts when `ms` pass without `reset`: the bound of every pause in a stream. */
class IdleDeadline {
  private readonly controller = new AbortController();
  private timer?: NodeJS.Timeout;

  constructor(private readonly ms: number) {
    this.reset();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get expired(): boolean {
    return this.controller.signal.aborted;
  }

  reset(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.controller.abort(new DOMException('the service went silent', 'TimeoutError'));
    }, this.ms);
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

/** The ETag of an answer, as sent back in `If-None-Match` (weak validators kept as they are). */
export function parseEtag(headers: IncomingHttpHeaders): string | undefined {
  const etag = headers.etag;
  return typeof etag === 'string' && etag.trim() !== '' ? etag.trim() : undefined;
}

/** The request's build limit, bounded to what every service serves in one page. */
export function buildLimit(request: BuildCheckRequest): number {
  const limit = request.limit ?? DEFAULT_BUILD_LIMIT;
  return Math.min(MAX_BUILD_LIMIT, Math.max(1, Math.floor(limit)));
}

/**
 * Splits a `resource` into decoded path segments; undefined when a segment is empty, `.`/`..`
 * or badly encoded, so that a crate cannot steer a (possibly authenticated) call elsewhere.
 */
export function resourceSegments(resource: string): string[] | undefined {
  const trimmed = resource.trim().replace(/^\/+|\/+$/g, '');
  if (trimmed === '' || /[?#\\]/.test(trimmed)) {
    return undefined;
  }
  const segments: string[] = [];
  for (const raw of trimmed.split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (segment === '' || segment === '.' || segment === '..') {
      return undefined;
    }
    segments.push(segment);
  }
  return segments;
}

/** `base` + encoded segments + optional query, whatever slashes the configured base URL ends with. */
export function joinUrl(base: string, segments: readonly string[], query = ''): string {
  const path = segments.map((segment) => encodeURIComponent(segment)).join('/');
  return `${base.trim().replace(/\/+$/, '')}/${path}${query === '' ? '' : `?${query}`}`;
}

/** Re-exported for the clients, which read JSON answers with it. */
export { isRecord };

/** A date from an ISO 8601 string or epoch milliseconds; undefined for anything else. */
export function toDate(value: unknown): Date | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') {
    return undefined;
  }
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Told of every request sent to a CI service (the refresh metrics count them). */
export interface UpstreamRequestCounter {
  countUpstreamRequest(serviceType: string): void;
}

/**
 * The outbound side every client shares: which service URLs are trusted, which credentials may
 * be sent, and one GET that turns HTTP into check outcomes.
 */
export class UpstreamHttp {
  constructor(
    private readonly config: AppConfig,
    /** Read when a request is made: a client's `type` is set after its base constructor runs. */
    private readonly service: { readonly type: string },
    private readonly counter?: UpstreamRequestCounter,
  ) {}

  private get type(): string {
    return this.service.type;
  }

  get timeoutMs(): number {
    return this.config.monitoring.upstreamTimeoutMs;
  }

  /** Configured services are trusted (API.md 2.8); anything else passes the private-address guard. */
  allowPrivate(serviceUrl: string): boolean {
    return (
      this.config.registry.allowPrivateNetworkLinks ||
      findConfiguredService(this.config.monitoring.services, this.type, serviceUrl) !== undefined
    );
  }

  /** The request's credentials, when they belong to this service type and this very URL. */
  credentials(request: {
    serviceUrl: string;
    credentials?: TestingServiceCredentials;
  }): TestingServiceCredentials | undefined {
    const credentials = request.credentials;
    if (
      credentials === undefined ||
      credentials.type !== this.type ||
      normalizeServiceUrl(credentials.url) !== normalizeServiceUrl(request.serviceUrl)
    ) {
      return undefined;
    }
    return credentials;
  }

  /** One GET of a JSON document; never rejects. */
  async getJson(get: UpstreamGet): Promise<UpstreamJson | UpstreamTrouble> {
    const headers: Record<string, string> = { ...get.headers };
    if (get.etag !== undefined) {
      headers['if-none-match'] = get.etag;
    }
    this.counter?.countUpstreamRequest(this.type);
    try {
      const response = await sendRequest(get.url, {
        headers,
        originOnlyHeaders: get.authorization === undefined ? undefined : { authorization: get.authorization },
        timeoutMs: get.timeoutMs,
        allowPrivate: get.allowPrivate,
        maxRedirects: MAX_REDIRECTS,
      });
      const { status } = response;
      if (status === 304) {
        response.body.resume();
        return { kind: 'not_modified' };
      }
      if (status >= 200 && status < 300) {
        const buffer = await readBody(response.body, MAX_ANSWER_BYTES);
        try {
          return {
            kind: 'json',
            body: JSON.parse(buffer.toString('utf8')) as unknown,
            etag: parseEtag(response.headers),
          };
        } catch {
          return { kind: 'failed', reason: `the answer of ${hostOf(get.url)} is not JSON` };
        }
      }
      const message = withoutSecrets(await errorMessage(response.body), secretsOf(get.authorization));
      const until = parseRateLimit(status, response.headers, get.now, message);
      if (until) {
        return { kind: 'rate_limited', until };
      }
      if (status === 404) {
        return { kind: 'failed', reason: `${get.notFound} (404)` };
      }
      return {
        kind: 'failed',
        reason: `${hostOf(get.url)} answered ${status}${message === '' ? '' : `: ${message}`}`,
        retryAfter: parseRetryAfter(response.headers, get.now),
      };
    } catch (error) {
      if (error instanceof OutboundError) {
        return error.reason === 'timeout'
          ? { kind: 'failed', reason: error.message, timeout: true }
          : { kind: 'failed', reason: error.message };
      }
      throw error;
    }
  }

  /**
   * One request whose whole exchange (headers and body) is bounded by the upstream timeout; the
   * caller reads or drains the answer's body. Never rejects for upstream problems.
   */
  async call(call: UpstreamCall): Promise<UpstreamAnswer | UpstreamFault> {
    this.counter?.countUpstreamRequest(this.type);
    try {
      const response = await sendRequest(call.url, this.outbound(call, this.timeoutMs, call.signal));
      return { kind: 'answer', ...response };
    } catch (error) {
      return faultOf(error);
    }
  }

  /**
   * A request whose body is read as it comes (a log): the headers within the upstream timeout,
   * then no pause in the body longer than it (a long log may take longer as a whole). Its chunks
   * reject with a LogStreamError when the service goes silent, fails, or `call.signal` aborts.
   */
  async open(call: UpstreamCall): Promise<UpstreamStream | UpstreamFault> {
    this.counter?.countUpstreamRequest(this.type);
    const idle = new IdleDeadline(this.timeoutMs);
    const signal = call.signal ? AbortSignal.any([idle.signal, call.signal]) : idle.signal;
    let response: Awaited<ReturnType<typeof openStreamed>>;
    try {
      // Not sendRequest: a log of hundreds of MiB is read through one buffer, not one per chunk.
      response = await openStreamed(call.url, this.outbound(call, NO_TOTAL_LIMIT_MS, signal));
    } catch (error) {
      idle.stop();
      return idle.expired ? timeoutFault(call.url, this.timeoutMs) : faultOf(error);
    }
    idle.reset();
    const timeoutMs = this.timeoutMs;
    const done = (): void => {
      idle.stop();
      response.close();
    };
    async function* chunks(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of response.chunks) {
          idle.reset();
          yield chunk;
        }
      } catch (error) {
        if (call.signal?.aborted) {
          throw new LogStreamError('aborted', 'nobody waits for the log any more');
        }
        if (idle.expired) {
          throw new LogStreamError('timeout', `${hostOf(call.url)} sent nothing for ${timeoutMs / 1000} s`);
        }
        throw new LogStreamError(
          'refused',
          error instanceof OutboundError ? error.message : `${hostOf(call.url)} broke off the log`,
        );
      } finally {
        done();
      }
    }
    const { status, headers, url } = response;
    return { kind: 'answer', status, headers, url, chunks: chunks(), done };
  }

  /** The JSON body of an answer; undefined when it is not JSON (or too large to be an API's answer). */
  async json(answer: UpstreamAnswer): Promise<unknown> {
    try {
      return JSON.parse((await readBody(answer.body, MAX_ANSWER_BYTES)).toString('utf8')) as unknown;
    } catch {
      return undefined;
    }
  }

  /** Sends a call that starts a build: `triggered` (as `how`) on a 2xx, else its fault as a value. */
  async start(call: UpstreamCall, how: TriggerHow): Promise<TriggerResult> {
    const answer = await this.call(call);
    if (answer.kind !== 'answer') {
      return answer;
    }
    if (answer.status >= 200 && answer.status < 300) {
      answer.body.resume();
      return { kind: 'triggered', how };
    }
    return this.fault(answer, call);
  }

  /**
   * An error answer as a fault: a rate limit (`x-ratelimit-*`, `Retry-After`, a 429) pauses the
   * service; anything else is `refused` with the service's status and message, any credential of
   * the request taken out. Reads the (bounded) error body.
   */
  async fault(answer: UpstreamAnswer | UpstreamStream, call: UpstreamCall): Promise<UpstreamFault> {
    const body = 'chunks' in answer ? answer.chunks : answer.body;
    const message = withoutSecrets(await errorMessage(body), secretsOf(call.authorization));
    const reason = `${hostOf(call.url)} answered ${answer.status}${message === '' ? '' : `: ${message}`}`;
    const until = parseRateLimit(answer.status, answer.headers, call.now, message);
    return until
      ? { kind: 'rate_limited', until, reason }
      : { kind: 'refused', status: answer.status, reason };
  }

  private outbound(
    call: UpstreamCall,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Parameters<typeof sendRequest>[1] {
    const headers = { ...call.headers };
    let body: string | undefined;
    if (call.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(call.json);
    }
    return {
      method: call.method,
      headers,
      body,
      originOnlyHeaders: call.authorization === undefined ? undefined : { authorization: call.authorization },
      timeoutMs,
      allowPrivate: call.allowPrivate,
      maxRedirects: call.maxRedirects ?? MAX_REDIRECTS,
      signal,
    };
  }
}

/** An answer's media type as sent (a log without one is taken as plain text). */
export function contentTypeOf(headers: IncomingHttpHeaders): string {
  const type = headers['content-type'];
  return typeof type === 'string' && type.trim() !== '' ? type.trim() : 'text/plain';
}

/** A check's trouble (from getJson) as the fault of a trigger or a log read. */
export function faultOfTrouble(trouble: UpstreamTrouble): UpstreamFault {
  switch (trouble.kind) {
    case 'rate_limited':
      return {
        kind: 'rate_limited',
        until: trouble.until,
        reason: `the service is rate-limited until ${utcMinute(minuteUp(trouble.until))}`,
      };
    case 'failed':
      return trouble.timeout
        ? { kind: 'timeout', reason: trouble.reason }
        : { kind: 'refused', reason: trouble.reason };
    case 'not_modified':
      return { kind: 'refused', reason: 'the service answered 304 to a request without a validator' };
  }
}

/** A failed exchange as a fault: a timeout, or anything else that left no answer. */
function faultOf(error: unknown): UpstreamFault {
  if (!(error instanceof OutboundError)) {
    throw error;
  }
  return { kind: error.reason === 'timeout' ? 'timeout' : 'refused', reason: error.message };
}

function timeoutFault(url: string, timeoutMs: number): UpstreamFault {
  return { kind: 'timeout', reason: `${hostOf(url)} did not answer within ${timeoutMs / 1000} s` };
}

/**
 * One request of a trigger (`call`) or a log (`open`), and an error answer turned into a fault
 * (`fault`), for every client. Added to UpstreamHttp below.
 */
export interface UpstreamCalls {
  call(call: UpstreamCall): Promise<UpstreamAnswer | UpstreamFault>;
  open(call: UpstreamCall): Promise<UpstreamStream | UpstreamFault>;
  fault(answer: UpstreamAnswer | UpstreamStream, call: UpstreamCall): Promise<UpstreamFault>;
}

/**
 * What of an `Authorization` header must never be repeated: the header, its credential and, for
 * HTTP Basic, the decoded pair and password. A service may echo them in an error message, which
 * then becomes an instance's `last_check.error` or a reply's detail.
 */
export function secretsOf(authorization: string | undefined): string[] {
  if (authorization === undefined) {
    return [];
  }
  const credential = authorization.replace(/^\S+\s+/, '');
  const secrets = [authorization, credential];
  if (/^basic\s/i.test(authorization)) {
    const pair = Buffer.from(credential, 'base64').toString('utf8');
    secrets.push(pair, pair.slice(pair.indexOf(':') + 1));
  }
  // Very short values would blank ordinary words; tokens and passwords are longer.
  return secrets.filter((secret) => secret.length >= 6).sort((a, b) => b.length - a.length);
}

/** `text` with every occurrence of the secrets replaced by `[redacted]`. */
export function withoutSecrets(text: string, secrets: readonly string[]): string {
  return secrets.reduce((redacted, secret) => redacted.split(secret).join('[redacted]'), text);
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the service';
  }
}

/** The service's own words about an error (a `message` or `error_message` member), shortened. */
async function errorMessage(body: AsyncIterable<Buffer>): Promise<string> {
  let text: string;
  try {
    text = (await readBody(body, MAX_ERROR_BYTES)).toString('utf8');
  } catch {
    return '';
  }
  let message: unknown = text;
  try {
    const json: unknown = JSON.parse(text);
    if (isRecord(json)) {
      message = json.message ?? json.error_message ?? '';
    }
  } catch {
    // Some services and proxies answer HTML; only JSON messages are worth repeating.
    message = '';
  }
  return typeof message === 'string' ? message.replace(/\s+/g, ' ').trim().slice(0, 200) : '';
}

/**
 * The base of every HTTP client of a CI service: the class says what it is (type, crate term,
 * settings) and how it reads its service's answers; the outbound side (trust, credentials,
 * timeouts, counting) is built here once from the app's settings.
 */
@Injectable()
export abstract class HttpTestingService implements TestingService {
  abstract readonly type: string;
  abstract readonly settings: readonly CredentialKey[];
  protected readonly http: UpstreamHttp;

  constructor(
    protected readonly config: AppConfig,
    @Optional() metrics?: RefreshMetrics,
  ) {
    this.http = new UpstreamHttp(config, this, metrics);
  }

  /**
   * The crate term: by default the type capitalised plus `Service` (`drone` → `DroneService`); a
   * class whose term is spelled otherwise overrides this getter.
   */
  get crateTerm(): string {
    return `${this.type.charAt(0).toUpperCase()}${this.type.slice(1)}Service`;
  }

  abstract latestBuilds(request: BuildCheckRequest): Promise<BuildCheckResult>;

  /** Without an override the web page is not known. */
  resourcePage(_target: ResourceTarget): string | undefined {
    return undefined;
  }

  /** Without an override the service cannot start builds (a 409 for the caller). */
  triggerBuild(_request: TriggerRequest): Promise<TriggerResult> {
    return Promise.resolve(this.unavailable('start builds'));
  }

  /** Without an override the service serves no logs (a 409 for the caller). */
  buildLog(_request: BuildLogRequest): Promise<BuildLogResult> {
    return Promise.resolve(this.unavailable('serve build logs'));
  }

  /** Without an override the service tells nothing of what a build ran (the changes reply has nulls). */
  buildDetails(_request: BuildDetailsRequest): Promise<BuildDetailsResult> {
    return Promise.resolve(this.unavailable('tell what a build ran'));
  }

  /** Without an override the service cannot stop builds (a 409 for the caller). */
  cancelBuild(_request: CancelRequest): Promise<CancelResult> {
    return Promise.resolve(this.unavailable('cancel builds'));
  }

  protected unavailable(what: string): Unavailable {
    return { kind: 'unavailable', reason: `the ${this.type} service cannot ${what}` };
  }

  /**
   * A trigger is sent only with credentials configured for its service URL: without them, the
   * refusal names the URL and the setting that would give them.
   */
  protected noCredentials(serviceUrl: string, setting = 'TESTING_SERVICES_FILE'): Unavailable {
    return {
      kind: 'unavailable',
      reason:
        `no credentials for the ${this.type} service ${normalizeServiceUrl(serviceUrl)}: ` +
        `configure them in ${setting} to start builds there`,
    };
  }
}
