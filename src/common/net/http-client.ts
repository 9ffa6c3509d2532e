import http, {
  validateHeaderName,
  validateHeaderValue,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
import https from 'node:https';
import net, { isIP } from 'node:net';
import tls from 'node:tls';
import { guardedLookup, isPublicAddress, PrivateAddressError } from './address-guard.js';
import { MalformedResponse, ResponseReader } from './response-reader.js';

export type OutboundFailure =
  | 'private_address'
  | 'timeout'
  | 'unreachable'
  | 'too_many_redirects'
  | 'bad_redirect'
  | 'too_large'
  | 'bad_url';

/** Why an outbound call failed, in terms a service can turn into its own domain error. */
export class OutboundError extends Error {
  constructor(
    readonly reason: OutboundFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'OutboundError';
  }
}

export interface OutboundRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Bounds the whole exchange: connection, headers and reading the body. */
  timeoutMs: number;
  /** When false, hosts that resolve to loopback/private/link-local addresses are refused, on every hop. */
  allowPrivate: boolean;
  /**
   * Origins (`http://10.0.0.5:8080`) reached on a private address all the same: the operator's
   * configured services. Checked on every hop, so a redirect from one to anywhere else (a private
   * neighbour on another port, say) still passes the guard.
   */
  trustedOrigins?: readonly string[];
  /** Redirects to follow; one more is a `too_many_redirects` failure. Default 0 (redirects are returned). */
  maxRedirects?: number;
  /** Headers sent only to the first URL's origin (dropped after a cross-origin redirect). */
  originOnlyHeaders?: Record<string, string>;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The URL that finally answered, after redirects. */
  url: string;
  /** The body stream; it errors with OutboundError('timeout') when the deadline passes. */
  body: IncomingMessage;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = 'workflow-infra-service/0.1 (+https://github.com/)';

/** The request's deadline, and the caller's own abort when it gave one. */
function signalOf(request: OutboundRequest): AbortSignal {
  const deadline = AbortSignal.timeout(request.timeoutMs);
  return request.signal ? AbortSignal.any([deadline, request.signal]) : deadline;
}

/**
 * The headers of each hop of a request to `url`: the caller's, and its origin-only ones (a
 * credential) only while a redirect stays on the first URL's origin.
 */
function hopHeaders(request: OutboundRequest, url: string): (current: string) => Record<string, string> {
  const firstOrigin = originOf(url);
  return (current) => {
    const headers = { 'user-agent': USER_AGENT, ...request.headers };
    if (request.originOnlyHeaders && originOf(current) === firstOrigin) {
      Object.assign(headers, request.originOnlyHeaders);
    }
    return headers;
  };
}

/** Whether a hop to `url` may reach a private address: the request allows it, or the origin is trusted. */
function privateAllowed(request: OutboundRequest, url: string): boolean {
  return request.allowPrivate || (request.trustedOrigins?.includes(originOf(url)) ?? false);
}

/** Sends one request, following redirects as asked, with a deadline and the private-address guard. */
export async function sendRequest(url: string, request: OutboundRequest): Promise<OutboundResponse> {
  const signal = signalOf(request);
  const headersFor = hopHeaders(request, url);
  let current = url;
  let method = request.method ?? 'GET';
  let body = request.body;
  const maxRedirects = request.maxRedirects ?? 0;
  for (let hop = 0; ; hop++) {
    const headers = headersFor(current);
    const response = await exchange(
      current,
      method,
      headers,
      body,
      privateAllowed(request, current),
      signal,
      request.timeoutMs,
    );
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (!REDIRECTS.has(status) || maxRedirects === 0 || location === undefined) {
      return { status, headers: response.headers, url: current, body: response };
    }
    response.resume();
    if (hop >= maxRedirects) {
      throw new OutboundError('too_many_redirects', `more than ${maxRedirects} redirects`);
    }
    if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
    }
    current = redirectTarget(location, current);
  }
}

/** Where a redirect leads: an absolute http(s) URL, else a `bad_redirect` failure. */
function redirectTarget(location: string, current: string): string {
  let next: URL;
  try {
    next = new URL(location, current);
  } catch {
    throw new OutboundError('bad_redirect', `a redirect to an invalid location (${location.slice(0, 200)})`);
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:') {
    throw new OutboundError('bad_redirect', `a redirect to a non-http(s) location (${next.protocol})`);
  }
  return next.toString();
}

