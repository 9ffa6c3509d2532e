import { createHmac } from 'node:crypto';
import { DataSource } from 'typeorm';
import { EXAMPLE } from '../../src/common/openapi-examples.js';
import { ManagedRunEntity } from '../../src/managed-runs/entities/managed-run.entity.js';
import { NotificationEntity } from '../../src/notifications/entities/notification.entity.js';
import { DummyCloudEntity } from '../../src/orchestration/entities/dummy-cloud.entity.js';
import { DummyNodeEntity } from '../../src/orchestration/entities/dummy-node.entity.js';
import { VmJobEntity } from '../../src/orchestration/entities/vm-job.entity.js';
import {
  TestInstanceEntity,
  TestSuiteEntity,
  WorkflowEntity,
} from '../../src/workflows/entities/registry.entities.js';
import { RegistrySecretHasher } from '../../src/registries/registry-tokens.service.js';
import { IdentityEntity } from '../../src/auth/identity/entities/identity.entity.js';
import { OAuthClientEntity } from '../../src/authorization-server/entities/oauth-client.entity.js';
import { OAuthGrantEntity } from '../../src/authorization-server/entities/oauth-grant.entity.js';
import { GithubFake } from '../fakes/github-fake.js';
import { OidcOp } from '../fakes/oidc-op.js';
import { SeekFake } from '../fakes/seek-fake.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { seedBuilds } from '../support/monitoring-seed.js';
import { freePort } from '../support/mariadb-server.mjs';
import { writeCloudsFile } from '../support/orchestration.js';
import { writeProvidersFile } from '../support/sign-in.js';
import { crateMetadata, crateZip } from '../support/registry.js';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
  schema?: { example?: unknown; default?: unknown };
}
interface Media {
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
  schema?: { example?: unknown };
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, Media> };
  security?: Record<string, string[]>[];
  responses?: Record<string, unknown>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
type Method = (typeof METHODS)[number];

const METRICS_TOKEN = 'a-metrics-token-for-the-examples';
const WEBHOOK_SECRET = 'a-webhook-secret-for-the-examples';
/** The sign-in provider the examples name, and its client at the test's OpenID provider. */
const PROVIDER = 'lslogin';
const OP_CLIENT = { client_id: 'workflow-service', client_secret: 'op-secret-of-the-examples-0123456789' };

/**
 * Operations no request built from the document can reach: the redirect URI of a sign-in answers
 * only a provider's redirect with a fresh code and state (test/e2e/sign-in.e2e-spec.ts).
 */
const REACHED_BY_REDIRECT_ONLY = new Set(['sign-in-authorized']);

/** What Swagger UI fills a parameter with when "Try it out" opens: its example, else its schema's, else the default. */
function prefilled(parameter: Parameter): unknown {
  return (
    Object.values(parameter.examples ?? {})[0]?.value ??
    parameter.example ??
    parameter.schema?.example ??
    parameter.schema?.default
  );
}

/**
 * The body Swagger UI's editor starts with: of the first media type (the one it selects), its
 * example, else its first named one, else its schema's.
 */
function bodyOf(operation: Operation): { body?: unknown; type?: string; missing?: string } {
  const content = operation.requestBody?.content;
  if (!content) {
    return {};
  }
  const [type, media] = Object.entries(content)[0];
  const body = media.example ?? Object.values(media.examples ?? {})[0]?.value ?? media.schema?.example;
  return body === undefined ? { missing: 'the request body has no example' } : { body, type };
}

/** The bytes of a body as sent: a string as it is, a form's fields form-encoded, anything else as JSON. */
function textOf(body: unknown, type?: string): string {
  if (typeof body === 'string') {
    return body;
  }
  if (type === 'application/x-www-form-urlencoded') {
    return new URLSearchParams(body as Record<string, string>).toString();
  }
  return JSON.stringify(body);
}

interface Sent {
  id: string;
  method: Method;
  path: string;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
}

/**
 * The request "Try it out" sends as it opens, authorized with what the first security scheme
 * wants: every parameter with a value filled in, the body example, nothing typed by hand.
 */
