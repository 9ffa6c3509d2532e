import { createHash } from 'node:crypto';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';

/**
 * The shared base of the CI fakes (GitHub, Travis, Jenkins): a real HTTP server on 127.0.0.1
 * with a request log, per-path counters, artificial latency, switchable failures and rate
 * limits, and ETag/`If-None-Match` support. Subclasses only route requests to JSON answers.
 */

/** How a request that matches a failure rule is answered instead of normally. */
export type FailureMode =
  /** Answers this status (JSON body `{message}` unless `body` is given). */
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  /** Never answers: the client's timeout has to fire. */
  | { kind: 'hang' }
  /** Sends the headers and part of the body, then nothing more. */
  | { kind: 'stall' }
  /** Answers normally after `ms` more. */
  | { kind: 'delay'; ms: number }
  /** Closes the connection without an answer. */
  | { kind: 'reset' };

/** Rate limiting as GitHub does it (403/429 + `x-ratelimit-*`) or with `Retry-After` only. */
export interface RateLimitMode {
  /** Default 403, GitHub's status for an exhausted primary limit. */
  status?: number;
  /** Sent as `x-ratelimit-remaining: 0` and `x-ratelimit-reset: <epoch seconds>`. */
  resetAt?: Date;
  /** Sent as `Retry-After: <seconds>`. */
  retryAfterSeconds?: number;
  /** The prefix of the limit's headers: GitHub's `x-ratelimit` (default), or `ratelimit` (GitLab's). */
  headerPrefix?: 'x-ratelimit' | 'ratelimit';
}

export interface FakeAnswer {
  status: number;
  /** Serialised as JSON. */
  body?: unknown;
  /** A body serialised already (large answers are cached this way; HTML pages need a content-type header). */
  text?: string;
  /**
   * A body made as it is read (a large log), piped with back-pressure and without an ETag;
   * `headers` should give its content type.
   */
  stream?: () => Readable;
  /** A binary body (an archive), sent as it is; give its content-type in `headers`. */
  bytes?: Buffer;
  headers?: Record<string, string>;
}

export interface RecordedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  /** The path without the query, still percent-encoded. */
  path: string;
  headers: IncomingHttpHeaders;
  /** When it arrived (ms since the epoch). */
  at: number;
  /** The request body as text (the fakes read at most 1 MiB of it). */
  body: string;
  /** Arrival order across every fake of the process: orders requests to two fakes without a clock. */
  seq: number;
}

let arrivals = 0;

/** A route's view of a request: the decoded path segments and the query. */
export interface FakeRequest {
  method: string;
  segments: string[];
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The request body as text. */
  body: string;
}

/** Request bodies the fakes keep: a trigger's JSON is tiny. */
const MAX_REQUEST_BODY = 1024 * 1024;

interface FailureRule {
  match?: string | RegExp;
  mode: FailureMode;
}

export abstract class FakeServer {
  /** Added before every answer, e.g. 20 to look like a real service to a benchmark. */
  latencyMs = 0;
  /** Answers 200s with an ETag and honours `If-None-Match` with a 304. */
  etags = true;
  /** When set, requests without exactly this `Authorization` header get a 401. */
  requiredAuthorization?: string;
  /** Requests kept in `requests` (oldest dropped first); 0 keeps none, for benchmarks. */
  recordLimit = 1000;
  readonly requests: RecordedRequest[] = [];
  /** Every request received, also those answered 304 or failed. */
  totalRequests = 0;
  /** Requests answered 304. */
  notModifiedCount = 0;
  /** Requests being answered right now, and the most there ever were at once. */
  inFlight = 0;
  peakInFlight = 0;
  /** Paths of requests whose connection closed before the reply was complete (a client that gave up). */
  readonly unfinished: string[] = [];
  private unfinishedWaiters: (() => void)[] = [];

  private readonly counts = new Map<string, number>();
  private failures: FailureRule[] = [];
  private rateLimit?: RateLimitMode;
  private server?: http.Server;
  private base = '';