/** A GET answered, its body still to be read (see `openStreamed`). */
export interface StreamedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The URL that finally answered, after redirects. */
  url: string;
  /**
   * The body as it comes. Each chunk is a view of one buffer that the next chunk reuses: copy
   * what is kept before asking for the next. Rejects with an OutboundError when the exchange fails.
   */
  chunks: AsyncIterable<Buffer>;
  /** Ends the exchange (a body not read, or read in part). */
  close(): void;
}

/** What a socket reads into, and what the body waits in for its reader: both allocated once per exchange. */
const READ_BUFFER_BYTES = 64 * 1024;
const STAGE_BYTES = 256 * 1024;

/**
 * One GET whose body is read without allocating per chunk (a long log): the socket reads into
 * one fixed buffer (`onread`), ResponseReader frames the answer, and the body waits in a second
 * fixed buffer until its reader takes it; reading pauses while that buffer is half full. Same
 * redirects, private-address guard, origin-only headers and deadline (headers and body) as
 * `sendRequest`, whose outcomes it shares.
 */
export async function openStreamed(url: string, request: OutboundRequest): Promise<StreamedResponse> {
  if ((request.method ?? 'GET') !== 'GET' || request.body !== undefined) {
    throw new TypeError('openStreamed sends GETs only');
  }
  const signal = signalOf(request);
  const headersFor = hopHeaders(request, url);
  const maxRedirects = request.maxRedirects ?? 0;
  let current = url;
  for (let hop = 0; ; hop++) {
    const headers = headersFor(current);
    const response = await streamedExchange(
      current,
      headers,
      privateAllowed(request, current),
      signal,
      request.timeoutMs,
    );
    const location = response.headers.location;
    if (!REDIRECTS.has(response.status) || maxRedirects === 0 || location === undefined) {
      return response;
    }
    response.close();
    if (hop >= maxRedirects) {
      throw new OutboundError('too_many_redirects', `more than ${maxRedirects} redirects`);
    }
    current = redirectTarget(location, current);
  }
}

/**
 * The URL to send to, or why not: only http(s), and an IP literal only if public (unless
 * `allowPrivate`). Node skips `lookup` for IP literals, so those are checked here; names are
 * checked by the guarded lookup when they resolve.
 */
function sendableTarget(url: string, allowPrivate: boolean): { target: URL; host: string } | OutboundError {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return new OutboundError('bad_url', `not an http(s) URL: ${target.protocol}`);
  }
  const literal = target.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(literal) !== 0 && !isPublicAddress(literal)) {
    return new OutboundError('private_address', `${literal} is a private or reserved address`);
  }
  return { target, host: literal };
}

