import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A loopback external assignment facility speaking the protocol of HttpAssignmentFacility:
 * `POST /assignments` (201 `{id, assigned_at}`, 409 when assigned), `DELETE /assignments/{cloud}/{node}`
 * (200 `{id}`, 404 when not assigned), `GET /assignments?cloud=` (200 `{assignments: [...]}`).
 * It records every request and can be made to fail: `status` answers that status with an HTML page,
 * `garbage` answers 201/200 with a body that is not JSON, `hang` never answers, `down` resets connections.
 */
export type FacilityFailure = 'status' | 'garbage' | 'hang' | 'down';

export interface FacilityRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly body: unknown;
}

export interface FacilityAssignment {
  id: number;
  cloud: string;
  node: string;
  hostname: string;
  user: string;
  vm_type: string;
  assigned_at: string;
  active: boolean;
}

export class AssignmentFacilityFake {
  readonly requests: FacilityRequest[] = [];
  readonly assignments: FacilityAssignment[] = [];
  private failure?: { mode: FacilityFailure; status: number };
  private nextId = 100;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<AssignmentFacilityFake> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const fake = new AssignmentFacilityFake(server, `http://127.0.0.1:${port}`);
    server.on('connection', (socket: Socket) => {
      if (fake.failure?.mode === 'down') {
        socket.destroy();
      }
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      fake.handle(req, res).catch((error: unknown) => send(res, 500, { message: String(error) }));
    });
    return fake;
  }

  fail(mode: FacilityFailure, status = 500): void {
    this.failure = { mode, status };
  }

  recover(): void {
    this.failure = undefined;
  }

  active(): FacilityAssignment[] {
    return this.assignments.filter((assignment) => assignment.active);
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) {
      chunks.push(chunk as Buffer);
    }
    const raw = Buffer.concat(chunks).toString('utf8');
    const body: unknown = raw === '' ? undefined : JSON.parse(raw);
    this.requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', body });
    switch (this.failure?.mode) {
      case 'down':
        req.socket.destroy();
        return;
      case 'hang':
        return;
      case 'status':
        res.writeHead(this.failure.status, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>');
        return;
      case 'garbage':
        res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'text/plain' }).end('not json');
        return;
      case undefined:
        break;
    }
    const url = new URL(req.url ?? '/', this.url);
    const segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    if (segments[0] !== 'assignments') {
      send(res, 404, { message: 'no such route' });
      return;
    }
    if (req.method === 'POST' && segments.length === 1) {
      const request = body as Record<string, string>;
      if (this.active().some((a) => a.cloud === request.cloud && a.node === request.node)) {
        send(res, 409, { message: 'assigned already' });
        return;
      }
      const assignment: FacilityAssignment = {
        id: this.nextId++,
        cloud: request.cloud,
        node: request.node,
        hostname: request.hostname,
        user: request.user,
        vm_type: request.vm_type,
        assigned_at: new Date().toISOString(),
        active: true,
      };
      this.assignments.push(assignment);
      send(res, 201, { id: assignment.id, assigned_at: assignment.assigned_at });
      return;
    }
    if (req.method === 'DELETE' && segments.length === 3) {
      const found = this.active().find((a) => a.cloud === segments[1] && a.node === segments[2]);
      if (!found) {
        send(res, 404, { message: 'not assigned' });
        return;
      }
      found.active = false;
      send(res, 200, { id: found.id });
      return;
    }
    if (req.method === 'GET' && segments.length === 1) {
      const cloud = url.searchParams.get('cloud');
      send(res, 200, {
        assignments: this.active()
          .filter((a) => a.cloud === cloud)
          .map(({ active: _active, ...rest }) => rest),
      });
      return;
    }
    send(res, 405, { message: 'method not allowed' });
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (!res.headersSent) {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }
}
