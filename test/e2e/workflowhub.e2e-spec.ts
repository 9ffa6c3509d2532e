import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { SeekFake } from '../fakes/seek-fake.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { crateZip } from '../support/registry.js';

/** One recorded exchange of a VCR cassette (test/fixtures/workflowhub/). */
interface Interaction {
  request: { method: string; uri: string; body: { string: string }; headers: Record<string, string[]> };
  response: {
    status: { code: number };
    headers: Record<string, string[]>;
    body: { string: string };
  };
}

const CASSETTES = join(import.meta.dirname, '..', 'fixtures', 'workflowhub');
const WORKFLOW_UUID = '86da0a30-d2cd-013a-a07d-000c29a94011';

function cassette(name: string): Interaction {
  const parsed = parse(readFileSync(join(CASSETTES, `${name}.yml`), 'utf8')) as {
    http_interactions: Interaction[];
  };
  return parsed.http_interactions[0];
}

/**
 * Every member path of a JSON value (`a.b`, arrays as `a[].b`): what a client may read. Values
 * differ between the recording and us (hosts, ids, times); the members are the contract.
 */
function memberPaths(value: unknown, prefix = ''): Set<string> {
  const paths = new Set<string>();
  if (Array.isArray(value)) {
    for (const item of value) {
      for (const path of memberPaths(item, `${prefix}[]`)) {
        paths.add(path);
      }
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, member] of Object.entries(value)) {
      const path = prefix === '' ? key : `${prefix}.${key}`;
      paths.add(path);
      for (const inner of memberPaths(member, path)) {
        paths.add(inner);
      }
    }
  }
  return paths;
}

/**
 * Members of LifeMonitor's replies our contract leaves out, each for a reason: area B's error body is
 * RFC 7807's without LifeMonitor's `instance` and `extra_info` (API.md 2.9); `based_on` links a crate
 * made from a repository by LifeMonitor itself.
 */
const LEFT_OUT = new Set([
  'instance',
  'extra_info',
  'extra_info.exception',
  'items[].versions[].ro_crate.links.based_on',
]);

function expectRecordedMembers(recorded: unknown, ours: unknown): void {
  const missing = [...memberPaths(recorded)].filter(
    (path) => !LEFT_OUT.has(path) && !memberPaths(ours).has(path),
  );
  expect(missing).toEqual([]);
}

/**
 * WorkflowHub (SEEK) unchanged against the service: each request of its recorded exchanges with a
 * real LifeMonitor, sent as SEEK's client sends it (method, path, headers, body; its credentials
 * and token swapped for ours), in the order SEEK's jobs send them: a token, "does the version
 * exist?", submit, update, status, the daily status list.
 */
