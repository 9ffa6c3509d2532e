import { FakeServer, type FakeAnswer, type FakeRequest } from './fake-server.js';
import { OAuthCodes } from './oauth-codes.js';

/** A person of the SEEK installation, as `/people/current` shows them. */
export interface SeekPerson {
  id: string;
  title: string;
  first_name: string;
  last_name: string;
}

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
  /**
   * SEEK as an OAuth2 provider (its Doorkeeper set-up, seek4science/seek
   * `config/initializers/doorkeeper.rb`: the code flow, PKCE, scopes `read`/`write`): the person
   * signed in at the installation's pages, the OAuth applications registered there.
   */
  signedIn?: SeekPerson;
  readonly oauthApplications = new Map<string, string>();
  private readonly codes = new OAuthCodes<SeekPerson>();

  constructor() {
    super('SEEK');
  }

  add(workflow: SeekWorkflow): SeekWorkflow {
    this.workflows.set(workflow.id, workflow);
    return workflow;
  }

  protected route(request: FakeRequest): FakeAnswer {
    const oauth = this.oauthRoute(request);
    if (oauth) {
      return oauth;
    }
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

  /**
   * Doorkeeper's `GET /oauth/authorize` (302 back with `code` and `state`, or `error=access_denied`
   * when nobody approves) and `POST /oauth/token` (`{access_token, token_type: "Bearer",
   * expires_in, refresh_token, scope, created_at}`, or 400/401 `{error, error_description}`), and
   * `GET /people/current?format=json` (PeopleController#current: the PersonSerializer's JSON:API,
   * or 404 "No user logged in").
   */
  private oauthRoute(request: FakeRequest): FakeAnswer | undefined {
    const path = request.segments.join('/');
    if (request.method === 'GET' && path === 'oauth/authorize') {
      return {
        status: 302,
        text: '',
        headers: { location: this.codes.authorize(request.query, this.signedIn) },
      };
    }
    if (request.method === 'POST' && path === 'oauth/token') {
      const outcome = this.codes.exchange(new URLSearchParams(request.body), this.oauthApplications);
      if ('error' in outcome) {
        return {
          status: outcome.error === 'invalid_client' ? 401 : 400,
          body: { error: outcome.error, error_description: outcome.description },
        };
      }
      return {
        status: 200,
        body: {
          access_token: outcome.token,
          token_type: 'Bearer',
          expires_in: 7200,
          refresh_token: `refresh-${outcome.token}`,
          scope: 'read',
          created_at: 1_790_000_000,
        },
      };
    }
    if (request.method === 'GET' && path === 'people/current') {
      const person = this.codes.personOf(request.headers.authorization);
      if (!person) {
        return { status: 404, body: { errors: [{ title: 'No user logged in' }] } };
      }
      return {
        status: 200,
        body: {
          data: {
            id: person.id,
            type: 'people',
            attributes: {
              avatar: null,
              title: person.title,
              description: null,
              first_name: person.first_name,
              last_name: person.last_name,
              orcid: null,
              mbox_sha1sum: 'b9ad0ad9de1ba5c85e8a2bf2dd6fd8b5b1d2e6b7',
              expertise: [],
              tools: [],
            },
            relationships: { projects: { data: [] }, institutions: { data: [] } },
            links: { self: `/people/${person.id}` },
            meta: { base_url: this.url, api_version: '0.3' },
          },
          jsonapi: { version: '1.0' },
        },
        headers: { 'content-type': 'application/vnd.api+json; charset=utf-8' },
      };
    }
    return undefined;
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