function requestOf(
  method: Method,
  path: string,
  operation: Operation,
  token: string,
  registryToken: string,
): Sent | string {
  const id = operation.operationId;
  const parameters = operation.parameters ?? [];
  const headers: Record<string, string> = {};
  const query = new URLSearchParams();
  let url = path;
  for (const parameter of parameters) {
    const value = prefilled(parameter);
    if (value === undefined) {
      if (parameter.required) {
        return `${id}: the required ${parameter.in} parameter ${parameter.name} has no example`;
      }
      continue;
    }
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    if (parameter.in === 'path') {
      url = url.replace(`{${parameter.name}}`, encodeURIComponent(text));
    } else if (parameter.in === 'query') {
      query.set(parameter.name, text);
    } else if (parameter.in === 'header') {
      headers[parameter.name] = text;
    }
  }
  const { body, type, missing } = bodyOf(operation);
  if (missing) {
    return `${id}: ${missing}`;
  }
  if (type !== undefined) {
    headers['Content-Type'] = type;
  }
  const scheme = Object.keys(operation.security?.[0] ?? {})[0];
  if (scheme === 'bearer') {
    headers.Authorization = `Bearer ${token}`;
  } else if (scheme === 'registry-client') {
    headers.Authorization = `Bearer ${registryToken}`;
  } else if (scheme === 'metrics') {
    headers.Authorization = `Bearer ${METRICS_TOKEN}`;
  } else if (scheme === 'github-signature') {
    const signature = createHmac('sha256', WEBHOOK_SECRET).update(textOf(body)).digest('hex');
    headers['X-Hub-Signature-256'] = `sha256=${signature}`;
  } else if (scheme === 'gitlab-token') {
    headers['X-Gitlab-Token'] = WEBHOOK_SECRET;
  } else if (scheme !== undefined) {
    return `${id}: the test does not know how to authorize the scheme ${scheme}`;
  }
  const search = query.toString();
  return { id, method, path, url: search ? `${url}?${search}` : url, headers, body };
}

/**
 * Swagger UI's "Try it out" as a person uses it (API.md 0): every operation of /docs-json, its
 * request built from the document alone as Swagger UI builds it, sent as it is (nothing typed by
 * hand) to a service holding what the examples speak of (EXAMPLE, the GitHub repository of the
 * registration example): each answers 2xx. An operation added to the document is covered as it
 * comes; one whose example needs something this service does not hold yet fails here, by name,
 * until `holdExamples` seeds it.
 */
