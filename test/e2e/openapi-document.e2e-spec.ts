import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { redoclyLint, spectralLint, writeDocument } from '../support/openapi-tools.js';

interface MediaType {
  schema?: { $ref?: string };
  example?: unknown;
  examples?: unknown;
}
interface Operation {
  operationId: string;
  tags?: string[];
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; schema?: { example?: unknown } }[];
  responses: Record<
    string,
    { description: string; headers?: Record<string, unknown>; content?: Record<string, MediaType> }
  >;
}
interface Document {
  tags?: { name: string; description?: string }[];
  'x-tagGroups'?: { name: string; tags: string[] }[];
  paths: Record<string, Record<string, Operation>>;
  servers?: unknown[];
  components?: {
    securitySchemes?: Record<string, { type: string; in?: string; name?: string; scheme?: string }>;
  };
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);

function operations(document: Document): { method: string; path: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, operation]) => ({ method, path, operation })),
  );
}

/** Where each area's error body says its status. */
const STATUS_IN_BODY: Partial<Record<string, (body: Record<string, Record<string, unknown>>) => unknown>> = {
  '#/components/schemas/AuthErrorDto': (body) => body.error?.code,
  '#/components/schemas/ProblemDto': (body) => body.status,
  '#/components/schemas/EnvelopeErrorDto': (body) => body.status_code,
  '#/components/schemas/TrsErrorDto': (body) => body.code,
};

function statusInBody(schema: string | undefined, example: unknown): unknown {
  const read = STATUS_IN_BODY[schema ?? ''];
  return read && example ? read(example as Record<string, Record<string, unknown>>) : undefined;
}

/** The OpenAPI document as committed (`npm run openapi` writes it). */
const COMMITTED = 'docs/openapi.json';

/** A lint runs a CLI over the whole document: on a loaded machine it alone can take most of jest's 30 s. */
const LINT_TIMEOUT_MS = 90_000;

