import { DomainError } from '../../common/errors/domain-error.js';
import { OutboundError, readBody, sendRequest } from '../../common/net/http-client.js';
import { isRecord } from '../../common/is-record.js';
import type {
  AssignRequest,
  Assignment,
  AssignmentFacility,
  ReleasedAssignment,
} from './assignment-facility.js';

/**
 * An external assignment facility at ASSIGNMENT_FACILITY_URL, spoken to with this small JSON protocol
 * (also in the README of the module and in Swagger):
 *
 * - `POST {url}/assignments` with `{"cloud", "node", "hostname", "user", "vm_type"}` → 201 (or 200)
 *   `{"id": <integer>, "assigned_at": "<ISO 8601>"?}`; 409 when the node has an active assignment.
 * - `DELETE {url}/assignments/{cloud}/{node}` → 200 `{"id": <integer>}` (or 204 with no body);
 *   404 when the node has no active assignment.
 * - `GET {url}/assignments?cloud={cloud}` → 200 `{"assignments": [{"id", "node", "hostname", "user",
 *   "vm_type", "assigned_at"}]}`, the active assignments of the cloud.
 *
 * Path segments are percent-encoded. Any other answer, a body that is not that JSON, an unreachable
 * facility or one slower than the upstream timeout is DomainError 'upstream_failed' (a 502 envelope).
 * The URL is operator configuration, so the private-address guard does not apply to it.
 */
export class HttpAssignmentFacility implements AssignmentFacility {
  constructor(
    private readonly baseUrl: string,
    private readonly options: { readonly timeoutMs: number; readonly now?: () => Date },
  ) {}

  async assign(request: AssignRequest): Promise<Assignment> {
    const what = `assigning node ${request.nodeId} of cloud '${request.cloud}'`;
    const reply = await this.send(what, 'POST', '/assignments', {
      cloud: request.cloud,
      node: request.nodeId,
      hostname: request.hostname,
      user: request.user,
      vm_type: request.vmType,
    });
    if (reply.status === 409) {
      throw new DomainError(
        'conflict',
        `Node ${request.nodeId} of cloud '${request.cloud}' is assigned already`,
      );
    }
    if (reply.status !== 201 && reply.status !== 200) {
      throw failed(what, `the facility answered ${reply.status}`);
    }
    const id = integerId(reply.body);
    if (id === undefined) {
      throw failed(what, 'the answer has no integer id');
    }
    return { ...request, id, assignedAt: dateOf(reply.body, 'assigned_at') ?? this.now() };
  }

  async release(cloud: string, nodeId: string): Promise<ReleasedAssignment> {
    const what = `releasing node ${nodeId} of cloud '${cloud}'`;
    const reply = await this.send(
      what,
      'DELETE',
      `/assignments/${encodeURIComponent(cloud)}/${encodeURIComponent(nodeId)}`,
    );
    if (reply.status === 404) {
      throw new DomainError('not_found', `Node ${nodeId} of cloud '${cloud}' is not assigned`);
    }
    if (reply.status !== 200 && reply.status !== 204) {
      throw failed(what, `the facility answered ${reply.status}`);
    }
    // A 204 carries no id; the contract's `id` is then 0, as in the emulated reply.
    const id = reply.status === 204 ? 0 : integerId(reply.body);
    if (id === undefined) {
      throw failed(what, 'the answer has no integer id');
    }
    return { id, cloud, nodeId };
  }

  async listActive(cloud: string): Promise<Assignment[]> {
    const what = `listing the assignments of cloud '${cloud}'`;
    const reply = await this.send(what, 'GET', `/assignments?cloud=${encodeURIComponent(cloud)}`);
    if (reply.status !== 200) {
      throw failed(what, `the facility answered ${reply.status}`);
    }
    const list = isRecord(reply.body) ? reply.body.assignments : undefined;
    if (!Array.isArray(list)) {
      throw failed(what, "the answer has no 'assignments' list");
    }
    return list.map((entry: unknown) => {
      const id = integerId(entry);
      if (id === undefined || !isRecord(entry)) {
        throw failed(what, 'an assignment has no integer id');
      }
      const text = (key: string): string => {
        const value = entry[key];
        return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
      };
      return {
        id,
        cloud,
        nodeId: text('node'),
        hostname: text('hostname'),
        user: text('user'),
        vmType: text('vm_type'),
        assignedAt: dateOf(entry, 'assigned_at') ?? new Date(0),
      };
    });
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  private async send(
    what: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: unknown }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
    }
    try {
      const response = await sendRequest(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        timeoutMs: this.options.timeoutMs,
        allowPrivate: true,
      });
      const raw = await readBody(response.body, MAX_BODY_BYTES);
      return { status: response.status, body: parseJson(raw) };
    } catch (error) {
      if (error instanceof OutboundError) {
        throw failed(what, error.message);
      }
      throw error;
    }
  }
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;

function failed(what: string, detail: string): DomainError {
  return new DomainError('upstream_failed', `Assignment facility: ${what} failed: ${detail}`);
}

function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) {
    return undefined;
  }
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function integerId(body: unknown): number | undefined {
  const id = isRecord(body) ? body.id : undefined;
  const value = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : id;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

function dateOf(body: unknown, key: string): Date | undefined {
  const value = isRecord(body) ? body[key] : undefined;
  const parsed = typeof value === 'string' ? new Date(value) : undefined;
  return parsed && !Number.isNaN(parsed.getTime()) ? parsed : undefined;
}
