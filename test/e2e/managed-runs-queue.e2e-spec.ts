import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { buildIdOf } from '../../src/managed-runs/entities/managed-run.entity.js';
import { ManagedRunsRepository } from '../../src/managed-runs/managed-runs.repository.js';
import { ManagedTestingService } from '../../src/managed-runs/managed-testing.service.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { managedCrate } from '../support/managed-crates.js';
import { managedRunsOf } from '../support/managed-runs.js';

const SERVICE_URL = 'https://lifemonitor.example.org';
const RESOURCE = 'local';
const CLAIM_MS = 60_000;

// API.md 17: at most one run of a managed instance waits to start, however many ask for one at once.
// No runner runs here: the runs stay queued unless a test claims and starts one as a runner would.
describe(`one queued run per managed instance (${testDatabase()})`, () => {
  let t: TestApp;
  let links: LinkServer;
  let alice: string;
  let service: ManagedTestingService;
  let repository: ManagedRunsRepository;

  beforeAll(async () => {
    links = await LinkServer.start();
    t = await createTestApp({ RUNNER_USER: 'wfrunner' });
    alice = await t.userToken(['user'], `alice_${randomUUID().slice(0, 8)}`);
    service = t.app.get(ManagedTestingService);
    repository = t.app.get(ManagedRunsRepository);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await links?.close();
  });

  /** A newly registered crate's managed instance, never checked: its uuid and id. */
  async function newInstance(): Promise<{ uuid: string; id: number }> {
    const path = `/queue-${randomUUID()}.crate.zip`;
    links.route(path, { kind: 'bytes', body: managedCrate('passing') });
    const created = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${alice}`)
      .send({ roc_link: links.url(path), version: '1.0' })
      .expect(201);
    const suites = await t.http
      .get(`/workflows/${(created.body as { uuid: string }).uuid}/suites`)
      .set('Authorization', `Bearer ${alice}`)
      .expect(200);
    const uuid = (suites.body as { items: { instances: { uuid: string }[] }[] }).items[0].instances[0].uuid;
    const [row] = await t.app
      .get(DataSource)
      .query<{ id: number | string }[]>('SELECT id FROM test_instances WHERE uuid = ?', [uuid]);
    const instance = { uuid, id: Number(row.id) };
    expect(await runsOf(instance)).toEqual([]);
    return instance;
  }

  const runsOf = (instance: { uuid: string }) => managedRunsOf(t.app.get(DataSource), instance.uuid);

  /** The instance's runs as `[status, waiting]`, oldest first; waiting: it holds the instance's queued mark. */
  async function statesOf(instance: { uuid: string; id: number }): Promise<[string, boolean][]> {
    return (await runsOf(instance)).map((run) => [run.status, run.queuedInstanceId === instance.id]);
  }

  const target = (instance: { id: number }) => ({
    instanceId: instance.id,
    serviceUrl: SERVICE_URL,
    resource: RESOURCE,
  });
  const firstCheck = (instance: { id: number }) => service.latestBuilds(target(instance));
  const trigger = (instance: { id: number }) => service.triggerBuild(target(instance));

  /** Claims and starts the instance's queued run as a runner does; other runs claimed by the way go back. */
  async function start(instance: { id: number }): Promise<void> {
    const now = new Date();
    const claimed = await repository.claimDue(now, `runner-${randomUUID()}`, 1_000, CLAIM_MS);
    const run = claimed.find((candidate) => candidate.instanceId === instance.id);
    await Promise.all(claimed.filter((other) => other !== run).map((other) => repository.release(other)));
    expect(run).toBeDefined();
    await expect(repository.started(run!, `handle-${run!.id}`, now)).resolves.toBe(true);
  }

  it('queues one run when a first check and a trigger race, and the check lists it', async () => {
    const instance = await newInstance();
    const [checked, triggered] = await Promise.all([firstCheck(instance), trigger(instance)]);
    expect(triggered).toEqual({ kind: 'triggered', how: 'build' });
    const runs = await runsOf(instance);
    expect(await statesOf(instance)).toEqual([['queued', true]]);
    expect(checked).toMatchObject({
      kind: 'builds',
      builds: [{ buildId: buildIdOf(runs[0].id), status: 'waiting' }],
    });
  });

  it('queues one run when two copies check a new instance at once, and both list it', async () => {
    const instance = await newInstance();
    const checks = await Promise.all([firstCheck(instance), firstCheck(instance), firstCheck(instance)]);
    const runs = await runsOf(instance);
    expect(await statesOf(instance)).toEqual([['queued', true]]);
    for (const checked of checks) {
      expect(checked).toMatchObject({ kind: 'builds', builds: [{ buildId: buildIdOf(runs[0].id) }] });
    }
  });

  it('answers triggered without a second run while one waits (a double click), on one or several copies', async () => {
    const instance = await newInstance();
    const triggers = await Promise.all([trigger(instance), trigger(instance)]);
    expect(triggers).toEqual([
      { kind: 'triggered', how: 'build' },
      { kind: 'triggered', how: 'build' },
    ]);
    await expect(trigger(instance)).resolves.toEqual({ kind: 'triggered', how: 'build' });
    expect(await statesOf(instance)).toEqual([['queued', true]]);
  });

  it('queues a new run on a trigger while the run is running, and one only', async () => {
    const instance = await newInstance();
    await firstCheck(instance);
    await start(instance);
    expect(await statesOf(instance)).toEqual([['running', false]]);
    await Promise.all([trigger(instance), trigger(instance)]);
    expect(await statesOf(instance)).toEqual([
      ['running', false],
      ['queued', true],
    ]);
  });

  it('queues again on the trigger after the waiting run was cancelled, claimed by a runner or not', async () => {
    const instance = await newInstance();
    await trigger(instance);
    const [waiting] = await runsOf(instance);
    await expect(
      service.cancelBuild({ ...target(instance), buildId: buildIdOf(waiting.id) }),
    ).resolves.toEqual({ kind: 'cancelled' });
    await trigger(instance);
    expect(await statesOf(instance)).toEqual([
      ['error', false],
      ['queued', true],
    ]);

    // A runner holds the new one (claimed, not started): the cancel leaves its end to the runner.
    const [, claimedRun] = await runsOf(instance);
    const claimed = await repository.claimDue(new Date(), `runner-${randomUUID()}`, 1_000, CLAIM_MS);
    await Promise.all(
      claimed.filter((run) => run.id !== claimedRun.id).map((other) => repository.release(other)),
    );
    await expect(
      service.cancelBuild({ ...target(instance), buildId: buildIdOf(claimedRun.id) }),
    ).resolves.toEqual({ kind: 'cancelled' });
    await trigger(instance);
    expect(await statesOf(instance)).toEqual([
      ['error', false],
      ['queued', false],
      ['queued', true],
    ]);
  });
});
