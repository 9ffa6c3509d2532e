import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../config/app-config.js';
import { CrateReader } from '../../crates/index.js';
import { managedCrate, cwltestFile, type CwlSuiteKind } from '../../../test/support/managed-crates.js';
import { buildZip } from '../../../test/support/zip-builder.js';
import type { RunLimits, RunSpec, RunState } from './executor.js';
import { LocalExecutor } from './local.executor.js';

// The runs run as this user (.ci/run and the Dockerfile create it).
const RUNNER_USER = 'wfrunner';
const LIMITS: RunLimits = {
  timeoutSeconds: 120,
  memoryMib: 2048,
  maxOutputBytes: 1024 * 1024,
  maxProcesses: 64,
};
const SECRET = 'the-service-secret-that-no-run-may-read-42';

/**
 * Live processes of the user that belong to runs under `runs` (their HOME is a run's folder): other
 * suites may run as the same user at the same time. Zombies are dead already (an init that does
 * not reap keeps them listed).
 */
function processesOf(user: string, runs: string): number {
  const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
  let count = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
      const owner = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      const home = readFileSync(`/proc/${pid}/environ`, 'latin1')
        .split('\0')
        .find((entry) => entry.startsWith('HOME='));
      if (owner === uid && state !== 'Z' && home?.startsWith(`HOME=${runs}/`)) {
        count += 1;
      }
    } catch {
      // Gone while we read.
    }
  }
  return count;
}

