import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A web server on 127.0.0.1 that serves crate links the way the outside world does:
 * files, error statuses, redirect chains and loops, links that never answer or answer
 * slowly. Each route is switchable at any time, and every request it got is recorded.
 */
export type LinkRoute =
  /** Bytes with a status (default 200); `contentLength: false` sends them chunked, without Content-Length. */
  | {
      kind: 'bytes';
      body: Buffer | string;
      status?: number;
      contentLength?: boolean;
      headers?: Record<string, string>;
    }
  | { kind: 'file'; path: string; contentLength?: boolean }
  | { kind: 'status'; status: number; body?: string }
  | { kind: 'redirect'; location: string; status?: number }
  /** Accepts the connection and never answers. */
  | { kind: 'hang' }
  /** Sends the headers and the first bytes, then nothing more. */
  | { kind: 'stall'; first: Buffer | string; contentLength: number }
  /** Sends `chunk` every `intervalMs`, `count` times. */
  | { kind: 'trickle'; chunk: Buffer | string; intervalMs: number; count: number }
  /** Sends a real body (a valid crate, say) in `pieces` parts, one every `intervalMs`. */
  | { kind: 'slow'; body: Buffer; pieces: number; intervalMs: number }
  /** Promises `contentLength` bytes, sends `body`, then closes the connection. */
  | { kind: 'cut'; body: Buffer | string; contentLength: number };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

export class LinkServer {
  readonly requests: RecordedRequest[] = [];
  /** Paths of requests whose connection closed before the reply was complete (the service gave up). */
  readonly unfinished: string[] = [];
  private unfinishedWaiters: (() => void)[] = [];
  private readonly routes = new Map<string, LinkRoute>();
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly server: http.Server,
    readonly origin: string,
  ) {}

  static async start(): Promise<LinkServer> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const link = new LinkServer(server, `http://127.0.0.1:${port}`);
    server.on('request', (req, res) => link.handle(req, res));
    return link;
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  /** Sets what `path` answers and returns its URL. */
  route(path: string, route: LinkRoute): string {
    this.routes.set(path, route);
    return this.url(path);
  }

  /** `hops` redirects `<prefix>/1` → `<prefix>/2` → … → `target`; returns the first URL. */
  redirectChain(prefix: string, hops: number, target: string): string {
    for (let hop = 1; hop <= hops; hop++) {
      this.route(`${prefix}/${hop}`, {
        kind: 'redirect',
        location: hop === hops ? target : `${prefix}/${hop + 1}`,
      });
    }
    return this.url(`${prefix}/1`);
  }

  requestsTo(path: string): RecordedRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  reset(): void {
    this.routes.clear();
    this.requests.length = 0;
    this.unfinished.length = 0;
  }

  /** Resolves once a request to `path` has been left unfinished; a test's timeout bounds it. */
  async untilUnfinished(path: string): Promise<void> {
    while (!this.unfinished.includes(path)) {
      await new Promise<void>((resolve) => this.unfinishedWaiters.push(resolve));
    }
  }

  async close(): Promise<void> {
    for (const timer of this.timers) {
      clearInterval(timer);
    }
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Writes one piece every `intervalMs`, then ends the body. */
  private drip(
    res: ServerResponse,
    pieces: (Buffer | string)[],
    intervalMs: number,
    headers: Record<string, string>,
  ): void {
    res.writeHead(200, { 'content-type': 'application/zip', ...headers });
    let sent = 0;
    const timer = setInterval(() => {
      if (sent >= pieces.length || res.destroyed) {
        clearInterval(timer);
        this.timers.delete(timer);
        res.end();
        return;
      }
      res.write(pieces[sent]);
      sent += 1;
    }, intervalMs);
    this.timers.add(timer);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = req.url ?? '/';
    this.requests.push({ method: req.method ?? 'GET', path, headers: req.headers });
    res.once('close', () => {
      if (!res.writableFinished) {
        this.unfinished.push(path);
        this.unfinishedWaiters.splice(0).forEach((wake) => wake());
      }
    });
    const route = this.routes.get(path);
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    void this.answer(route, res).catch(() => res.destroy());
  }

  private async answer(route: LinkRoute, res: ServerResponse): Promise<void> {
    switch (route.kind) {
      case 'bytes': {
        const body = Buffer.from(route.body);
        const length = route.contentLength === false ? {} : { 'content-length': String(body.length) };
        res.writeHead(route.status ?? 200, {
          'content-type': 'application/zip',
          ...length,
          ...route.headers,
        });
        res.end(body);
        return;
      }
      case 'file': {
        const { size } = await stat(route.path);
        const length = route.contentLength === false ? {} : { 'content-length': String(size) };
        res.writeHead(200, { 'content-type': 'application/zip', ...length });
        createReadStream(route.path).pipe(res);
        return;
      }
      case 'status':
        res.writeHead(route.status, { 'content-type': 'text/plain' }).end(route.body ?? '');
        return;
      case 'redirect':
        res.writeHead(route.status ?? 302, { location: route.location }).end();
        return;
      case 'hang':
        return;
      case 'stall':
        res.writeHead(200, {
          'content-type': 'application/zip',
          'content-length': String(route.contentLength),
        });
        res.write(route.first);
        return;
      case 'trickle':
        this.drip(res, Array<Buffer | string>(route.count).fill(route.chunk), route.intervalMs, {});
        return;
      case 'slow': {
        const size = Math.ceil(route.body.length / route.pieces);
        const pieces = Array.from({ length: route.pieces }, (_, i) =>
          route.body.subarray(i * size, (i + 1) * size),
        );
        this.drip(res, pieces, route.intervalMs, { 'content-length': String(route.body.length) });
        return;
      }
      case 'cut':
        res.writeHead(200, {
          'content-type': 'application/zip',
          'content-length': String(route.contentLength),
        });
        res.write(route.body, () => res.destroy());
        return;
    }
  }
}
