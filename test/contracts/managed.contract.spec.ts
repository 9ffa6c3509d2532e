import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config/app-config.js';
import { ManagedRunEntity } from '../../src/managed-runs/entities/managed-run.entity.js';
import { ManagedTestingService } from '../../src/managed-runs/managed-testing.service.js';
import { RunLogs } from '../../src/managed-runs/run-logs.js';
import { RunnerAppModule } from '../../src/managed-runs/runner/index.js';
import { LinkServer } from '../fakes/link-server.js';
import { WesFake, type FakeWesRun } from '../fakes/wes-fake.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { managedCrate } from '../support/managed-crates.js';
import { until } from '../support/until.js';
import { testingServiceContract, type ContractBuild } from './testing-service.contract.js';

/** The WES state the fake gives a run for each kind of build, and the run's status then. */
const STATES: Record<ContractBuild, { wes: string; run: string }> = {
  passed: { wes: 'COMPLETE', run: 'passed' },
  failed: { wes: 'EXECUTOR_ERROR', run: 'failed' },
  running: { wes: 'RUNNING', run: 'running' },
};
const EXECUTOR = 'cluster';
const WAIT = { timeoutMs: 20_000, everyMs: 50 };

/**
 * The service, its database and a real runner, shared by the contract's tests (each seeds
 * instances of its own): builds are runs the runner sends to the WES fake through a `wes`
 * executor and ends as the fake says.
 */
interface World {
  app: TestApp;
  runner: INestApplicationContext;
  links: LinkServer;
  executors: string;
}

const fake = new WesFake();
let world: Promise<World> | undefined;

async function startWorld(): Promise<World> {
  await fake.start();
  const links = await LinkServer.start();
  const executors = mkdtempSync(join(tmpdir(), 'managed-contract-'));
  writeFileSync(
    join(executors, 'executors.yml'),
    `executors:\n  ${EXECUTOR}: {type: wes, url: "${fake.api}"}\n`,
  );
  const app = await createTestApp({
    RUNNER_USER: 'wfrunner',
    EXECUTORS_FILE: join(executors, 'executors.yml'),
    PUBLIC_BASE_URL: 'http://registry.test',
    // Runs the fake keeps `RUNNING` hold their runner's slots until the end.
    RUN_CONCURRENCY: '64',
  });
  const runner = await NestFactory.createApplicationContext(RunnerAppModule.register(loadConfig(app.env)), {
    logger: false,
  });
  await runner.init();
  return { app, runner, links, executors };
}

afterAll(async () => {
  const started = await world;
  await started?.runner.close();
  await started?.app.close();
  await started?.links.close();
  await fake.stop();
  if (started) {
    rmSync(started.executors, { recursive: true, force: true });
  }
});

/** A newly registered workflow with one managed instance on the WES executor; resolves its id. */
async function newInstance({ app, links }: World): Promise<number> {
  const path = `/contract-${randomUUID()}.crate.zip`;
  // A nextflow suite is one WES run of the main workflow: nothing of the crate is read to send it.
  links.route(path, {
    kind: 'bytes',
    body: managedCrate('passing', { resource: EXECUTOR, engine: 'NextflowEngine' }),
  });
  const token = await app.userToken(['user'], `owner_${randomUUID().slice(0, 8)}`);
  const created = await app.http
    .post('/users/current/workflows')
    .set('Authorization', `Bearer ${token}`)
    .send({ roc_link: links.url(path), version: '1.0' })
    .expect(201);
  const [row] = await app.app.get(DataSource).query<{ id: number }[]>(
    `SELECT i.id FROM test_instances i JOIN test_suites s ON s.id = i.suite_id
         JOIN workflow_versions v ON v.id = s.version_id JOIN workflows w ON w.id = v.workflow_id
       WHERE w.uuid = ?`,
    [(created.body as { uuid: string }).uuid],
  );
  return Number(row.id);
}

/** Queues a run as a trigger does, lets the runner send it, and has the fake end it as `kind` says. */
async function runOnce(
  world: World,
  service: ManagedTestingService,
  instanceId: number,
  kind: ContractBuild,
): Promise<number> {
  const runs = world.app.app.get(DataSource).getRepository(ManagedRunEntity);
  const triggered = await service.triggerBuild({ serviceUrl: fake.url, resource: EXECUTOR, instanceId });
  expect(triggered.kind).toBe('triggered');
  const [run] = await runs.find({ where: { instanceId }, order: { id: 'DESC' }, take: 1 });
  let sent: FakeWesRun | undefined;
  await until(
    `the runner to send run m-${run.id}`,
    () => {
      sent = [...fake.runs.values()].find((candidate) =>
        WesFake.field(candidate, 'tags')?.includes(`"m-${run.id}"`),
      );
      return sent !== undefined;
    },
    WAIT,
  );
  fake.setState(sent!.runId, STATES[kind].wes);
  await until(
    `run m-${run.id} to be ${STATES[kind].run}`,
    async () => (await runs.findOneByOrFail({ id: run.id })).status === STATES[kind].run,
    WAIT,
  );
  return run.id;
}

testingServiceContract(
  'managed (a real runner on a wes executor, GA4GH WES loopback fake)',
  async () => {
    world ??= startWorld();
    const started = await world;
    const service = started.app.app.get(ManagedTestingService);
    return {
      service,
      fake,
      seed: async (builds) => {
        const instanceId = await newInstance(started);
        for (const kind of builds) {
          await runOnce(started, service, instanceId, kind);
        }
        return { resource: EXECUTOR, instanceId };
      },
      // An instance deleted since (no such id), and an executor EXECUTORS_FILE does not have.
      unknownResource: { resource: EXECUTOR, instanceId: 2_000_000_000 },
      malformedResource: { resource: 'no-such-executor', instanceId: 2_000_000_001 },
      credentials: () => ({ type: 'managed', url: fake.url }),
      seedLog: async (log) => {
        const instanceId = await newInstance(started);
        const runId = await runOnce(started, service, instanceId, 'failed');
        // What the runner keeps of a run's output (its executor's tail), written as it writes it.
        await started.app.app.get(RunLogs).write(instanceId, runId, Buffer.from(log));
        return { resource: EXECUTOR, instanceId, buildId: `m-${runId}` };
      },
      dispose: () => Promise.resolve(),
    };
  },
  { ownBuilds: true },
);
