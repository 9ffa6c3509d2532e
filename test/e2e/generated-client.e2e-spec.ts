import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LinkServer } from '../fakes/link-server.js';
import { ADMIN, createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { writeCloudsFile } from '../support/orchestration.js';
import { FIXTURE_CRATES } from '../support/registry.js';
import { bin, execFileAsync, OFFLINE_ENV, REPO } from '../support/openapi-tools.js';

/**
 * What a newcomer does with the OpenAPI document: generate a TypeScript client with
 * @hey-api/openapi-ts, write a short script against it with ONE token setting, type-check it
 * and run it against the service.
 */
const SCRIPT = `
import { client } from './client/client.gen.js';
import {
  authPost,
  metricsGet,
  nodesGet,
  nodesGetByCloud,
  userApikeysPost,
  usersGetCurrent,
  userWorkflowsPost,
  workflowsGetStatus,
  type AuthErrorDto,
  type ProblemDto,
  type WorkflowStatusDto,
} from './client/index.js';

const [baseUrl, username, password, link, metricsToken] = process.argv.slice(2);
const sent: {
  url: string;
  authorization: string | null;
  xAuthToken: string | null;
  xApiKey: string | null;
  cookie: string | null;
}[] = [];
client.setConfig({ baseUrl });
client.interceptors.request.use((request) => {
  sent.push({
    url: new URL(request.url).pathname,
    authorization: request.headers.get('authorization'),
    xAuthToken: request.headers.get('x-auth-token'),
    xApiKey: request.headers.get('x-api-key'),
    cookie: request.headers.get('cookie'),
  });
  return request;
});

const wrong = await authPost({ body: { username, password: 'not-the-password' } });
const refused: AuthErrorDto | undefined = wrong.error;

const login = await authPost({ body: { username, password } });
if (!login.data) {
  throw new Error('login failed: ' + JSON.stringify(login.error));
}
client.setConfig({ auth: login.data.token });

const me = await usersGetCurrent();
const registered = await userWorkflowsPost({ body: { roc_link: link, version: '1.0' } });
if (!registered.data) {
  throw new Error('registration failed: ' + JSON.stringify(registered.error));
}
const status = await workflowsGetStatus({ path: { wf_uuid: registered.data.uuid } });
const aggregate: WorkflowStatusDto['aggregate_test_status'] | undefined = status.data?.aggregate_test_status;
const onDefault = await nodesGet();
const onLab = await nodesGetByCloud({ path: { cloud: 'lab' } });
const missing = await workflowsGetStatus({ path: { wf_uuid: '0b4ea8e5-9b0c-4a8e-8a51-7f0f6f5a1a01' } });
const problem: ProblemDto | undefined = missing.error;
// The metrics token is not a user token: it is passed to that one call, over the client's setting.
const metricsWithUserToken = await metricsGet();
const metrics = await metricsGet({ auth: metricsToken, parseAs: 'text' });
// An API key goes in a scheme of its own: alone in X-API-Key, or as Authorization: ApiKey <key>.
const made = await userApikeysPost({ body: { name: 'script' } });
const apiKey = made.data?.key ?? '';
const meByKey = await usersGetCurrent({
  auth: (scheme) => (scheme.name === 'X-API-Key' ? apiKey : undefined),
});
const meByKeyScheme = await usersGetCurrent({
  auth: (scheme) => (scheme.name === 'Authorization' && scheme.type === 'apiKey' ? \`ApiKey \${apiKey}\` : undefined),
});

console.log(JSON.stringify({
  refused: { status: wrong.response.status, code: refused?.error.code },
  me: me.data?.username,
  registered: { status: registered.response.status, version: registered.data.wf_version },
  status: { status: status.response.status, aggregate },
  nodes: {
    default: onDefault.data?.nodes.map((node) => node.provider),
    lab: onLab.data?.nodes.map((node) => node.provider),
  },
  missing: { status: missing.response.status, problem: problem?.status, title: problem?.title },
  metrics: { withUserToken: metricsWithUserToken.response.status, withMetricsToken: metrics.response.status },
  byKey: {
    made: made.response.status,
    me: meByKey.data?.username,
    meByScheme: meByKeyScheme.data?.username,
    prefix: apiKey.slice(0, 12) === made.data?.prefix,
  },
  sent,
}));
`;

/** Must not type-check: the cloud is required where the operation names it in the path. */
const WRONG_SCRIPT = `
import { nodesGetByCloud } from './client/index.js';
await nodesGetByCloud({});
`;

const METRICS_TOKEN = 'a-metrics-token-for-the-scraper';

describe(`a client generated from /docs-json (${testDatabase()})`, () => {
  let t: TestApp;
  let links: LinkServer;
  let clouds: { path: string; remove(): void };
  let dir: string;

  beforeAll(async () => {
    clouds = writeCloudsFile('clouds:\n  default: {type: dummy}\n  lab: {type: dummy}\n');
    t = await createTestApp({ CLOUDS_FILE: clouds.path, METRICS_TOKEN: METRICS_TOKEN });
    links = await LinkServer.start();
    // Under the repository so the script resolves @types/node like the project does; test-results/ is ignored.
    mkdirSync(join(REPO, 'test-results'), { recursive: true });
    dir = mkdtempSync(join(REPO, 'test-results', 'client-'));
  });

  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await links.close();
    await t.close();
    clouds.remove();
  });

  const tsc = (project: string) =>
    execFileAsync(process.execPath, [bin('typescript/bin/tsc'), '-p', project], {
      cwd: dir,
      env: OFFLINE_ENV,
    });

  const tsconfig = (files: string[], outDir: string) =>
    JSON.stringify({
      compilerOptions: {
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        skipLibCheck: true,
        types: ['node'],
        outDir,
      },
      files,
    });

  it('generates, type-checks, and works against the service with one token setting', async () => {
    const document = (await t.http.get('/docs-json').expect(200)).body as unknown;
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));

    const generated = await execFileAsync(
      process.execPath,
      [bin('@hey-api/openapi-ts/bin/run.js'), '-i', 'openapi.json', '-o', 'client'],
      { cwd: dir, env: OFFLINE_ENV },
    );
    expect(generated.stdout).toContain('Done');

    writeFileSync(join(dir, 'script.ts'), SCRIPT);
    writeFileSync(join(dir, 'tsconfig.json'), tsconfig(['script.ts'], 'out'));
    await tsc('tsconfig.json').catch((error: { stdout?: string }) => {
      throw new Error(`the script does not type-check:\n${error.stdout ?? ''}`);
    });

    writeFileSync(join(dir, 'wrong.ts'), WRONG_SCRIPT);
    writeFileSync(join(dir, 'tsconfig.wrong.json'), tsconfig(['wrong.ts'], 'out-wrong'));
    const wrong = await tsc('tsconfig.wrong.json').then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? '',
    );
    expect(wrong).toMatch(/wrong\.ts.*error TS\d+:.*path/s);

    const link = links.route('/crate.zip', {
      kind: 'file',
      path: resolve(REPO, FIXTURE_CRATES.galaxySortChangeCase),
    });
    const ran = await execFileAsync(
      process.execPath,
      [join(dir, 'out', 'script.js'), t.baseUrl, ADMIN.username, ADMIN.password, link, METRICS_TOKEN],
      { cwd: dir, env: OFFLINE_ENV },
    );
    const result = JSON.parse(ran.stdout) as {
      refused: unknown;
      me: string;
      registered: unknown;
      status: unknown;
      nodes: { default: string[]; lab: string[] };
      missing: unknown;
      metrics: unknown;
      byKey: unknown;
      sent: {
        url: string;
        authorization: string | null;
        xAuthToken: string | null;
        xApiKey: string | null;
        cookie: string | null;
      }[];
    };
    expect(result.refused).toEqual({ status: 403, code: 403 });
    expect(result.me).toBe(ADMIN.username);
    expect(result.registered).toEqual({ status: 201, version: '1.0' });
    expect(result.status).toEqual({ status: 200, aggregate: expect.any(String) });
    expect(result.nodes.default.length).toBeGreaterThan(0);
    expect(new Set(result.nodes.default)).toEqual(new Set(['default']));
    expect(new Set(result.nodes.lab)).toEqual(new Set(['lab']));
    expect(result.missing).toEqual({ status: 404, problem: 404, title: 'Not Found' });
    expect(result.metrics).toEqual({ withUserToken: 401, withMetricsToken: 200 });
    expect(result.byKey).toEqual({ made: 201, me: ADMIN.username, meByScheme: ADMIN.username, prefix: true });

    // The token went as a Bearer header on every call after the login (and, where a key may go alone,
    // in X-API-Key too: the client fills every scheme with its one setting; the service takes that
    // copy for the token it is).
    const afterLogin = result.sent.slice(2);
    expect(afterLogin.map((request) => request.url)).toEqual([
      '/users/current',
      '/users/current/workflows',
      expect.stringMatching(/^\/workflows\/[0-9a-f-]{36}\/status$/),
      '/api/v1/nodes',
      '/api/v1/nodes/lab',
      '/workflows/0b4ea8e5-9b0c-4a8e-8a51-7f0f6f5a1a01/status',
      '/metrics',
      '/metrics',
      '/users/current/apikeys',
      '/users/current',
      '/users/current',
    ]);
    expect(afterLogin[7].authorization).toBe(`Bearer ${METRICS_TOKEN}`);
    expect(afterLogin[9]).toEqual({
      url: '/users/current',
      authorization: null,
      xAuthToken: null,
      xApiKey: expect.stringMatching(/^wfk_[\w-]{43}$/),
      cookie: null,
    });
    expect(afterLogin[10]).toEqual({
      url: '/users/current',
      authorization: expect.stringMatching(/^ApiKey wfk_[\w-]{43}$/),
      xAuthToken: null,
      xApiKey: null,
      cookie: null,
    });
    for (const request of [...afterLogin.slice(0, 7), afterLogin[8]]) {
      const token = request.authorization?.replace(/^Bearer /, '');
      expect(request).toEqual({
        url: request.url,
        authorization: expect.stringMatching(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/),
        xAuthToken: null,
        xApiKey: request.xApiKey === null ? null : token,
        cookie: null,
      });
    }
    for (const request of result.sent.slice(0, 2)) {
      expect(request.authorization).toBeNull();
    }
    // The generator and two type-checks take most of the 30 s default on a busy 2-core machine.
  }, 120_000);
});