describe(`every request example of the OpenAPI document, sent as it is (${testDatabase()})`, () => {
  let t: TestApp;
  let github: GithubFake;
  let seek: SeekFake;
  let clouds: { path: string; remove(): void };
  let providers: { path: string; remove(): void };
  let op: OidcOp;
  let document: Document;
  let dataSource: DataSource;

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
    // The example registry's SEEK, holding the example workflow in the versions the examples register.
    seek = new SeekFake();
    await seek.start();
    seek.add({
      id: EXAMPLE.registryWorkflowId,
      uuid: '86da0a30-d2cd-013a-a07d-000c29a94011',
      title: 'Concat two files',
      crates: new Map([1, 2, 3].map((v) => [v, crateZip({ name: `Concat two files v${v}` })])),
      public: true,
    });
    clouds = writeCloudsFile(`clouds:\n  ${EXAMPLE.cloud}: {type: dummy}\n`);
    const opPort = await freePort();
    providers = writeProvidersFile(
      `providers:\n  ${PROVIDER}:\n    type: oidc\n    issuer: http://127.0.0.1:${opPort}\n` +
        `    client_id: ${OP_CLIENT.client_id}\n    client_secret: ${OP_CLIENT.client_secret}\n`,
    );
    t = await createTestApp({
      IDENTITY_PROVIDERS_FILE: providers.path,
      GITHUB_API_URL: github.url,
      // Its credential: the examples start a build and read its log.
      GITHUB_TOKEN: 'ghp_a-token-for-the-examples',
      CLOUDS_FILE: clouds.path,
      METRICS_TOKEN,
      GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET,
      GITLAB_WEBHOOK_SECRET: WEBHOOK_SECRET,
    });
    op = new OidcOp();
    await op.start({ ...OP_CLIENT, redirect_uris: [`${t.baseUrl}/oauth2/authorized/${PROVIDER}`] }, opPort);
    dataSource = t.app.get(DataSource);
    document = (await t.http.get('/docs-json').expect(200)).body as Document;
    // The repository the registration example names, holding a Workflow Testing RO-Crate.
    const [owner, repo] = new URL(EXAMPLE.repositoryLink).pathname.split('/').filter(Boolean);
    github.addRepository(owner, repo);
    github.push(owner, repo, {
      branch: 'main',
      files: {
        // Its main workflow's language makes it a GA4GH TRS tool of the examples' descriptor type.
        'ro-crate-metadata.json': JSON.stringify(crateMetadata({ name: repo, language: 'galaxy' })),
        'workflow.ga': '{"a_galaxy_workflow": "true"}',
        'test/planemo.yml': '- doc: a test\n',
      },
    });
    // The example instance's workflow, with the example build and its log.
    github.addRepository('o', 'r');
    github.push('o', 'r', { branch: 'main', files: { 'README.md': 'r' } });
    const [run, attempt] = EXAMPLE.buildId.split('_').map(Number);
    github.setRuns('o', 'r', 'nightly.yml', [{ id: run, attempt }]);
    github.setRunLogs('o', 'r', run, [{ name: 'test', text: 'All tests passed\n' }], attempt);
  });

  afterAll(async () => {
    await t?.close();
    await github?.stop();
    await seek?.stop();
    await op?.stop();
    clouds?.remove();
    providers?.remove();
  });

  const as = (token: string) => ({ Authorization: `Bearer ${token}` });

  /** Calls the service to make something the examples need; a refusal stops the test with its reason. */
  const call = async (
    method: Method,
    path: string,
    token: string,
    body?: unknown,
  ): Promise<Record<string, unknown>> => {
    const response = await t.http[method](path)
      .set(as(token))
      .send(body as object);
    if (response.status >= 300) {
      throw new Error(
        `seeding: ${method} ${path} answered ${response.status} ${JSON.stringify(response.body)}`,
      );
    }
    return response.body as Record<string, unknown>;
  };

  /** Moves a row made through the API to the id the examples use (a fresh row nothing refers to yet). */
  const moveId = async (table: string, column: string, from: unknown, to: unknown): Promise<void> => {
    await dataSource.query(`UPDATE ${table} SET ${column} = ? WHERE ${column} = ?`, [to, from]);
  };

  /**
   * What the examples speak of, made where missing (an operation before may have deleted it): the
   * login example's user, user 7, the workflow with its version, suite, an instance added through
   * the API and its build, an API key, a channel and a notification of the caller, a job, node 3.
   */
  const holdExamples = async (admin: string, adminId: number): Promise<void> => {
    // The identity the examples unlink: the admin's at the examples' provider.
    const identities = dataSource.getRepository(IdentityEntity);
    if (!(await identities.existsBy({ userId: adminId, provider: PROVIDER }))) {
      await identities.insert({
        provider: PROVIDER,
        subject: `subject-of-${adminId}`,
        userId: adminId,
        username: 'admin',
        email: null,
        linkedAt: new Date(),
        lastUsedAt: null,
      });
    }
    const login = bodyOf(document.paths['/api/v1/auth'].post).body as { username: string; password: string };
    const users = (await call('get', '/api/v1/users', admin)).items as { id: number; username: string }[];
    if (!users.some((user) => user.username === login.username)) {
      await call('post', '/api/v1/users', admin, login);
    }
    if (!users.some((user) => user.id === EXAMPLE.userId)) {
      const made = await call('post', '/api/v1/users', admin, {
        username: `example-user-${EXAMPLE.userId}`,
        password: 'an example password',
      });
      await moveId('users', 'id', made.id, EXAMPLE.userId);
    }

    if (!(await dataSource.getRepository(WorkflowEntity).existsBy({ uuid: EXAMPLE.workflowUuid }))) {
      await call('post', '/users/current/workflows', admin, {
        roc_link: EXAMPLE.repositoryLink,
        version: EXAMPLE.version,
        uuid: EXAMPLE.workflowUuid,
      });
      const suites = (await call('get', `/workflows/${EXAMPLE.workflowUuid}/suites`, admin)).items as {
        uuid: string;
      }[];
      await moveId('test_suites', 'uuid', suites[0].uuid, EXAMPLE.suiteUuid);
    }
    if (!(await dataSource.getRepository(TestInstanceEntity).existsBy({ uuid: EXAMPLE.instanceUuid }))) {
      const added = await call('post', `/suites/${EXAMPLE.suiteUuid}/instances`, admin, {
        name: 'added through the API',
        service: { type: 'github', url: github.url },
        resource: 'repos/o/r/actions/workflows/nightly.yml',
      });
      await moveId('test_instances', 'uuid', added.uuid, EXAMPLE.instanceUuid);
      const instance = await dataSource
        .getRepository(TestInstanceEntity)
        .findOneByOrFail({ uuid: EXAMPLE.instanceUuid });
      await seedBuilds(dataSource, instance.id, [
        { buildId: EXAMPLE.buildId, status: 'passed', startedAt: new Date() },
      ]);
    }
    if (
      !(await dataSource.getRepository(TestInstanceEntity).existsBy({ uuid: EXAMPLE.managedInstanceUuid }))
    ) {
      const added = await call('post', `/suites/${EXAMPLE.suiteUuid}/instances`, admin, {
        name: 'run by the service',
        service: { type: 'managed', url: 'https://lifemonitor.example.org' },
        resource: 'local',
      });
      await moveId('test_instances', 'uuid', added.uuid, EXAMPLE.managedInstanceUuid);
    }
    if ((await dataSource.getRepository(TestSuiteEntity).countBy({ uuid: EXAMPLE.suiteUuid })) !== 1) {
      throw new Error('seeding: the example suite is missing');
    }

    const keys = (await call('get', '/users/current/apikeys', admin)).items as { id: number }[];
    if (!keys.some((key) => key.id === EXAMPLE.apiKeyId)) {
      const made = await call('post', '/users/current/apikeys', admin, { name: 'an example key' });
      await moveId('api_keys', 'id', made.id, EXAMPLE.apiKeyId);
    }
    const channels = (await call('get', '/users/current/channels', admin)).items as { id: number }[];
    if (!channels.some((channel) => channel.id === EXAMPLE.channelId)) {
      const made = await call('post', '/users/current/channels', admin, {
        type: 'webhook',
        target: 'https://hooks.example.org/example',
      });
      await moveId('notification_channels', 'id', made.id, EXAMPLE.channelId);
    }
    const notifications = dataSource.getRepository(NotificationEntity);
    if (!(await notifications.existsBy({ uuid: EXAMPLE.notificationUuid }))) {
      await notifications.insert({
        uuid: EXAMPLE.notificationUuid,
        userId: adminId,
        eventId: null,
        event: 'BUILD_FAILED',
        data: JSON.stringify({
          workflow: { uuid: EXAMPLE.workflowUuid, name: 'an example', version: '1.0' },
        }),
        createdAt: new Date(),
        readAt: null,
        emailedAt: null,
      });
    }

    // The example registry, its client's example credentials, the caller's account on it linked.
    const registries = (await call('get', '/registries', admin)).items as { uuid: string }[];
    if (!registries.some((registry) => registry.uuid === EXAMPLE.registryUuid)) {
      const made = await call('post', '/registries', admin, {
        // Not the creation example's name; the same after the deletion example (its name is free again).
        name: 'example-registry',
        type: 'seek',
        uri: `${seek.url}/`,
      });
      await moveId('registries', 'uuid', made.uuid, EXAMPLE.registryUuid);
      await moveId('registries', 'client_id', made.client_id, EXAMPLE.registryClientId);
      const hash = t.app.get(RegistrySecretHasher, { strict: false }).hash(EXAMPLE.registryClientSecret);
      await dataSource.query('UPDATE registries SET client_secret_hash = ? WHERE uuid = ?', [
        hash,
        EXAMPLE.registryUuid,
      ]);
    }
    // The example application of the caller (API.md 15), under the example client id.
    const clients = (await call('get', '/users/current/clients', admin)).items as { client_id: string }[];
    if (!clients.some((client) => client.client_id === EXAMPLE.appClientId)) {
      const made = await call('post', '/users/current/clients', admin, {
        name: 'example-application',
        redirect_uris: [EXAMPLE.appRedirectUri],
        confidential: true,
      });
      await moveId('oauth_clients', 'client_id', made.client_id, EXAMPLE.appClientId);
    }
    await call('put', `/users/current/registries/${EXAMPLE.registryUuid}`, admin, {
      token: 'a personal token on the example registry',
    });

    const jobs = dataSource.getRepository(VmJobEntity);
    if (!(await jobs.existsBy({ id: EXAMPLE.jobId }))) {
      // Pending, and never due: the job poller leaves it as it is.
      await jobs.insert({
        id: EXAMPLE.jobId,
        cloud: EXAMPLE.cloud,
        ownerId: adminId,
        state: 'pending',
        request: JSON.stringify({ name: 'cloud', image: '1', size: '1' }),
        nodeId: null,
        node: null,
        error: null,
        polls: 0,
        nextPollAt: new Date(Date.UTC(2100, 0, 1)),
        claimOwner: null,
        claimUntil: null,
        createdAt: new Date(),
      });
    }
    // The caller's key pair of the examples, in the example cloud.
    const keyPair = bodyOf(document.paths['/api/v1/keypairs'].post).body as {
      name: string;
      public_key: string;
    };
    const keyPairs = (await call('get', `/api/v1/keypairs/${EXAMPLE.cloud}`, admin)).keypairs as {
      name: string;
    }[];
    if (!keyPairs.some((key) => key.name === keyPair.name)) {
      await call('post', `/api/v1/keypairs/${EXAMPLE.cloud}`, admin, keyPair);
    }
    // Node 3 of the example cloud, running (a listing makes the dummy cloud and its first nodes).
    await call('get', `/api/v1/nodes/${EXAMPLE.cloud}`, admin);
    const nodeId = Number(EXAMPLE.nodeId);
    const nodes = dataSource.getRepository(DummyNodeEntity);
    if (await nodes.existsBy({ cloud: EXAMPLE.cloud, nodeId })) {
      await nodes.update({ cloud: EXAMPLE.cloud, nodeId }, { state: 0 });
    } else {
      await nodes.insert({
        cloud: EXAMPLE.cloud,
        nodeId,
        name: 'cloud',
        state: 0,
        publicIps: JSON.stringify([`127.0.0.${nodeId}`]),
        extra: JSON.stringify({ foo: 'bar' }),
      });
    }
    const counter = await dataSource.getRepository(DummyCloudEntity).findOneByOrFail({ name: EXAMPLE.cloud });
    if (counter.nextId <= nodeId) {
      await dataSource
        .getRepository(DummyCloudEntity)
        .update({ name: EXAMPLE.cloud }, { nextId: nodeId + 1 });
    }
  };

  /** A token of the example registry's client, with every scope it may have. */
  const registryToken = async (): Promise<string> => {
    const reply = await t.http.post('/oauth2/token').type('form').send({
      grant_type: 'client_credentials',
      client_id: EXAMPLE.registryClientId,
      client_secret: EXAMPLE.registryClientSecret,
    });
    if (reply.status !== 200) {
      throw new Error(`seeding: POST /oauth2/token answered ${reply.status} ${JSON.stringify(reply.body)}`);
    }
    return (reply.body as { access_token: string }).access_token;
  };

  /** The managed example instance's run m-1, queued (no runner runs here): a cancel stops it. */
  const queueExampleRun = async (): Promise<void> => {
    const instance = await dataSource
      .getRepository(TestInstanceEntity)
      .findOneByOrFail({ uuid: EXAMPLE.managedInstanceUuid });
    const runs = dataSource.getRepository(ManagedRunEntity);
    const now = new Date();
    await runs.delete({ id: 1 });
    await runs.insert({
      id: 1,
      instanceId: instance.id,
      executor: 'local',
      engine: 'planemo',
      archiveSha256: '0'.repeat(64),
      definitionPath: 'test/planemo.yml',
      workflowUrl: null,
      status: 'queued',
      queuedAt: now,
      changedAt: now,
      dueAt: now,
      attempts: 0,
      cancelRequested: false,
    });
  };

  /** The caller's approval of the example application (a code never exchanged): its revocation revokes it. */
  const approveExampleApplication = async (admin: string): Promise<void> => {
    const userId = (await call('get', '/users/current', admin)).id as number;
    const client = await dataSource
      .getRepository(OAuthClientEntity)
      .findOneByOrFail({ clientId: EXAMPLE.appClientId });
    const now = new Date();
    await dataSource.getRepository(OAuthGrantEntity).insert({
      oauthClientId: client.id,
      userId,
      scopes: 'user.profile',
      redirectUri: EXAMPLE.appRedirectUri,
      codeHash: createHmac('sha256', 'examples').update(String(now.getTime())).digest('hex'),
      codeChallenge: null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + 60_000),
    });
  };

  /**
   * What one operation needs beyond the things themselves: node 3 assigned or not, with a public address
   * or not; the example key pair not there yet for its import.
   */
  const prepare = async (id: string, admin: string): Promise<void> => {
    const assignment = { node: EXAMPLE.nodeId, user: 'fake_test', vm_type: 'test', ttl_seconds: 3600 };
    const keyPair = bodyOf(document.paths['/api/v1/keypairs'].post).body as { name: string };
    if (/^keypairs-post/.test(id)) {
      await t.http.delete(`/api/v1/keypairs/${keyPair.name}`).set(as(admin));
    } else if (/^vm-address-release/.test(id)) {
      await t.http.put('/api/v1/vm/address').set(as(admin)).send({ node: EXAMPLE.nodeId });
    } else if (/^vm-address/.test(id)) {
      await t.http.put('/api/v1/vm/address/release').set(as(admin)).send({ node: EXAMPLE.nodeId });
    } else if (/^vm-assign/.test(id)) {
      await t.http.put('/api/v1/vm/action/release').set(as(admin)).send({ node: EXAMPLE.nodeId });
    } else if (id === 'instances-builds-cancel') {
      await queueExampleRun();
    } else if (id === 'user-authorizations-delete') {
      await approveExampleApplication(admin);
    } else if (/^vm-(extend|release)/.test(id)) {
      await t.http.put('/api/v1/vm/action/assign').set(as(admin)).send(assignment);
    }
  };

  it('answers every operation 2xx, as "Try it out" sends it', async () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      METHODS.filter((method) => item[method]).map((method) => ({ method, path, operation: item[method] })),
    );
    // Deletions last, so that each of the others finds what it reads; the seeding brings back what a deletion took.
    operations.sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
    expect(operations.length).toBeGreaterThan(80);
    const failures: string[] = [];
    let admin = await t.login();
    for (const { method, path, operation } of operations) {
      if (REACHED_BY_REDIRECT_ONLY.has(operation.operationId)) {
        continue;
      }
      // A new token when an operation before revoked it (the logout).
      if ((await t.http.get('/users/current').set(as(admin))).status === 401) {
        admin = await t.login();
      }
      const adminId = (await call('get', '/users/current', admin)).id as number;
      await holdExamples(admin, adminId);
      await prepare(operation.operationId, admin);
      const request = requestOf(method, path, operation, admin, await registryToken());
      if (typeof request === 'string') {
        failures.push(request);
        continue;
      }
      let sent = t.http[method](request.url).set(request.headers);
      if (request.body !== undefined) {
        sent = sent.send(textOf(request.body, request.headers['Content-Type']));
      }
      const response = await sent;
      // A redirect the operation documents is its answer (a sign-in sends the browser to its provider).
      const redirected =
        response.status >= 300 && response.status < 400 && operation.responses?.[String(response.status)];
      if ((response.status < 200 || response.status >= 300) && !redirected) {
        const body = typeof response.body === 'object' ? JSON.stringify(response.body) : response.text;
        failures.push(
          `${request.id} (${method.toUpperCase()} ${request.url} ${JSON.stringify(request.body) ?? ''}): ` +
            `${response.status} ${String(body).slice(0, 300)}`,
        );
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);

  it('pre-fills no optional parameter and no optional member of the registration (what "Try it out" would send)', () => {
    const filled: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of METHODS) {
        for (const parameter of item[method]?.parameters ?? []) {
          const value = parameter.example ?? parameter.examples ?? parameter.schema?.example;
          if (!parameter.required && value !== undefined) {
            filled.push(`${method} ${path} ${parameter.in} ${parameter.name}`);
          }
        }
      }
    }
    expect(filled).toEqual([]);
    const register = bodyOf(document.paths['/users/current/workflows'].post).body;
    expect(register).toEqual({ roc_link: EXAMPLE.repositoryLink, version: EXAMPLE.version });
  });
});