describe(`the OpenAPI document (${testDatabase()})`, () => {
  let t: TestApp;
  let document: Document;

  let served: string;

  beforeAll(async () => {
    t = await createTestApp();
    const reply = await t.http.get('/docs-json').expect(200);
    served = reply.text;
    document = reply.body as Document;
  });

  afterAll(async () => {
    await t.close();
  });

  // The committed document is the API's contract with its clients: a change of the code that
  // changes it shows in review as a diff of docs/openapi.json, and a refactoring proves it changed
  // nothing. `npm run openapi` writes it anew after a change that means to change the API.
  it('is byte for byte the committed docs/openapi.json', () => {
    const pretty = `${JSON.stringify(JSON.parse(served), null, 2)}\n`;
    if (process.env.UPDATE_OPENAPI === '1') {
      writeFileSync(COMMITTED, pretty);
    }
    expect(pretty).toBe(readFileSync(COMMITTED, 'utf8'));
  });

  it(
    'has no error and no warning under Redocly recommended rules, examples checked against their schemas',
    async () => {
      const { dir, file } = writeDocument(document);
      try {
        const report = await redoclyLint(dir, file);
        expect(report.problems).toEqual([]);
        expect({ errors: report.errors, warnings: report.warnings }).toEqual({ errors: 0, warnings: 0 });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    LINT_TIMEOUT_MS,
  );

  it(
    'has no result at all under Spectral spectral:oas',
    async () => {
      const { dir, file } = writeDocument(document);
      try {
        expect(await spectralLint(dir, file)).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    LINT_TIMEOUT_MS,
  );

  it(
    'catches what it is there to catch: a wrong example and a missing description are reported',
    async () => {
      const broken = structuredClone(document);
      const login = broken.paths['/api/v1/auth'].post;
      const forbidden = login.responses['403'].content?.['application/json'];
      expect(forbidden).toBeDefined();
      (forbidden as MediaType).example = { error: { code: 'not a number' } };
      delete login.description;
      const { dir, file } = writeDocument(broken);
      try {
        const redocly = await redoclyLint(dir, file);
        expect(redocly.problems.map((p) => p.rule)).toContain('no-invalid-media-type-examples');
        const spectral = await spectralLint(dir, file);
        expect(spectral.map((p) => p.rule)).toContain('operation-description');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    LINT_TIMEOUT_MS,
  );

  it('sorts every operation under one tag of what a person looks for, each tag described and grouped by area', () => {
    const tags = document.tags ?? [];
    const names = new Set(tags.map((tag) => tag.name));
    for (const tag of tags) {
      expect({ tag: tag.name, described: (tag.description?.length ?? 0) > 40 }).toEqual({
        tag: tag.name,
        described: true,
      });
    }
    const untagged: string[] = [];
    const count = new Map<string, number>();
    for (const { method, path, operation } of operations(document)) {
      expect({ method, path, tags: operation.tags?.length }).toEqual({ method, path, tags: 1 });
      const tag = operation.tags?.[0] ?? '';
      expect({ method, path, listed: names.has(tag) }).toEqual({ method, path, listed: true });
      if (tag.endsWith('(untagged)')) {
        untagged.push(`${method.toUpperCase()} ${path} (${operation.operationId})`);
      }
      count.set(tag, (count.get(tag) ?? 0) + 1);
    }
    // Each belongs under a tag of src/common/api-tags.ts: its controller says which with @ApiTags.
    expect(untagged).toEqual([]);
    expect([...names].filter((name) => !count.has(name))).toEqual([]);
    // Redoc's grouping: every tag in exactly one group, areas in order.
    const groups = document['x-tagGroups'] ?? [];
    expect(groups.flatMap((group) => group.tags).sort()).toEqual([...names].sort());
    expect(groups.map((group) => group.name.slice(0, 2))).toEqual(['A.', 'B.', 'C.', 'Th']);
    // What people look for, apart: the registry's operations are not one long list any more.
    const tagOf = (method: string, path: string): string | undefined =>
      document.paths[path]?.[method]?.tags?.[0];
    expect({
      register: tagOf('post', '/users/current/workflows'),
      versions: tagOf('get', '/workflows/{wf_uuid}/versions'),
      instance: tagOf('get', '/instances/{instance_uuid}'),
      status: tagOf('get', '/workflows/{wf_uuid}/status'),
      badge: tagOf('get', '/workflows/{wf_uuid}/badge.svg'),
      subscribe: tagOf('post', '/workflows/{wf_uuid}/subscribe'),
      keys: tagOf('post', '/users/current/apikeys'),
      channels: tagOf('post', '/users/current/channels'),
      start: tagOf('post', '/api/v1/vm/start'),
      assign: tagOf('put', '/api/v1/vm/action/assign'),
      nodes: tagOf('get', '/api/v1/nodes'),
    }).toEqual({
      register: 'workflows',
      versions: 'versions',
      instance: 'suites and instances',
      status: 'test status and builds',
      badge: 'badges and status pages',
      subscribe: 'subscriptions and notifications',
      keys: 'API keys',
      channels: 'notification channels',
      start: 'VMs',
      assign: 'VM assignments',
      nodes: 'clouds',
    });
  });

  it('gives every JSON reply of every operation an example, and every error example the status it is documented under', () => {
    let errorExamples = 0;
    for (const { method, path, operation } of operations(document)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [mediaType, media] of Object.entries(response.content ?? {})) {
          const where = `${method} ${path} ${status} ${mediaType}`;
          if (mediaType.includes('json')) {
            expect({ where, example: media.example !== undefined }).toEqual({ where, example: true });
          }
          const inBody = statusInBody(media.schema?.$ref, media.example);
          // An HTML page (the status pages' errors) and RFC 6749's error body (the OAuth2 token endpoint)
          // have no status member; their status is the reply's.
          const statusless =
            mediaType === 'text/html' || media.schema?.$ref === '#/components/schemas/OAuthErrorDto';
          if (Number(status) >= 400 && !statusless) {
            expect({ where, status: inBody }).toEqual({ where, status: Number(status) });
            errorExamples += 1;
          }
          if (media.schema?.$ref === '#/components/schemas/ProblemDto') {
            expect({ where, mediaType }).toEqual({ where, mediaType: 'application/problem+json' });
          }
        }
      }
    }
    expect(errorExamples).toBeGreaterThan(100);
  });

  it('documents 503 with Retry-After on every operation that needs the database, and 507 on every write, in the area shape', () => {
    const areaSchema = (path: string): string =>
      /^\/api\/v1\/(auth|users)(\/|$)/.test(path)
        ? '#/components/schemas/AuthErrorDto'
        : path.startsWith('/api/v1')
          ? '#/components/schemas/EnvelopeErrorDto'
          : path.startsWith('/ga4gh/trs/v2/')
            ? '#/components/schemas/TrsErrorDto'
            : '#/components/schemas/ProblemDto';
    let checked = 0;
    for (const { method, path, operation } of operations(document)) {
      if (path === '/metrics' || path.startsWith('/health/')) {
        continue;
      }
      const where = `${method} ${path}`;
      const unavailable = operation.responses['503'];
      expect({ where, documented: unavailable !== undefined }).toEqual({ where, documented: true });
      expect({ where, description: unavailable.description }).toEqual({
        where,
        description: expect.stringMatching(/database/),
      });
      if (!/^\/api\/v1\/(?!auth|users)/.test(path)) {
        // Area C's own 503 (a cloud that did not answer) keeps its example; the others are the database's.
        expect({ where, headers: Object.keys(unavailable.headers ?? {}) }).toEqual({
          where,
          headers: ['Retry-After'],
        });
        const html = Object.keys(unavailable.content ?? {})[0] === 'text/html';
        // The OAuth2 token endpoint answers every error in RFC 6749's shape.
        const oauth = path === '/oauth2/token';
        expect({ where, schema: Object.values(unavailable.content ?? {})[0]?.schema?.$ref }).toEqual({
          where,
          schema: html ? undefined : oauth ? '#/components/schemas/OAuthErrorDto' : areaSchema(path),
        });
      }
      if (['post', 'put', 'patch', 'delete'].includes(method)) {
        expect({ where, storageFull: operation.responses['507'] !== undefined }).toEqual({
          where,
          storageFull: true,
        });
      }
      checked += 1;
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('documents the optional cloud segment as two operations, and no path with an optional parameter', () => {
    const nodes = document.paths['/api/v1/nodes']?.get;
    const byCloud = document.paths['/api/v1/nodes/{cloud}']?.get;
    expect(nodes?.operationId).toBe('nodes-get');
    expect((nodes?.parameters ?? []).filter((p) => p.in === 'path')).toEqual([]);
    expect(byCloud?.operationId).toBe('nodes-get-by-cloud');
    expect(byCloud?.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ in: 'path', name: 'cloud', required: true })]),
    );
    const shape = (path: string): string => path.replace(/\{[^}]+\}/g, '{}');
    for (const { path, operation } of operations(document)) {
      if (path.endsWith('/{cloud}')) {
        const twin = path.slice(0, -'/{cloud}'.length);
        // A twin that would differ from another path only in its parameters' names (DELETE
        // /keypairs/{name} beside GET /keypairs/{cloud}) is left out, and the operation says so.
        const collides = Object.keys(document.paths).some(
          (other) => other !== twin && shape(other) === shape(twin),
        );
        expect({ path, twin: Object.keys(document.paths[twin] ?? {}).length > 0 }).toEqual({
          path,
          twin: !collides,
        });
        if (collides) {
          expect(operation.description).toContain('may be left out');
        } else {
          expect(operation.operationId).toMatch(/-by-cloud$/);
        }
      }
    }
  });

  it('declares who may call each operation, and the service agrees: public ones answer without a token, the others 401', async () => {
    const sample: Record<string, string> = {
      cloud: 'default',
      id: '1',
      build_id: '1',
      wf_version: '1.0',
    };
    for (const { method, path, operation } of operations(document)) {
      expect({ method, path, security: Array.isArray(operation.security) }).toEqual({
        method,
        path,
        security: true,
      });
      const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
      expect(
        schemes.filter(
          (scheme) =>
            ![
              'bearer',
              'apiKey',
              'apiKeyHeader',
              'metrics',
              'github-signature',
              'gitlab-token',
              'registry-client',
            ].includes(scheme),
        ),
      ).toEqual([]);
      // GitHub's webhook has its own credential: the signature of the body, alone.
      const signed = schemes.includes('github-signature');
      expect({ method, path, signed: signed ? schemes : [] }).toEqual({
        method,
        path,
        signed: signed ? ['github-signature'] : [],
      });
      // So has GitLab's: its secret token, alone.
      const tokened = schemes.includes('gitlab-token');
      expect({ method, path, tokened: tokened ? schemes : [] }).toEqual({
        method,
        path,
        tokened: tokened ? ['gitlab-token'] : [],
      });
      // A token sent once: its alternatives live in the Authorization header, which a generated client
      // fills from the first scheme (bearer) and then leaves alone; besides, an API key alone in X-API-Key.
      const headers = schemes.map((scheme) => {
        const declared = document.components?.securitySchemes?.[scheme];
        return declared?.type === 'apiKey'
          ? `${declared.in}:${(declared.name ?? '').toLowerCase()}`
          : 'header:authorization';
      });
      const keyed = schemes.includes('apiKey');
      expect({ method, path, headers: [...new Set(headers)] }).toEqual({
        method,
        path,
        headers:
          schemes.length === 0
            ? []
            : signed
              ? ['header:x-hub-signature-256']
              : tokened
                ? ['header:x-gitlab-token']
                : keyed
                  ? ['header:authorization', 'header:x-api-key']
                  : ['header:authorization'],
      });
      // Wherever an API key goes in Authorization, it may go alone in X-API-Key.
      expect({ method, path, keyed, alone: schemes.includes('apiKeyHeader') }).toEqual({
        method,
        path,
        keyed,
        alone: keyed,
      });
      expect({ method, path, first: schemes.includes('apiKey') ? schemes[0] : 'bearer' }).toEqual({
        method,
        path,
        first: 'bearer',
      });
      const url = path.replace(/\{(\w+)\}/g, (_match, name: string) =>
        encodeURIComponent(sample[name] ?? '0b4ea8e5-9b0c-4a8e-8a51-7f0f6f5a1a01'),
      );
      const answered = await t.http[method as 'get'](url);
      const optional = (operation.security ?? []).some(
        (requirement) => Object.keys(requirement).length === 0,
      );
      if (schemes.length === 0 || optional) {
        expect({ method, path, status: answered.status }).not.toEqual({ method, path, status: 401 });
      } else if (
        ['bearer', 'github-signature', 'registry-client'].includes(schemes[0]) &&
        operation.responses['401']
      ) {
        expect({ method, path, status: answered.status }).toEqual({ method, path, status: 401 });
      }
    }
  });

  it('describes every reply, and shows for each error the body the service sends rather than repeating its description', () => {
    const undescribed: string[] = [];
    const repeated: string[] = [];
    for (const { method, path, operation } of operations(document)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!response.description) {
          undescribed.push(`${method} ${path} ${status}`);
        }
        for (const [mediaType, media] of Object.entries(response.content ?? {})) {
          const body = media.example as
            { detail?: string; message?: string; error?: { message?: string } } | undefined;
          const message = body?.detail ?? body?.message ?? body?.error?.message;
          if (Number(status) >= 400 && mediaType !== 'text/html' && message === response.description) {
            repeated.push(`${method} ${path} ${status}: ${message}`);
          }
        }
      }
    }
    expect(undescribed).toEqual([]);
    expect(repeated).toEqual([]);
    const registered = document.paths['/users/current/workflows'].post.responses['201'];
    expect(registered.description).toMatch(/Registered/);
  });

  it('shows, for a uuid in the path, the 400 and 404 bodies the service answers', async () => {
    const token = await t.login();
    let checked = 0;
    for (const { method, path, operation } of operations(document)) {
      const uuids = (operation.parameters ?? []).filter(
        (p) => p.in === 'path' && /^(wf_uuid|suite_uuid|instance_uuid)$/.test(p.name),
      );
      if (method !== 'get' || uuids.length === 0 || path.startsWith('/status')) {
        continue;
      }
      const fill = (value: (name: string) => string): string =>
        path.replace(/\{(\w+)\}/g, (_match, name: string) =>
          encodeURIComponent(
            uuids.some((p) => p.name === name) ? value(name) : name === 'build_id' ? '1' : '1.0',
          ),
        );
      const example = (status: string): unknown =>
        operation.responses[status]?.content?.['application/problem+json']?.example;
      const unknown = await t.http
        .get(fill((name) => String(uuids.find((p) => p.name === name)?.schema?.example)))
        .set('Authorization', `Bearer ${token}`);
      expect({ path, status: unknown.status, body: unknown.body as unknown }).toEqual({
        path,
        status: 404,
        body: example('404'),
      });
      const malformed = await t.http.get(fill(() => 'not-a-uuid')).set('Authorization', `Bearer ${token}`);
      expect({ path, status: malformed.status, body: malformed.body as unknown }).toEqual({
        path,
        status: 400,
        body: example('400'),
      });
      checked += 1;
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('names a server and describes every operation', () => {
    expect(document.servers).toEqual([{ url: '/', description: 'This service' }]);
    for (const { method, path, operation } of operations(document)) {
      expect({ method, path, described: (operation.description ?? '').length > 10 }).toEqual({
        method,
        path,
        described: true,
      });
    }
  });

  // The same document on every Node: a library that documents its routes only where it can require()
  // an ES module (terminus's @HealthCheck on Node 22.12+) would add replies on Node 24 alone.
  it('documents the health routes by what they answer, on any Node', () => {
    const live = document.paths['/health/live']?.get;
    const ready = document.paths['/health/ready']?.get;
    expect(Object.keys(live?.responses ?? {}).sort()).toEqual(['200', '413']);
    expect(Object.keys(ready?.responses ?? {}).sort()).toEqual(['200', '413', '503']);
  });
});