describe('WorkflowHub’s LifeMonitor client (SEEK’s recorded exchanges)', () => {
  let t: TestApp;
  let seek: SeekFake;
  let client: { client_id: string; client_secret: string };
  let token: string;

  beforeAll(async () => {
    t = await createTestApp();
    seek = new SeekFake();
    await seek.start();
    // SEEK's workflow 1, whose uuid the cassettes name.
    seek.add({
      id: '1',
      uuid: WORKFLOW_UUID,
      title: 'Concat two files',
      crates: new Map([[1, crateZip({ name: 'Concat two files', marker: 'workflowhub' })]]),
      public: true,
    });
    const admin = await t.login();
    const created = await t.http
      .post('/registries')
      .set('Authorization', `Bearer ${admin}`)
      .send({ name: 'seek', type: 'seek', uri: seek.url });
    client = created.body as typeof client;
  });

  afterAll(async () => {
    await seek.stop();
    await t.close();
  });

  /** Sends a recorded request to the service: its path and query, headers and body. */
  const replay = (interaction: Interaction, swap: (text: string) => string = (text) => text) => {
    const { request } = interaction;
    const url = new URL(request.uri);
    let call = t.http[request.method as 'get' | 'post' | 'put'](`${url.pathname}${url.search}`);
    for (const [name, values] of Object.entries(request.headers)) {
      if (!['Host', 'Content-Length', 'Accept-Encoding'].includes(name)) {
        call = call.set(name, swap(values[0]));
      }
    }
    const body = request.body.string;
    return body === '' ? call : call.send(swap(body));
  };
  const withOurToken = (text: string): string => text.replace(/Bearer \S+/, `Bearer ${token}`);

  it('get_token: a client-credentials token with every scope SEEK asks for', async () => {
    const recorded = cassette('get_token');
    const reply = await replay(recorded, (text) =>
      text
        .replace(/client_id=[^&]+/, `client_id=${client.client_id}`)
        .replace(/client_secret=[^&]+/, `client_secret=${client.client_secret}`),
    );
    expect(reply.status).toBe(recorded.response.status.code);
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(reply.headers.pragma).toBe('no-cache');
    expectRecordedMembers(JSON.parse(recorded.response.body.string), reply.body);
    // What SEEK reads: JSON.parse(res)['access_token'] (its test: longer than 30 characters).
    token = reply.body.access_token as string;
    expect(token.length).toBeGreaterThan(30);
    expect(reply.body.scope).toBe(JSON.parse(recorded.response.body.string).scope);
  });

  it('non_existing_workflow_get: 404 before the submission, which SEEK reads as "not there"', async () => {
    const recorded = cassette('non_existing_workflow_get');
    const reply = await replay(recorded, withOurToken);
    expect(reply.status).toBe(404);
    expect(reply.headers['content-type']).toMatch(/^application\/problem\+json/);
    expectRecordedMembers(JSON.parse(recorded.response.body.string), reply.body);
  });

  it('submit_workflow: registers SEEK’s workflow under SEEK’s uuid', async () => {
    const recorded = cassette('submit_workflow');
    const reply = await replay(recorded, withOurToken);
    expect(reply.status).toBe(201);
    expectRecordedMembers(JSON.parse(recorded.response.body.string), reply.body);
    // What SEEK reads: response['uuid'] is the workflow's.
    expect(reply.body.uuid).toBe(WORKFLOW_UUID);
  });

  it('existing_workflow_get: the versions, where SEEK finds the one it submitted', async () => {
    const recorded = cassette('existing_workflow_get');
    const reply = await replay(recorded, withOurToken);
    expect(reply.status).toBe(200);
    expectRecordedMembers(JSON.parse(recorded.response.body.string), reply.body);
    expect((reply.body.versions as { version: string }[]).some((v) => v.version === '1')).toBe(true);
    expect(reply.body.versions[0].ro_crate.links.origin).toBe(`${seek.url}/workflows/1?version=1`);
  });

  it('update_workflow: renames the version, 204', async () => {
    const recorded = cassette('update_workflow');
    const reply = await replay(recorded, withOurToken);
    expect(reply.status).toBe(204);
    const read = await t.http
      .get(`/workflows/${WORKFLOW_UUID}/versions/1`)
      .set('Authorization', `Bearer ${token}`);
    expect(read.body.version.name).toBe('This Workflow');
  });

  it('workflow_status: the status SEEK reads, with the registry and the version’s origin', async () => {
    const recorded = cassette('workflow_status');
    const reply = await replay(recorded, withOurToken);
    expect(reply.status).toBe(200);
    expectRecordedMembers(JSON.parse(recorded.response.body.string), reply.body);
    // What SEEK's test reads: the aggregate status and the workflow's uuid.
    expect(reply.body.aggregate_test_status).toBe('not_available');
    expect(reply.body.uuid).toBe(WORKFLOW_UUID);
    // A registry's token subscribes to nothing: LifeMonitor's empty list, as recorded.
    expect(reply.body.subscriptions).toEqual([]);
    expect(reply.body.registry).toEqual({
      uuid: expect.any(String),
      name: 'seek',
      type: 'seek',
      uri: seek.url,
    });
  });

  it('list_workflows: the daily status list, each version with its own status', async () => {
    const recorded = cassette('list_workflows');
    const reply = await replay(recorded, withOurToken);
    expect(reply.status).toBe(200);
    expectRecordedMembers(JSON.parse(recorded.response.body.string), reply.body);
    // What SEEK's status job reads: items[].uuid, items[].versions[].version and .status.aggregate_test_status.
    const item = (
      reply.body.items as {
        uuid: string;
        versions: { version: string; status: { aggregate_test_status: string } }[];
      }[]
    ).find((i) => i.uuid === WORKFLOW_UUID);
    expect(item?.versions.map((v) => [v.version, v.status.aggregate_test_status])).toEqual([
      ['1', 'not_available'],
    ]);
  });
});
