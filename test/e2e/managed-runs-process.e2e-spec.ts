import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { ManagedRunEntity } from '../../src/managed-runs/entities/managed-run.entity.js';
import { ManagedRunsRepository } from '../../src/managed-runs/managed-runs.repository.js';
import { NotificationEventEntity } from '../../src/notifications/entities/notification-event.entity.js';
import { BuildEntity } from '../../src/test-monitoring/entities/build.entity.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { cwltestFile, HELLO_SHA1, managedCrate } from '../support/managed-crates.js';
import {
  endedRuns,
  processesIn,
  startRunnerProcess,
  stillRunning,
  type RunnerProcess,
} from '../support/runner-process.js';
import { until } from '../support/until.js';
import { managedRunsOf } from '../support/managed-runs.js';

const RUNNER_USER = 'wfrunner';
const RUN_WAIT = { timeoutMs: 90_000, everyMs: 200 };
/** The killed run's wall time: its `timeout` backstop (sandbox.ts) ends it 30 + 5 s after this at the latest. */
const RUN_TIMEOUT_SECONDS = 60;
const BACKSTOP_WAIT = { timeoutMs: (RUN_TIMEOUT_SECONDS + 30 + 5 + 15) * 1000, everyMs: 250 };

/**
 * A tool that hangs on its first start and passes on every later one: the first attempt makes a
 * folder outside the run's own (the attempts' working folders differ) and sleeps for an hour, so
 * that only the kill of its runner's process tree, not its own end, makes it go.
 */
function hangingOnceTool(marker: string): string {
  const script = `mkdir ${marker} 2>/dev/null && exec sleep 3600; echo hello`;
  return [
    'cwlVersion: v1.0',
    'class: CommandLineTool',
    `baseCommand: ${JSON.stringify(['sh', '-c', script])}`,
    'stdout: out.txt',
    'inputs: []',
    'outputs:\n  out:\n    type: stdout',
    '',
  ].join('\n');
}