function streamedExchange(
  url: string,
  headers: Record<string, string>,
  allowPrivate: boolean,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<StreamedResponse> {
  const sendable = sendableTarget(url, allowPrivate);
  if (sendable instanceof OutboundError) {
    return Promise.reject(sendable);
  }
  const { target, host } = sendable;
  const failure = (error: unknown): OutboundError => toOutboundError(error, signal, timeoutMs, target.host);
  if (signal.aborted) {
    return Promise.reject(failure(signal.reason));
  }
  let head = `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    validateHeaderName(name);
    validateHeaderValue(name, value);
    head += `${name}: ${value}\r\n`;
  }
  head += 'Connection: close\r\n\r\n';

  const reader = new ResponseReader();
  let stage = Buffer.allocUnsafe(STAGE_BYTES);
  let staged = 0;
  let ended = false;
  let failed: OutboundError | undefined;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  const keep = (body: Buffer): void => {
    if (staged + body.length > stage.length) {
      // Only a TLS socket reads on after a pause (its decrypted records): make room once.
      const larger = Buffer.allocUnsafe(Math.max(stage.length * 2, staged + body.length));
      stage.copy(larger, 0, 0, staged);
      stage = larger;
    }
    body.copy(stage, staged);
    staged += body.length;
  };
  let answered: ((response: StreamedResponse) => void) | undefined;
  let refused: ((error: OutboundError) => void) | undefined;
  const fail = (error: unknown): void => {
    failed ??=
      error instanceof MalformedResponse
        ? new OutboundError('unreachable', `${target.host} answered badly: ${error.message}`)
        : failure(error);
    close();
    refused?.(failed);
    notify();
  };
  const onread = {
    buffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
    callback: (length: number, buffer: Buffer): boolean => {
      try {
        if (reader.feed(buffer.subarray(0, length), keep)) {
          answer();
        }
      } catch (error) {
        fail(error);
        return false;
      }
      if (reader.complete) {
        ended = true;
        socket.destroy();
      }
      notify();
      return staged < stage.length / 2;
    },
  };
  const options = {
    host,
    port: Number(target.port) || (target.protocol === 'https:' ? 443 : 80),
    lookup: allowPrivate ? undefined : guardedLookup,
    onread,
  };
  const socket =
    target.protocol === 'https:'
      ? tls.connect({
          ...options,
          servername: isIP(host) === 0 ? host : undefined,
          ALPNProtocols: ['http/1.1'],
        })
      : net.connect(options);
  const close = (): void => {
    signal.removeEventListener('abort', onAbort);
    socket.destroy();
  };
  const onAbort = (): void => fail(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  socket.once(target.protocol === 'https:' ? 'secureConnect' : 'connect', () => socket.write(head));
  // `on`, not `once`: a second error after the first must not go unhandled.
  socket.on('error', fail);
  socket.once('end', () => {
    try {
      reader.end();
      ended = true;
      answer();
      notify();
    } catch (error) {
      fail(error);
    }
  });
  socket.once('close', () => {
    if (!ended && !failed) {
      fail(new MalformedResponse('the connection closed before the end of the answer'));
    }
  });

  async function* chunks(): AsyncGenerator<Buffer> {
    try {
      for (;;) {
        if (staged > 0) {
          const taken = staged;
          yield stage.subarray(0, taken);
          // The reader is done with the view: what came meanwhile moves to the front.
          stage.copyWithin(0, taken, staged);
          staged -= taken;
          continue;
        }
        if (failed) {
          throw failed;
        }
        if (ended) {
          return;
        }
        const woken = new Promise<void>((resolve) => (wake = resolve));
        // Reading stops while the stage is half full (onread's callback returned false).
        socket.resume();
        await woken;
      }
    } finally {
      close();
    }
  }

  function answer(): void {
    const parsed = reader.response;
    if (!parsed || !answered) {
      return;
    }
    const resolve = answered;
    answered = undefined;
    refused = undefined;
    resolve({ ...parsed, url, chunks: chunks(), close });
  }

  return new Promise<StreamedResponse>((resolve, reject) => {
    answered = resolve;
    refused = reject;
  });
}

/**
 * Reads a whole body (copying each chunk: a streamed body reuses its buffer), failing with
 * `too_large` past `maxBytes`.
 */
export async function readBody(
  body: IncomingMessage | AsyncIterable<Buffer>,
  maxBytes: number,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > maxBytes) {
      if ('destroy' in body) {
        body.destroy();
      }
      // Leaving the loop ends a streamed body's exchange.
      throw new OutboundError('too_large', `the answer is larger than ${maxBytes} bytes`);
    }
    chunks.push('destroy' in body ? buffer : Buffer.from(buffer));
  }
  return Buffer.concat(chunks);
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    throw new OutboundError('bad_url', `not a valid URL: ${url.slice(0, 200)}`);
  }
}

function exchange(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
  allowPrivate: boolean,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<IncomingMessage> {
  const sendable = sendableTarget(url, allowPrivate);
  if (sendable instanceof OutboundError) {
    return Promise.reject(sendable);
  }
  const { target } = sendable;
  const transport = target.protocol === 'https:' ? https : http;
  return new Promise<IncomingMessage>((resolve, reject) => {
    const failure = (error: unknown): OutboundError => toOutboundError(error, signal, timeoutMs, target.host);
    if (signal.aborted) {
      reject(failure(signal.reason));
      return;
    }
    const req = transport.request(
      target,
      {
        method,
        headers:
          body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: allowPrivate ? undefined : guardedLookup,
        signal,
      },
      (res) => {
        const onAbort = (): void => {
          res.destroy(failure(signal.reason));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        res.once('close', () => signal.removeEventListener('abort', onAbort));
        resolve(res);
      },
    );
    req.once('error', (error) => reject(failure(error)));
    req.end(body);
  });
}

function toOutboundError(
  error: unknown,
  signal: AbortSignal,
  timeoutMs: number,
  host: string,
): OutboundError {
  if (error instanceof OutboundError) {
    return error;
  }
  if (error instanceof PrivateAddressError) {
    // The refused address stays in the cause, for logs; the message does not name it.
    return new OutboundError('private_address', error.message, { cause: error });
  }
  if (signal.aborted) {
    // Compared by name: an abort reason may come from another realm (a VM context), where instanceof fails.
    const reason = signal.reason as { name?: unknown } | undefined;
    if (reason?.name === 'TimeoutError') {
      return new OutboundError('timeout', `${host} did not answer within ${Math.round(timeoutMs / 1000)} s`);
    }
    return new OutboundError('unreachable', `the request to ${host} was cancelled`);
  }
  const code = (error as NodeJS.ErrnoException).code;
  return new OutboundError('unreachable', `${host} is unreachable${code ? ` (${code})` : ''}`);
}
