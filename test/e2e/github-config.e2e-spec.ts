import { readFileSync } from 'node:fs';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';

const FIXTURES = 'test/fixtures/lifemonitor';

/** `.lifemonitor.yaml`'s schema and validator at LifeMonitor's paths (API.md 12), without a token. */
describe(`the .lifemonitor.yaml schema and validator (${testDatabase()})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t.close();
  });

  const validate = (body: string | Buffer, type: string) =>
    t.http.post('/integrations/github/config/validate').set('content-type', type).send(body);

  it("serves LifeMonitor's schema as it is (lifemonitor-json)", async () => {
    const response = await t.http.get('/integrations/github/config/schema.json');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual(JSON.parse(readFileSync(`${FIXTURES}/lifemonitor.schema.json`, 'utf8')));
  });

  it('validates the YAML body whatever its media type, with the defaults filled in', async () => {
    // A string, sent as it is (superagent would serialise a Buffer sent as JSON).
    const file = readFileSync(`${FIXTURES}/test-galaxy-wf-repo.lifemonitor.yaml`, 'utf8');
    for (const type of ['application/yaml', 'text/plain', 'application/octet-stream', 'application/json']) {
      const response = await validate(file, type);
      expect({ type, status: response.status }).toEqual({ type, status: 200 });
      expect({ type, body: response.body }).toMatchObject({
        type,
        body: {
          valid: true,
          data: {
            name: 'dummy',
            public: false,
            issues: { check: true, include: [], exclude: [] },
            push: { branches: [{ name: 'main', update_registries: [], enable_notifications: true }] },
          },
        },
      });
    }
    const json = await validate(JSON.stringify({ push: { tags: [{ name: 'v*' }] } }), 'application/json');
    expect(json.body).toEqual({
      valid: true,
      data: {
        public: false,
        issues: { include: [], exclude: [] },
        push: {
          branches: [],
          tags: [{ name: 'v*', update_registries: [], enable_notifications: true }],
        },
      },
    });
  });

  it('answers an invalid file with valid false, a message and an error', async () => {
    const response = await validate('push:\n  tags:\n    - nam: "v*"\n', 'application/yaml');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      valid: false,
      message: "'push.tags.0' must have required property 'name'",
      error: expect.stringContaining("Failed validating 'required'"),
    });
  });

  it('refuses an empty body, or one that is neither YAML nor JSON, with 400 in area B’s shape', async () => {
    const empty = await t.http.post('/integrations/github/config/validate');
    expect(empty.status).toBe(400);
    expect(empty.headers['content-type']).toMatch(/^application\/problem\+json/);
    for (const [body, type] of [
      ['', 'application/yaml'],
      ['a: [1, 2', 'application/yaml'],
      ['{"a": ', 'application/json'],
      [Buffer.from([0xff, 0xfe, 0x00]), 'application/octet-stream'],
    ] as const) {
      const response = await validate(body, type);
      expect({ body: String(body), status: response.status }).toEqual({ body: String(body), status: 400 });
      expect(response.body).toMatchObject({ status: 400, title: 'Bad Request' });
    }
  });
});
