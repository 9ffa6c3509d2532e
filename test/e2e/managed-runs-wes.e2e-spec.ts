import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config/app-config.js';
import { ConfigError } from '../../src/config/config-error.js';
import { ManagedRunEntity } from '../../src/managed-runs/entities/managed-run.entity.js';
import { RunnerAppModule } from '../../src/managed-runs/runner/index.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { LinkServer } from '../fakes/link-server.js';
import { WesFake, type FakeWesRun } from '../fakes/wes-fake.js';
import {
  baseTestEnv,
  createTestApp,
  createTestDatabase,
  startApp,
  testDatabase,
  type TestApp,
} from '../support/create-test-app.js';
import { managedCrate } from '../support/managed-crates.js';
import { startServiceProcess } from '../support/service-process.js';
import { until } from '../support/until.js';
import { managedRunsOf } from '../support/managed-runs.js';

// The address the service is reached at by others (a WES endpoint among them); never dialled here.
const PUBLIC_BASE_URL = 'https://registry.example';
const RUN_WAIT = { timeoutMs: 30_000, everyMs: 100 };

interface Build {
  build_id: string;
  status: string;
}

/** A temporary EXECUTORS_FILE; `remove` deletes it. */
function executorsFile(yaml: string): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'executors-'));
  const path = join(dir, 'executors.yml');
  writeFileSync(path, yaml);
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

// API.md 17: a managed instance whose resource names a `wes` executor runs on that endpoint.
describe(`managed test instances on a WES executor (${testDatabase()})`, () => {
  const wes = new WesFake();
  let t: TestApp;
  let links: LinkServer;
  let executors: { path: string; remove(): void };
  let scheduler: RefreshScheduler;
  let runner: INestApplicationContext | undefined;
  let alice: string;

  beforeAll(async () => {
    await wes.start();
    links = await LinkServer.start();
    executors = executorsFile(`executors:\n  cluster: {type: wes, url: "${wes.api}"}\n`);
    t = await createTestApp({
      RUNNER_USER: 'wfrunner',
      EXECUTORS_FILE: executors.path,
      PUBLIC_BASE_URL,
      RUN_CLAIM_SECONDS: '3',
    });
    scheduler = t.app.get(RefreshScheduler);
    alice = await t.userToken(['user'], `alice_${randomUUID().slice(0, 8)}`);
  }, 60_000);

  afterEach(async () => {
    await runner?.close();
    runner = undefined;
  });

  afterAll(async () => {
    await t?.close();
    await links?.close();
    await wes.stop();
    executors?.remove();
  });

  const as = (token: string) => ({
    get: (path: string) => t.http.get(path).set('Authorization', `Bearer ${token}`),
    post: (path: string) => t.http.post(path).set('Authorization', `Bearer ${token}`),
  });

  async function startRunner(): Promise<void> {
    runner = await NestFactory.createApplicationContext(RunnerAppModule.register(loadConfig(t.env)), {
      logger: false,
    });
    await runner.init();
  }

  async function register(): Promise<{ workflow: string; instance: string }> {
    const path = `/wes-${randomUUID()}.crate.zip`;
    links.route(path, { kind: 'bytes', body: managedCrate('passing', { resource: 'cluster' }) });
    const created = await as(alice)
      .post('/users/current/workflows')
      .send({ roc_link: links.url(path), version: '1.0' });
    expect(created.status).toBe(201);
    const workflow = (created.body as { uuid: string }).uuid;
    const suites = await as(alice).get(`/workflows/${workflow}/suites`).expect(200);
    const instance = (suites.body as { items: { instances: { uuid: string }[] }[] }).items[0].instances[0]
      .uuid;
    return { workflow, instance };
  }

  const runsOf = (instance: string): Promise<ManagedRunEntity[]> =>
    managedRunsOf(t.app.get(DataSource), instance);

  /** The WES run the fake received with the tag of managed run `runId`, once it has. */
  async function wesRunOf(runId: number): Promise<FakeWesRun> {
    const find = (): FakeWesRun | undefined =>
      [...wes.runs.values()].find((run) => WesFake.field(run, 'tags')?.includes(`"m-${runId}"`));
    await until(`the WES fake to receive run m-${runId}`, () => find() !== undefined, RUN_WAIT);
    return find()!;
  }

  async function ended(instance: string, buildId: string): Promise<Build> {
    let build: Build | undefined;
    await until(
      `build ${buildId} of ${instance} to end`,
      async () => {
        const response = await as(alice).get(`/instances/${instance}/latest-builds?limit=5`).expect(200);
        build = (response.body as { items: Build[] }).items.find((item) => item.build_id === buildId);
        return build !== undefined && !['waiting', 'running'].includes(build.status);
      },
      RUN_WAIT,
    );
    return build!;
  }

  it('sends queued runs (first check, trigger) to the endpoint with the version’s TRS descriptor URL, and ends them as it says', async () => {
    const { workflow, instance } = await register();
    // The first check queues the first run, before any runner is there.
    await scheduler.tick();
    const [queued] = await runsOf(instance);
    const descriptor = `${PUBLIC_BASE_URL}/ga4gh/trs/v2/tools/${workflow}/versions/1.0/PLAIN_CWL/descriptor/tool.cwl`;
    expect(queued).toMatchObject({ status: 'queued', executor: 'cluster', workflowUrl: descriptor });
    // The URL names the main workflow on this service's TRS (the fake endpoint fetches nothing); the
    // workflow is alice's own, so read as her (TRS shows a private workflow to its owner only).
    const served = await as(alice).get(new URL(descriptor).pathname);
    expect(served.status).toBe(200);
    expect(served.text).toContain('baseCommand: ["echo","hello"]');

    await startRunner();
    const first = await wesRunOf(queued.id);
    expect(WesFake.field(first, 'workflow_url')).toBe(descriptor);
    expect(WesFake.field(first, 'workflow_type')).toBe('CWL');
    wes.setState(first.runId, 'COMPLETE');
    expect(await ended(instance, `m-${queued.id}`)).toMatchObject({ status: 'passed' });

    // A trigger queues the next run; the endpoint fails it.
    const triggered = await as(alice).post(`/instances/${instance}/builds`);
    expect(triggered.status).toBe(202);
    const [, again] = await runsOf(instance);
    expect(again).toMatchObject({ executor: 'cluster', workflowUrl: descriptor });
    const second = await wesRunOf(again.id);
    expect(WesFake.field(second, 'workflow_url')).toBe(descriptor);
    wes.setState(second.runId, 'EXECUTOR_ERROR');
    expect(await ended(instance, `m-${again.id}`)).toMatchObject({ status: 'failed' });
  }, 60_000);
});

