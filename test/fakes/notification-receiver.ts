import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the receiver answers for now. */
export type ReceiverMode =
  /** 204 */
  | { kind: 'ok' }
  /** This status (e.g. 503, or 302 with a Location). */
  | { kind: 'status'; status: number; headers?: Record<string, string> }
  /** Reads the request and never answers: the sender's timeout has to fire. */
  | { kind: 'hang' };

/** One request as it arrived, and how it was answered. */
export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status answered; undefined when the receiver hung. */
  status?: number;
}

/**
 * A loopback HTTP receiver for webhook and Slack deliveries: records every request with its
 * headers and body, answers as its mode says (fail, hang, redirect, recover), and counts what it
 * accepted.
 */
export class NotificationReceiver {
  readonly requests: ReceivedRequest[] = [];
  mode: ReceiverMode = { kind: 'ok' };
  private server?: http.Server;
  private base = '';

  get url(): string {
    return this.base;
  }

  /** The requests answered 2xx: what was delivered. */
  get accepted(): ReceivedRequest[] {
    return this.requests.filter((request) => request.status !== undefined && request.status < 300);
  }

  async start(): Promise<this> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const received: ReceivedRequest = {
          path: req.url ?? '/',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        this.requests.push(received);
        const mode = this.mode;
        if (mode.kind === 'hang') {
          return;
        }
        received.status = mode.kind === 'ok' ? 204 : mode.status;
        res.writeHead(received.status, mode.kind === 'status' ? mode.headers : undefined);
        res.end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port: 0, host: '127.0.0.1' }, () => resolve());
    });
    this.server = server;
    this.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

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
}
