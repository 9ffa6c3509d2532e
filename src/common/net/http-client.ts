import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isPublicAddress, PrivateAddressError } from './address-guard.js';

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

/** Sends one request, following redirects as asked, with a deadline and the private-address guard. */
export async function sendRequest(url: string, request: OutboundRequest): Promise<OutboundResponse> {
  const deadline = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal ? AbortSignal.any([deadline, request.signal]) : deadline;
  const firstOrigin = originOf(url);
  let current = url;
  let method = request.method ?? 'GET';
  let body = request.body;
  const maxRedirects = request.maxRedirects ?? 0;
  for (let hop = 0; ; hop++) {
    const headers = { 'user-agent': USER_AGENT, ...request.headers };
    if (request.originOnlyHeaders && originOf(current) === firstOrigin) {
      Object.assign(headers, request.originOnlyHeaders);
    }
    const response = await exchange(
      current,
      method,
      headers,
      body,
      request.allowPrivate,
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
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      throw new OutboundError(
        'bad_redirect',
        `a redirect to an invalid location (${location.slice(0, 200)})`,
      );
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw new OutboundError('bad_redirect', `a redirect to a non-http(s) location (${next.protocol})`);
    }
    if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
    }
    current = next.toString();
  }
}

/** Reads a whole body, failing with `too_large` past `maxBytes`. */
export async function readBody(body: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > maxBytes) {
      body.destroy();
      throw new OutboundError('too_large', `the answer is larger than ${maxBytes} bytes`);
    }
    chunks.push(buffer);
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
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return Promise.reject(new OutboundError('bad_url', `not an http(s) URL: ${target.protocol}`));
  }
  const literal = target.hostname.replace(/^\[|\]$/g, '');
  // Node skips `lookup` for IP literals, so those are checked here.
  if (!allowPrivate && isIP(literal) !== 0 && !isPublicAddress(literal)) {
    return Promise.reject(
      new OutboundError('private_address', `${literal} is a private or reserved address`),
    );
  }
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