// A bad executor stops the service and the runner alike at start-up, not the first run on it.
describe(`EXECUTORS_FILE problems stop the start-up with one line each (${testDatabase()})`, () => {
  const BAD = [
    'executors:',
    '  cluster: {type: wes, url: "ftp://wes.example", username: u}',
    '  other: {type: wes, url: "https://wes.example/ga4gh/wes/v1?x=1", timeout: 3}',
    '  elsewhere: {type: slurm}',
    '',
  ].join('\n');
  const LINES = [
    "Invalid setting EXECUTORS_FILE: executor 'cluster': 'url' must be the http(s) URL of a WES API (…/ga4gh/wes/v1)",
    "Invalid setting EXECUTORS_FILE: executor 'cluster': 'username' and 'password' go together",
    "Invalid setting EXECUTORS_FILE: executor 'other': type wes takes url, token, username, password, not timeout",
    "Invalid setting EXECUTORS_FILE: executor 'other': 'url' must have no query, fragment or credentials (give token, or username and password)",
    "Invalid setting EXECUTORS_FILE: executor 'elsewhere' has unknown type 'slurm' (types: local, wes)",
  ];
  let dataDir: string;
  let drop: () => Promise<void>;
  let file: { path: string; remove(): void };
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'executors-startup-'));
    const database = await createTestDatabase(dataDir);
    drop = database.drop;
    file = executorsFile(BAD);
    env = { ...baseTestEnv(dataDir, database.url), RUNNER_USER: 'wfrunner', EXECUTORS_FILE: file.path };
  });

  afterAll(async () => {
    await drop?.();
    file?.remove();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the service refuses to start', async () => {
    const starting = startApp(env);
    await expect(starting).rejects.toBeInstanceOf(ConfigError);
    await expect(starting).rejects.toThrow(LINES.join('\n'));
  });

  it('a runner refuses to start', async () => {
    const starting = NestFactory.createApplicationContext(RunnerAppModule.register(loadConfig(env)), {
      logger: false,
      abortOnError: false,
    });
    await expect(starting).rejects.toBeInstanceOf(ConfigError);
    await expect(starting).rejects.toThrow(LINES.join('\n'));
  });

  // The built entry points (dist/, `npm run build` first): the lines alone, no stack, exit code 1.
  it.each([
    ['the built service', [process.execPath, 'dist/src/main.js']],
    ['a built runner (npm run runner)', [process.execPath, 'dist/src/runner.js']],
  ])('%s exits 1 printing one line per mistake', async (_name, command) => {
    const started = await startServiceProcess(env, false, command);
    expect(await started.exited).toBe(1);
    expect(started.output()).toBe(`${LINES.join('\n')}\n`);
  });
});