  constructor(protected readonly serviceName: string) {}

  /** The base URL (`http://127.0.0.1:<port>`); set by `start`. */
  get url(): string {
    if (this.base === '') {
      throw new Error(`${this.serviceName} fake is not started`);
    }
    return this.base;
  }

  async start(): Promise<string> {
    const server = http.createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'application/json' });
        }
        res.end(JSON.stringify({ message: `fake failure: ${String(error)}` }));
      });
    });
    // Benchmarks open many keep-alive connections; the defaults would drop idle ones mid-run.
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => resolve());
    });
    this.server = server;
    this.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this.base;
  }

  /** Stops listening and drops every connection, hanging answers included. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) {
      return;
    }
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  /**
   * Makes matching requests fail: `match` is a substring of the raw path or a RegExp on it;
   * without it every request fails. Newer rules win over older ones.
   */
  fail(mode: FailureMode, match?: string | RegExp): void {
    this.failures.unshift({ match, mode });
  }

  /** Rate-limits every request until `heal()` (or `clearRateLimit()`). */
  limitRate(mode: RateLimitMode = {}): void {
    this.rateLimit = mode;
  }

  clearRateLimit(): void {
    this.rateLimit = undefined;
  }

  /** Clears failures and rate limits; the data stays. */
  heal(): void {
    this.failures = [];
    this.rateLimit = undefined;
  }

  /** Requests received for a raw path (percent-encoded as sent, without the query). */
  count(path: string): number {
    return this.counts.get(path) ?? 0;
  }

  /** Requests received for the raw paths matching `pattern`; counted also when the log keeps none. */
  countMatching(pattern: RegExp): number {
    let total = 0;
    for (const [path, count] of this.counts) {
      if (pattern.test(path)) {
        total += count;
      }
    }
    return total;
  }

  /** When each path matching `pattern` was requested, from the log (raise `recordLimit` to keep them all). */
  arrivals(pattern: RegExp): Map<string, number[]> {
    const byPath = new Map<string, number[]>();
    for (const request of this.requests) {
      if (pattern.test(request.path)) {
        byPath.set(request.path, [...(byPath.get(request.path) ?? []), request.at]);
      }
    }
    return byPath;
  }

  /** Resolves once `count` requests have been left unfinished (see `unfinished`); a test's timeout bounds it. */
  async untilUnfinished(count: number): Promise<void> {
    while (this.unfinished.length < count) {
      await new Promise<void>((resolve) => this.unfinishedWaiters.push(resolve));
    }
  }

  /** Clears the log and the counters. */
  resetLog(): void {
    this.unfinished.length = 0;
    this.requests.length = 0;
    this.counts.clear();
    this.totalRequests = 0;
    this.notModifiedCount = 0;
    this.peakInFlight = this.inFlight;
  }

  /** The answer to a request that passed the failure, rate-limit and auth checks. */
  protected abstract route(request: FakeRequest): FakeAnswer;

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawUrl = req.url ?? '/';
    const queryAt = rawUrl.indexOf('?');
    const path = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
    this.totalRequests++;
    this.counts.set(path, (this.counts.get(path) ?? 0) + 1);
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      url: rawUrl,
      path,
      headers: req.headers,
      at: Date.now(),
      seq: ++arrivals,
      body: '',
    };
    if (this.recordLimit > 0) {
      if (this.requests.length >= this.recordLimit) {
        this.requests.shift();
      }
      this.requests.push(recorded);
    }
    this.inFlight++;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    res.once('close', () => {
      this.inFlight--;
      if (!res.writableFinished) {
        this.unfinished.push(path);
        this.unfinishedWaiters.splice(0).forEach((wake) => wake());
      }
    });
    recorded.body = await readRequestBody(req);
    if (this.latencyMs > 0) {
      await delay(this.latencyMs);
    }

    const failure = this.failures.find((rule) => matches(rule.match, path))?.mode;
    if (failure) {
      switch (failure.kind) {
        case 'hang':
          return;
        case 'reset':
          req.socket.destroy();
          return;
        case 'stall':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write('{"partial": ');
          return;
        case 'status':
          this.send(res, failure.status, failure.body ?? { message: `${this.serviceName} fake failure` }, {
            ...failure.headers,
          });
          return;
        case 'delay':
          await delay(failure.ms);
          break;
      }
    }
    if (this.rateLimit) {
      const headers: Record<string, string> = {};
      if (this.rateLimit.resetAt) {
        const prefix = this.rateLimit.headerPrefix ?? 'x-ratelimit';
        headers[`${prefix}-limit`] = '5000';
        headers[`${prefix}-remaining`] = '0';
        headers[`${prefix}-reset`] = String(Math.ceil(this.rateLimit.resetAt.getTime() / 1000));
      }
      if (this.rateLimit.retryAfterSeconds !== undefined) {
        headers['retry-after'] = String(this.rateLimit.retryAfterSeconds);
      }
      this.send(res, this.rateLimit.status ?? 403, { message: 'API rate limit exceeded' }, headers);
      return;
    }
    if (
      this.requiredAuthorization !== undefined &&
      req.headers.authorization !== this.requiredAuthorization
    ) {
      this.send(res, 401, { message: 'Bad credentials' }, {});
      return;
    }

    const query = new URLSearchParams(queryAt === -1 ? '' : rawUrl.slice(queryAt + 1));
    let segments: string[];
    try {
      segments = path
        .split('/')
        .filter((segment) => segment !== '')
        .map((segment) => decodeURIComponent(segment));
    } catch {
      this.send(res, 400, { message: 'bad path encoding' }, {});
      return;
    }
    const answer = this.route({
      method: req.method ?? 'GET',
      segments,
      query,
      headers: req.headers,
      body: recorded.body,
    });
    if (answer.stream) {
      res.writeHead(answer.status, { ...answer.headers });
      const body = answer.stream();
      // A client that goes away ends the reading too, as a real server's would.
      res.once('close', () => body.destroy());
      body.pipe(res);
      return;
    }
    const text = answer.bytes ?? answer.text ?? JSON.stringify(answer.body ?? null);
    const headers: Record<string, string> = { ...answer.headers };
    if (this.etags && answer.status === 200) {
      const etag = `W/"${createHash('sha1').update(text).digest('hex')}"`;
      headers.etag = etag;
      if (ifNoneMatch(req.headers['if-none-match'], etag)) {
        this.notModifiedCount++;
        res.writeHead(304, headers);
        res.end();
        return;
      }
    }
    this.sendText(res, answer.status, text, headers);
  }

  private send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
    this.sendText(res, status, JSON.stringify(body), headers);
  }

  private sendText(
    res: ServerResponse,
    status: number,
    text: string | Buffer,
    headers: Record<string, string>,
  ): void {
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(text)),
      ...headers,
    });
    res.end(text);
  }
}

/** The body as text, at most MAX_REQUEST_BODY bytes of it (the rest is read and dropped). */
async function readRequestBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    if (size < MAX_REQUEST_BODY) {
      chunks.push(buffer);
    }
    size += buffer.length;
  }
  return Buffer.concat(chunks).subarray(0, MAX_REQUEST_BODY).toString('utf8');
}

function matches(match: string | RegExp | undefined, path: string): boolean {
  if (match === undefined) {
    return true;
  }
  return typeof match === 'string' ? path.includes(match) : match.test(path);
}

/** Weak comparison, as servers do for GET: `W/` prefixes are ignored, `*` matches anything. */
function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) {
    return false;
  }
  const bare = etag.replace(/^W\//, '');
  return header
    .split(',')
    .map((value) => value.trim())
    .some((value) => value === '*' || value.replace(/^W\//, '') === bare);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