/** The command line of a process of processesIn's, if it still runs. */
function commandOf(process: string): string {
  try {
    return readFileSync(`/proc/${process.split(':')[0]}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

// API.md 17: "a runner that dies leaves its run to be claimed again after its claim expires (a run
// is never recorded twice)", with the built runner (`npm run runner`) as real processes.
describe(`managed runs across runner processes (${testDatabase()})`, () => {
  let t: TestApp;
  let links: LinkServer;
  let workDir: string;
  let markers: string;
  let alice: string;
  let uid: number;
  let runners: RunnerProcess[] = [];

  beforeAll(async () => {
    links = await LinkServer.start();
    workDir = mkdtempSync(join(tmpdir(), 'managed-process-work-'));
    chmodSync(workDir, 0o711);
    uid = Number(execFileSync('id', ['-u', RUNNER_USER], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', RUNNER_USER], { encoding: 'utf8' }).trim());
    // Where the tools' first attempts leave their mark: the run user writes there.
    markers = mkdtempSync(join(tmpdir(), 'managed-process-markers-'));
    chownSync(markers, uid, gid);
    t = await createTestApp({
      RUNNER_USER,
      RUNNER_WORK_DIR: workDir,
      RUN_TIMEOUT_SECONDS: String(RUN_TIMEOUT_SECONDS),
    });
    alice = await t.userToken(['user'], `alice_${randomUUID().slice(0, 8)}`);
  }, 60_000);

  afterEach(async () => {
    await Promise.all(runners.map((runner) => runner.stop('SIGKILL')));
    runners = [];
  });

  afterAll(async () => {
    await t?.close();
    await links?.close();
    rmSync(workDir, { recursive: true, force: true });
    rmSync(markers, { recursive: true, force: true });
  });

  async function startRunner(claimSeconds: number): Promise<RunnerProcess> {
    const runner = await startRunnerProcess({
      ...t.env,
      LOG_LEVEL: 'info',
      RUN_CLAIM_SECONDS: String(claimSeconds),
    });
    runners.push(runner);
    return runner;
  }

  const as = (token: string) => ({
    get: (path: string) => t.http.get(path).set('Authorization', `Bearer ${token}`),
    post: (path: string) => t.http.post(path).set('Authorization', `Bearer ${token}`),
  });

  /**
   * A crate whose suite fails (tool.cwl, tests/test.cwltest.yml) and holds a second test file,
   * tests/hang.cwltest.yml, that hangs on its first start and passes after.
   */
  async function register(): Promise<{ workflow: string; instance: string; marker: string }> {
    const marker = join(markers, randomUUID());
    const path = `/hang-${randomUUID()}.crate.zip`;
    const crate = managedCrate('failing', {
      extraEntries: [
        { name: 'hang.cwl', data: hangingOnceTool(marker) },
        {
          name: 'tests/hang.cwltest.yml',
          data: cwltestFile({ out: { class: 'File', checksum: HELLO_SHA1, size: 6 } }, '../hang.cwl'),
        },
      ],
    });
    links.route(path, { kind: 'bytes', body: crate });
    const created = await as(alice)
      .post('/users/current/workflows')
      .send({ roc_link: links.url(path), version: '1.0' });
    expect(created.status).toBe(201);
    const workflow = (created.body as { uuid: string }).uuid;
    const suites = await as(alice).get(`/workflows/${workflow}/suites`).expect(200);
    const instance = (suites.body as { items: { instances: { uuid: string }[] }[] }).items[0].instances[0]
      .uuid;
    return { workflow, instance, marker };
  }

  const runsOf = (instance: string): Promise<ManagedRunEntity[]> =>
    managedRunsOf(t.app.get(DataSource), instance);

  /** The instance's failing first run, ended; then its hanging run queued beside it. */
  async function hangingRun(): Promise<{
    workflow: string;
    instance: string;
    marker: string;
    runId: number;
  }> {
    const registered = await register();
    await t.app.get(RefreshScheduler).tick();
    await until(
      'the first (failing) run to end',
      async () => (await runsOf(registered.instance))[0]?.status === 'failed',
      RUN_WAIT,
    );
    await until(
      'the failing build to be recorded',
      async () => (await buildsOf(registered.instance)).some((build) => build.endsWith(' failed')),
      RUN_WAIT,
    );
    const [first] = await runsOf(registered.instance);
    const runId = await t.app.get(ManagedRunsRepository).queue(
      {
        instanceId: first.instanceId,
        executor: 'local',
        engine: 'cwltool',
        archiveSha256: first.archiveSha256,
        definitionPath: 'tests/hang.cwltest.yml',
        workflowUrl: null,
      },
      new Date(),
    );
    // The first run ended: nothing of the instance waits, so this one is queued.
    expect(runId).toEqual(expect.any(Number));
    return { ...registered, runId: runId! };
  }

  /** The hanging attempt's processes, once its tool sleeps. */
  async function hangingProcesses(marker: string): Promise<string[]> {
    let processes: string[] = [];
    await until(
      'the hanging tool to sleep',
      () => {
        processes = existsSync(marker) ? processesIn(uid, workDir) : [];
        return processes.some((process) => commandOf(process).startsWith('sleep 3600'));
      },
      RUN_WAIT,
    );
    return processes;
  }

  /** The instance's stored builds as `<build id> <status>`. */
  async function buildsOf(instance: string): Promise<string[]> {
    const rows = await t.app
      .get(DataSource)
      .getRepository(BuildEntity)
      .createQueryBuilder('b')
      .innerJoin('test_instances', 'i', 'i.id = b.instance_id')
      .where('i.uuid = :instance', { instance })
      .orderBy('b.id', 'ASC')
      .getMany();
    return rows.map((row) => `${row.buildId} ${row.status}`);
  }

  async function eventsOf(instance: string): Promise<[string, string][]> {
    const rows = await t.app
      .get(DataSource)
      .getRepository(NotificationEventEntity)
      .createQueryBuilder('e')
      .innerJoin('test_instances', 'i', 'i.id = e.instance_id')
      .where('i.uuid = :instance', { instance })
      .orderBy('e.id', 'ASC')
      .getMany();
    return rows.map((row) => [row.event, row.buildId]);
  }

  /** The working folders of a run in the runners' shared RUNNER_WORK_DIR. */
  function foldersOf(runId: number): string[] {
    return readdirSync(workDir).filter((name) => name.startsWith(`run-${runId}-`));
  }

  it('takes over the run of a runner killed with SIGKILL once its claim ran out, runs it to its end and records it once; the killed run’s processes and working folder go', async () => {
    const killed = await startRunner(4);
    const { workflow, instance, marker, runId } = await hangingRun();
    const processes = await hangingProcesses(marker);
    // A runner beside it on the same RUNNER_WORK_DIR, busy with a run of its own all along (one at a
    // time: the killed runner's run is left to the successor).
    const bystander = await startRunner(4);
    const other = await hangingRun();
    await until('the bystander’s run to hang', () => existsSync(other.marker), RUN_WAIT);
    const [otherFolder] = foldersOf(other.runId);
    expect(otherFolder).toBeDefined();
    expect(await killed.stop('SIGKILL')).toBe('SIGKILL');
    const [, orphan] = await runsOf(instance);
    expect(orphan).toMatchObject({ id: runId, status: 'running', attempts: 1 });
    expect(orphan.claimOwner).not.toBeNull();
    const [killedFolder] = foldersOf(runId);
    expect(killedFolder).toBeDefined();

    const successor = await startRunner(4);
    // Its sweep: the killed attempt's folder goes once another claim holds the run; the bystander's stays.
    await until(
      `the killed attempt's folder ${killedFolder} to be removed`,
      () => !foldersOf(runId).includes(killedFolder),
      RUN_WAIT,
    );
    expect(successor.output()).toContain(killedFolder);
    expect(foldersOf(other.runId)).toEqual([otherFolder]);
    expect((await runsOf(other.instance))[1]).toMatchObject({
      id: other.runId,
      status: 'running',
      attempts: 1,
    });
    expect(endedRuns(bystander.output())).not.toContain(other.runId);
    // Ends the bystander's run (its runner stops it at its next renewal), so that no later runner runs it.
    const [otherRun] = await runsOf(other.instance);
    expect(
      await t.app.get(ManagedRunsRepository).requestCancel(otherRun.instanceId, other.runId, new Date()),
    ).toBe(true);
    await until(
      'the bystander’s run to end',
      async () => (await runsOf(other.instance))[1]?.dueAt === null,
      RUN_WAIT,
    );

    await until(
      'the run to end on the second runner',
      async () => (await runsOf(instance))[1]?.dueAt === null,
      RUN_WAIT,
    );
    const [, run] = await runsOf(instance);
    expect(run).toMatchObject({ status: 'passed', attempts: 2, claimOwner: null });
    expect(endedRuns(killed.output())).not.toContain(runId);
    expect(endedRuns(successor.output()).filter((id) => id === runId)).toEqual([runId]);
    expect(successor.output()).not.toContain('not recorded');

    // One build, one BUILD_RECOVERED, one passed run in the day's history.
    const buildId = `m-${runId}`;
    await until(
      'the passing build to be recorded',
      async () => (await buildsOf(instance)).includes(`${buildId} passed`),
      RUN_WAIT,
    );
    const builds = await buildsOf(instance);
    expect(builds).toEqual([expect.stringMatching(/^m-\d+ failed$/) as string, `${buildId} passed`]);
    const latest = await as(alice).get(`/instances/${instance}/latest-builds?limit=10`).expect(200);
    const listed = (latest.body as { items: { build_id: string; status: string }[] }).items;
    expect(listed.map((build) => [build.build_id, build.status])).toEqual([
      [buildId, 'passed'],
      [expect.stringMatching(/^m-\d+$/) as string, 'failed'],
    ]);
    await until('the recovery to be raised', async () => (await eventsOf(instance)).length > 0, RUN_WAIT);
    expect(await eventsOf(instance)).toEqual([['BUILD_RECOVERED', buildId]]);
    const history = await as(alice).get(`/workflows/${workflow}/history?days=1`).expect(200);
    expect((history.body as { days: { passed: number; failed: number }[] }).days).toEqual([
      expect.objectContaining({ passed: 1, failed: 1 }),
    ]);

    // setpriv --pdeathsig / timeout's backstop: nothing of the killed attempt outlives it for long.
    await until(
      `the killed run's processes to end (${processes.join(', ')})`,
      () => stillRunning(processes).length === 0,
      BACKSTOP_WAIT,
    );
  }, 300_000);

  it('hands the run back at once when its runner process gets SIGTERM, and another runner runs it', async () => {
    // A claim of ten minutes: a run queued again within the test was handed back, not left to expire.
    const stopped = await startRunner(600);
    const { instance, marker, runId } = await hangingRun();
    const processes = await hangingProcesses(marker);
    expect(await stopped.stop('SIGTERM')).toBe(0);
    const [, handedBack] = await runsOf(instance);
    expect(handedBack).toMatchObject({ id: runId, status: 'running', claimOwner: null, attempts: 1 });
    expect(handedBack.dueAt).not.toBeNull();
    // The runner ended its run's processes before it exited.
    expect(stillRunning(processes)).toEqual([]);

    const successor = await startRunner(600);
    await until(
      'the run to end on the second runner',
      async () => (await runsOf(instance))[1]?.dueAt === null,
      RUN_WAIT,
    );
    const [, run] = await runsOf(instance);
    expect(run).toMatchObject({ status: 'passed', attempts: 2 });
    expect(endedRuns(stopped.output())).not.toContain(runId);
    expect(endedRuns(successor.output())).toEqual([runId]);
    await until(
      'the passing build to be recorded',
      async () => (await buildsOf(instance)).includes(`m-${runId} passed`),
      RUN_WAIT,
    );
    expect(await buildsOf(instance)).toEqual([
      expect.stringMatching(/^m-\d+ failed$/) as string,
      `m-${runId} passed`,
    ]);
  }, 300_000);
});
