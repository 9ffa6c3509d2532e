import { FakeServer, type FakeAnswer, type FakeRequest } from './fake-server.js';

/** A workflow as the fake SEEK holds it: its crate archive per version. */
export interface SeekWorkflow {
  id: string;
  uuid: string;
  title: string;
  /** Version number (as SEEK numbers them) → the crate archive SEEK's `ro_crate` serves. */
  crates: Map<number, Buffer>;
  /** Readable without a token (SEEK's public download policy). */
  public: boolean;
}

/**
 * A SEEK installation (WorkflowHub) on 127.0.0.1, speaking the parts of SEEK's JSON:API that
 * LifeMonitor reads (crs4/life_monitor, lifemonitor/api/models/registries/seek.py):
 * `GET /workflows/{id}?format=json`, `GET /workflows?format=json`, and
 * `GET /workflows/{id}/ro_crate?version={v}`. A private workflow needs `Authorization: Token <t>`
 * with one of `personalTokens`; without it SEEK answers 403 as it does.
 */
export class SeekFake extends FakeServer {
  private readonly workflows = new Map<string, SeekWorkflow>();
  readonly personalTokens = new Set<string>();

  constructor() {
    super('SEEK');
  }

  add(workflow: SeekWorkflow): SeekWorkflow {
    this.workflows.set(workflow.id, workflow);
    return workflow;
  }

  protected route(request: FakeRequest): FakeAnswer {
    const [collection, id, sub] = request.segments;
    if (request.method !== 'GET' || collection !== 'workflows') {
      return { status: 404, body: { errors: [{ title: 'Not found' }] } };
    }
    const token = /^Token (\S+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
    const allowed = (workflow: SeekWorkflow): boolean =>
      workflow.public || (token !== undefined && this.personalTokens.has(token));
    if (id === undefined) {
      return {
        status: 200,
        body: { data: [...this.workflows.values()].filter(allowed).map((w) => this.resource(w)) },
      };
    }
    const workflow = this.workflows.get(id);
    if (!workflow) {
      return {
        status: 404,
        body: { errors: [{ title: 'Not found', detail: `Couldn't find Workflow with 'id'=${id}` }] },
      };
    }
    if (!allowed(workflow)) {
      return { status: 403, body: { errors: [{ title: 'Forbidden' }] } };
    }
    if (sub === 'ro_crate') {
      const crate = workflow.crates.get(Number(request.query.get('version') ?? NaN));
      return crate
        ? { status: 200, bytes: crate, headers: { 'content-type': 'application/zip' } }
        : { status: 404, body: { errors: [{ title: 'Not found' }] } };
    }
    return {
      status: 200,
      body: { data: this.resource(workflow), jsonapi: { version: '1.0' } },
      headers: { 'content-type': 'application/vnd.api+json; charset=utf-8' },
    };
  }

  /** A workflow resource as SEEK's JSON:API serialises it (the members LifeMonitor reads, and a few more). */
  private resource(workflow: SeekWorkflow): object {
    const versions = [...workflow.crates.keys()].sort((a, b) => a - b);
    return {
      id: workflow.id,
      type: 'workflows',
      attributes: {
        title: workflow.title,
        latest_version: versions.at(-1) ?? null,
        versions: versions.map((version) => ({
          version,
          revision_comments: null,
          url: `${this.url}/workflows/${workflow.id}?version=${version}`,
        })),
        workflow_class: { title: 'Galaxy', key: 'galaxy' },
      },
      relationships: { submitter: { data: [{ id: '2', type: 'people' }] } },
      links: { self: `/workflows/${workflow.id}` },
      meta: { uuid: workflow.uuid, api_version: '0.3', base_url: this.url },
    };
  }
}