describe('LocalExecutor', () => {
  let dir: string;
  let executor: LocalExecutor;
  let runId = 0;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'local-executor-'));
    // The run user reaches its own folder through this one.
    chmodSync(dir, 0o711);
    // A secret file as the service keeps them: readable by the service's user only.
    writeFileSync(join(dir, 'secret'), SECRET, { mode: 0o600 });
    process.env.MANAGED_SPEC_SECRET = SECRET;
    const config = loadConfig({
      NODE_ENV: 'test',
      DATA_DIR: dir,
      JWT_SECRET: SECRET,
      RUNNER_USER,
      RUNNER_WORK_DIR: join(dir, 'runs'),
    });
    executor = new LocalExecutor('local', config, new CrateReader());
  });

  afterAll(() => {
    delete process.env.MANAGED_SPEC_SECRET;
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(
    archive: Buffer,
    overrides: Partial<RunSpec> = {},
    limits: Partial<RunLimits> = {},
  ): Promise<{ state: RunState; log: string }> {
    runId += 1;
    const archivePath = join(dir, `crate-${runId}.zip`);
    writeFileSync(archivePath, archive);
    const handle = await executor.submit({
      runId,
      claim: `claim-${runId}`,
      archivePath,
      definitionPath: 'tests/test.cwltest.yml',
      engine: 'cwltool',
      workflowUrl: null,
      limits: { ...LIMITS, ...limits },
      ...overrides,
    });
    let state = await executor.poll(handle);
    while (state.state === 'running' || state.state === 'queued') {
      await new Promise((resolve) => setTimeout(resolve, 100));
      state = await executor.poll(handle);
    }
    const log = (await executor.logTail(handle, 1024 * 1024)).toString('utf8');
    await executor.release(handle);
    return { state, log };
  }

  const crate = (kind: CwlSuiteKind): Buffer => managedCrate(kind);

  it('finds cwltool and snakemake on this machine', async () => {
    const engines = (await executor.engines()).map((engine) => engine.engine);
    expect(engines).toEqual(expect.arrayContaining(['cwltool', 'snakemake']));
  });

  it('runs a Snakefile with snakemake: passes on exit 0, fails naming the rule that failed', async () => {
    const snakemakeCrate = (shell: string): Buffer =>
      buildZip([
        { name: 'ro-crate-metadata.json', data: '{}' },
        {
          name: 'tests/Snakefile',
          data: `rule all:\n    output: "out.txt"\n    shell: "${shell}"\n`,
        },
      ]);
    const spec = { engine: 'snakemake', definitionPath: 'tests/Snakefile' };
    const passed = await run(snakemakeCrate('echo hello > {output}'), spec);
    expect(passed.state).toMatchObject({ state: 'passed', exitCode: 0 });
    expect(passed.log).toContain('1 of 1 steps (100%) done');
    const failed = await run(snakemakeCrate('echo broken >&2; exit 3'), spec);
    expect(failed.state).toMatchObject({ state: 'failed' });
    expect(failed.log).toContain('broken');
    expect(failed.log).toMatch(/Error in rule all/);
  }, 90_000);

  it('passes a cwltest file whose outputs match by checksum, size, basename and location Any', async () => {
    const { state } = await run(crate('passing'));
    expect(state).toMatchObject({ state: 'passed', exitCode: 0 });
  });

  it('fails a test whose output differs, naming the test and the checksum', async () => {
    const { state, log } = await run(crate('failing'));
    expect(state).toMatchObject({ state: 'failed', reason: expect.stringContaining('t1') });
    expect(log).toContain('checksum');
  });

  it('kills a run at the wall-time limit, with its whole process group', async () => {
    const { state } = await run(crate('endless'), {}, { timeoutSeconds: 8 });
    expect(state).toMatchObject({ state: 'error', reason: expect.stringContaining('wall-time limit') });
    expect(processesOf(RUNNER_USER, join(dir, 'runs'))).toBe(0);
  });

  it('kills a run that writes more than the output limit', async () => {
    const { state } = await run(crate('loud'), {}, { maxOutputBytes: 64 * 1024 });
    expect(state).toMatchObject({ state: 'error', reason: expect.stringContaining('output limit') });
    expect(processesOf(RUNNER_USER, join(dir, 'runs'))).toBe(0);
  });

  it('stops a run from starting more processes than the limit, and leaves none behind', async () => {
    const { state, log } = await run(crate('forking'), {}, { maxProcesses: 48, timeoutSeconds: 15 });
    expect(state).toMatchObject({ state: 'error', reason: expect.stringContaining('wall-time limit') });
    expect(log).toMatch(/fork|Resource temporarily unavailable|Cannot/i);
    expect(processesOf(RUNNER_USER, join(dir, 'runs'))).toBe(0);
  });

  it('kills what a run leaves behind outside its tree, and leaves another run of the same user running', async () => {
    const other = run(crate('endless'), {}, { timeoutSeconds: 20 });
    // The other run's tool is up before this run ends and cleans up after itself.
    while (processesOf(RUNNER_USER, join(dir, 'runs')) < 2) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const { state, log } = await run(crate('daemon'));
    expect(state).toMatchObject({ state: 'passed' });
    expect(log).toContain('started');
    const daemons = execFileSync('ps', ['-o', 'args=', '-u', RUNNER_USER], { encoding: 'utf8' });
    expect(daemons).not.toContain('sleep 600');
    expect(daemons).toContain('sleep 3600');
    await expect(other).resolves.toMatchObject({
      state: { state: 'error', reason: expect.stringContaining('wall-time limit') },
    });
    expect(processesOf(RUNNER_USER, join(dir, 'runs'))).toBe(0);
  }, 60_000);

  it('gives a run none of the runner environment, process environments or secret files', async () => {
    const snoop = managedCrate('snooping', {
      definitionText: cwltestFile({}),
    });
    const { log } = await run(snoop);
    expect(log).toContain('HOME=');
    expect(log).toContain('secret: Permission denied');
    expect(log).not.toContain(SECRET);
    expect(log).not.toContain('MANAGED_SPEC_SECRET');
  });

  it('ends as error, running nothing, when the definition path leaves the crate', async () => {
    const { state } = await run(crate('passing'), { definitionPath: '../../../etc/passwd' });
    expect(state).toMatchObject({
      state: 'error',
      reason: expect.stringContaining('not a file of the crate'),
    });
  });

  it("ends as error when a test's tool leaves the crate", async () => {
    const archive = managedCrate('passing', { definitionText: cwltestFile({}, '../../../../bin/true') });
    const { state } = await run(archive);
    expect(state).toMatchObject({
      state: 'error',
      reason: expect.stringContaining('not a file of the crate'),
    });
  });

  it('ends as error for a zip bomb, and leaves no working folder', async () => {
    const bomb = buildZip([
      { name: 'ro-crate-metadata.json', data: '{}' },
      { name: 'tests/test.cwltest.yml', data: Buffer.alloc(4 * 1024 * 1024), declaredSize: 10 },
    ]);
    const { state } = await run(bomb);
    expect(state).toMatchObject({ state: 'error', reason: expect.stringContaining('cannot be unpacked') });
    expect(readdirSync(join(dir, 'runs'))).toEqual([]);
  });

  it('ends as error naming an engine that is not in the table, or not installed', async () => {
    await expect(run(crate('passing'), { engine: 'galaxy' })).resolves.toMatchObject({
      state: { state: 'error', reason: expect.stringContaining("'galaxy' is not one of") },
    });
    await expect(run(crate('passing'), { engine: 'nextflow' })).resolves.toMatchObject({
      state: { state: 'error', reason: expect.stringContaining("'nextflow' is not installed") },
    });
  });

  it('cancels a running run and answers lost for a handle of another process', async () => {
    runId += 1;
    const archivePath = join(dir, `crate-${runId}.zip`);
    writeFileSync(archivePath, crate('endless'));
    const handle = await executor.submit({
      runId,
      claim: `claim-${runId}`,
      archivePath,
      definitionPath: 'tests/test.cwltest.yml',
      engine: 'cwltool',
      workflowUrl: null,
      limits: LIMITS,
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await executor.cancel(handle);
    await expect(executor.poll(handle)).resolves.toMatchObject({
      state: 'error',
      reason: expect.stringContaining('cancelled'),
    });
    await executor.release(handle);
    await expect(executor.poll(handle)).resolves.toEqual({ state: 'lost' });
    await expect(executor.poll('another-process/1')).resolves.toEqual({ state: 'lost' });
    expect(processesOf(RUNNER_USER, join(dir, 'runs'))).toBe(0);
  });
});
