import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config/app-config.js';
import { ManagedRunEntity } from '../../src/managed-runs/entities/managed-run.entity.js';
import { RunnerAppModule } from '../../src/managed-runs/runner/index.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { managedCrate, type CwlSuiteKind, type ManagedCrateOptions } from '../support/managed-crates.js';
import { until } from '../support/until.js';
import { managedRunsOf } from '../support/managed-runs.js';

// The runs run as this user (.ci/run and the Dockerfile create it).
const RUNNER_USER = 'wfrunner';
/** cwltool takes a few seconds per run on a busy machine. */
const RUN_WAIT = { timeoutMs: 90_000, everyMs: 200 };

interface Build {
  build_id: string;
  status: string;
  instance: { uuid: string; managed: boolean; service: { type: string } };
  links: { origin: string };
  failure?: { class: string; reason: string; evidence: string[] | string } | null;
}

interface Problem {
  status: number;
  detail: string;
}

// API.md 17: managed instances run by the service's own runners, on real cwltool.
describe(`managed test instances (${testDatabase()})`, () => {
  let t: TestApp;
  let links: LinkServer;
  let workDir: string;
  let alice: string;
  let scheduler: RefreshScheduler;
  let runners: INestApplicationContext[] = [];

  beforeAll(async () => {
    links = await LinkServer.start();
    // The run user reaches its working folders through this one (DATA_DIR stays the service's own).
    workDir = mkdtempSync(join(tmpdir(), 'managed-work-'));
    chmodSync(workDir, 0o711);
    t = await createTestApp({
      RUNNER_USER,
      RUNNER_WORK_DIR: workDir,
      RUN_CLAIM_SECONDS: '3',
      RUN_TIMEOUT_SECONDS: '120',
    });
    scheduler = t.app.get(RefreshScheduler);
    alice = await t.userToken(['user'], `alice_${randomUUID().slice(0, 8)}`);
  }, 60_000);

  afterEach(async () => {
    await Promise.all(runners.map((runner) => runner.close()));
    runners = [];
  });

  afterAll(async () => {
    await t?.close();
    await links?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  /** A runner process's module, in this process, on the app's database and data folder. */
  async function startRunner(env: Record<string, string> = {}): Promise<INestApplicationContext> {
    const runner = await NestFactory.createApplicationContext(
      RunnerAppModule.register(loadConfig({ ...t.env, ...env })),
      { logger: false },
    );
    await runner.init();
    runners.push(runner);
    return runner;
  }

  const as = (token: string) => ({
    get: (path: string) => t.http.get(path).set('Authorization', `Bearer ${token}`),
    post: (path: string) => t.http.post(path).set('Authorization', `Bearer ${token}`),
  });

  /** Registers a crate whose one suite runs on a managed instance; resolves the workflow and instance. */
  async function register(
    kind: CwlSuiteKind,
    options: ManagedCrateOptions = {},
  ): Promise<{ workflow: string; instance: string }> {
    const path = `/${kind}-${randomUUID()}.crate.zip`;
    links.route(path, { kind: 'bytes', body: managedCrate(kind, options) });
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

  async function latestBuild(instance: string): Promise<Build | undefined> {
    const response = await as(alice).get(`/instances/${instance}/latest-builds?limit=1`).expect(200);
    return (response.body as { items: Build[] }).items[0];
  }

  async function finished(instance: string): Promise<Build> {
    let build: Build | undefined;
    await until(
      `a finished build of ${instance}`,
      async () => {
        build = await latestBuild(instance);
        return build !== undefined && !['waiting', 'running'].includes(build.status);
      },
      RUN_WAIT,
    );
    return build!;
  }

  const runsOf = (instance: string): Promise<ManagedRunEntity[]> =>
    managedRunsOf(t.app.get(DataSource), instance);

  it('runs a crate registered with a managed instance on a runner, with real cwltool, and shows the build', async () => {
    await startRunner();
    const { workflow, instance } = await register('passing');
    // The first check queues the first run; the runner's changes check the instance again.
    await scheduler.tick();
    const build = await finished(instance);
    expect(build).toMatchObject({ build_id: expect.stringMatching(/^m-\d+$/) as string, status: 'passed' });
    expect(build.instance).toMatchObject({ managed: true, service: { type: 'managed' } });
    expect(build.failure ?? null).toBeNull();
    const status = await as(alice).get(`/workflows/${workflow}/status`).expect(200);
    const reply = status.body as { aggregate_test_status: string; latest_builds: Build[] };
    expect(reply.aggregate_test_status).toBe('all_passing');
    const log = await as(alice).get(`/instances/${instance}/builds/${build.build_id}/logs`).expect(200);
    expect(log.text).toContain('running cwltool');
    // Without PUBLIC_BASE_URL the build's link is still absolute, on the address the request came
    // to, as every link of the replies; followed, it answers the run's log.
    const origin = `${t.baseUrl}/instances/${instance}/builds/${build.build_id}/logs`;
    expect(build.links.origin).toBe(origin);
    expect(reply.latest_builds.map((latest) => latest.links.origin)).toEqual([origin]);
    const followed = await fetch(origin, { headers: { authorization: `Bearer ${alice}` } });
    expect(followed.status).toBe(200);
    await expect(followed.text()).resolves.toBe(log.text);
    // The status page links the build to its log on this site.
    const page = await as(alice).get(`/status/${workflow}`).expect(200);
    expect(page.text).toContain(
      `<a href="/instances/${instance}/builds/${build.build_id}/logs">Build ${build.build_id}</a>`,
    );
    const [run] = await runsOf(instance);
    expect(run).toMatchObject({ status: 'passed', attempts: 1, dueAt: null, claimOwner: null });
    // The working folder went with the run; its log stays.
    expect(readdirSync(workDir)).toEqual([]);
  }, 120_000);

  it('ends a run whose tests fail as failed, classed as a test failure', async () => {
    await startRunner();
    const { instance } = await register('failing');
    await scheduler.tick();
    const build = await finished(instance);
    expect(build.status).toBe('failed');
    expect(build.failure).toMatchObject({ class: 'test' });
  }, 120_000);

  it('accepts LifeMonitor’s service term and a named executor, and never checks an executor EXECUTORS_FILE lacks', async () => {
    const lifemonitor = await register('passing', { runsOn: 'LifeMonitorService', resource: 'local' });
    const instance = await as(alice).get(`/instances/${lifemonitor.instance}`).expect(200);
    expect(instance.body).toMatchObject({ managed: true, resource: 'local', service: { type: 'managed' } });
    const elsewhere = await register('passing', { resource: 'nowhere' });
    const refused = await as(alice).get(`/instances/${elsewhere.instance}`).expect(200);
    expect(JSON.stringify(refused.body)).toContain("'nowhere' is not an executor of EXECUTORS_FILE");
  });

  it('stops a running build on cancel: the build is aborted, classed as infrastructure', async () => {
    await startRunner();
    const { workflow, instance } = await register('endless');
    await scheduler.tick();
    await until(
      'the endless run to start',
      async () => (await latestBuild(instance))?.status === 'running',
      RUN_WAIT,
    );
    const build = (await latestBuild(instance))!;
    // The status page offers its owner the button.
    const page = await as(alice).get(`/status/${workflow}`).expect(200);
    expect(page.text).toContain(`/status/${workflow}/instances/${instance}/builds/${build.build_id}/cancel`);
    const cancelled = await as(alice).post(`/instances/${instance}/builds/${build.build_id}/cancel`);
    expect(cancelled.status).toBe(202);
    expect(cancelled.body).toMatchObject({ instance, build_id: build.build_id });
    const ended = await finished(instance);
    expect(ended.status).toBe('aborted');
    expect(ended.failure).toMatchObject({ class: 'infrastructure' });
    const again = await as(alice).post(`/instances/${instance}/builds/${build.build_id}/cancel`);
    expect(again.status).toBe(409);
    expect((again.body as Problem).detail).toContain('has ended');
    const unknown = await as(alice).post(`/instances/${instance}/builds/m-999999/cancel`);
    expect(unknown.status).toBe(404);
  }, 120_000);

  it('lists the executors and the engines their runners found', async () => {
    await startRunner();
    const response = await as(alice).get('/executors').expect(200);
    const [local] = (
      response.body as { items: { name: string; engines: { engine: string }[]; runners: number }[] }
    ).items;
    expect(local).toMatchObject({ name: 'local', type: 'local' });
    expect(local.runners).toBeGreaterThanOrEqual(1);
    expect(local.engines.map((engine) => engine.engine)).toContain('cwltool');
  });

  it('runs every queued run exactly once with two runners on one queue', async () => {
    const { instance } = await register('passing');
    await scheduler.tick();
    const [first] = await runsOf(instance);
    const now = new Date();
    // Five more runs of the instance waiting beside it, as a database from before one queued run per
    // instance holds them (migration 1795950000000 leaves them unmarked): the queue runs them all.
    await t.app
      .get(DataSource)
      .getRepository(ManagedRunEntity)
      .insert(
        Array.from({ length: 5 }, () => ({
          instanceId: first.instanceId,
          executor: 'local',
          engine: 'cwltool',
          archiveSha256: first.archiveSha256,
          definitionPath: first.definitionPath,
          workflowUrl: null,
          status: 'queued' as const,
          queuedAt: now,
          changedAt: now,
          dueAt: now,
          attempts: 0,
          cancelRequested: false,
          queuedInstanceId: null,
        })),
      );
    // Two runs at a time each: a runner with one at a time removes whatever its run user left
    // behind after each run, which would be the other runner's run here (one run user for both).
    await Promise.all([startRunner({ RUN_CONCURRENCY: '2' }), startRunner({ RUN_CONCURRENCY: '2' })]);
    await until('six runs ended', async () => (await runsOf(instance)).every((run) => run.dueAt === null), {
      ...RUN_WAIT,
      timeoutMs: 180_000,
    });
    const runs = await runsOf(instance);
    expect(runs.map((run) => [run.status, run.attempts, run.reason])).toEqual(
      runs.map(() => ['passed', 1, expect.any(String)]),
    );
  }, 200_000);

  it('hands a run in flight back when its runner stops, and another runner runs it again', async () => {
    const first = await startRunner();
    const { instance } = await register('passing');
    await scheduler.tick();
    await until('the run to start', async () => (await runsOf(instance))[0]?.status === 'running', RUN_WAIT);
    await first.close();
    runners = runners.filter((runner) => runner !== first);
    const [handedBack] = await runsOf(instance);
    expect(handedBack).toMatchObject({ status: 'running', claimOwner: null });
    expect(handedBack.dueAt).not.toBeNull();
    await startRunner();
    const build = await finished(instance);
    expect(build.status).toBe('passed');
    const [run] = await runsOf(instance);
    expect(run.attempts).toBe(2);
    expect(existsSync(join(t.dataDir, 'run-logs'))).toBe(true);
  }, 180_000);
});
