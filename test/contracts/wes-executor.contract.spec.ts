import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '../../src/config/app-config.js';
import { ConfigError } from '../../src/config/config-error.js';
import { CrateReader } from '../../src/crates/index.js';
import type { Executor, RunSpec } from '../../src/managed-runs/executors/executor.js';
import { WesError } from '../../src/managed-runs/executors/wes-client.js';
import { WesExecutorFactory } from '../../src/managed-runs/executors/wes.executor.js';
import { WesFake, type FakeWesRun } from '../fakes/wes-fake.js';
import { clientConfig } from '../support/testing-service-spec.js';
import { cwlCrateFiles } from '../support/trs.js';
import { wesReplyValidator } from '../support/wes.js';
import { writeZip } from '../support/zip-builder.js';

const TOKEN = 'wes-secret-token-123';
/** The main workflow as the registry's TRS serves it bare (mainDescriptorUrlOf). */
const TRS_VERSION =
  'https://registry.example/ga4gh/trs/v2/tools/0d5e1d5a-2c44-4a5e-9a3b-2f3f8c1d9e10/versions/1.0';
const WORKFLOW_URL = `${TRS_VERSION}/PLAIN_CWL/descriptor/workflow.cwl`;

/** cwltest files of the crate of test/support/trs.ts (main workflow `workflow.cwl`, tool `tools/say.cwl`). */
const DEFINITIONS: Record<string, string> = {
  'checks/one.yml': '- id: says-hello\n  tool: ../workflow.cwl\n  job: ../test/job.yml\n  output: {}\n',
  'checks/two.yml': [
    '- id: says-hello',
    '  tool: ../workflow.cwl',
    '  job: ../test/job.yml',
    '- id: refuses-nothing',
    '  tool: ../tools/say.cwl',
    '  job: {message: bye}',
    '  should_fail: true',
    '',
  ].join('\n'),
  'checks/file-input.yml': '- tool: ../workflow.cwl\n  job: ../test/file-job.yml\n',
  'checks/outside.yml': '- tool: ../../elsewhere.cwl\n',
  'checks/directory.yml': '- tool: ../workflow.cwl\n  job: {dir: {class: Directory, location: ../test}}\n',
  'checks/not-a-list.yml': 'tool: ../workflow.cwl\n',
  'test/file-job.yml':
    'greeting:\n  class: File\n  location: data/in.txt\n  secondaryFiles:\n    - {class: File, path: data/in.txt.idx}\nremote: {class: File, location: https://data.example/x.txt}\n',
  'test/data/in.txt': 'hello from a file\n',
  'test/data/in.txt.idx': 'index\n',
};

describe('WES executor (GA4GH WES 1.1 loopback fake)', () => {
  const fake = new WesFake();
  const validate = wesReplyValidator();
  let dataDir: string;
  let archivePath: string;
  let config: AppConfig;
  let executor: Executor;

  const make = (options: Record<string, unknown>, cfg = config): Executor =>
    new WesExecutorFactory(new CrateReader()).create({ name: 'cluster', type: 'wes', options }, cfg);
  const spec = (overrides: Partial<RunSpec> = {}): RunSpec => ({
    runId: 7,
    claim: 'claim-7',
    archivePath,
    definitionPath: 'checks/one.yml',
    engine: 'cwltool',
    workflowUrl: WORKFLOW_URL,
    limits: { timeoutSeconds: 60, memoryMib: 512, maxOutputBytes: 1024 * 1024, maxProcesses: 64 },
    ...overrides,
  });
  const runsOf = (handle: string): FakeWesRun[] =>
    handle.split(' ').map((token) => fake.run(decodeURIComponent(token.replace(/^x:/, ''))));

  beforeAll(async () => {
    await fake.start();
    dataDir = mkdtempSync(join(tmpdir(), 'wes-executor-'));
    const files = { ...cwlCrateFiles(), ...DEFINITIONS };
    archivePath = await writeZip(
      join(dataDir, 'crate.zip'),
      Object.entries(files).map(([name, data]) => ({ name, data })),
    );
    config = clientConfig(dataDir);
  });

  beforeEach(() => {
    fake.heal();
    fake.resetLog();
    fake.requiredAuthorization = `Bearer ${TOKEN}`;
    fake.ranges = true;
    fake.forcedState = undefined;
    fake.garbled.length = 0;
    fake.logRequests.length = 0;
    fake.acceptRuns = Infinity;
    executor = make({ url: `${fake.api}/`, token: TOKEN });
  });

  afterEach(() => {
    // Every answer the fake gave is one the WES 1.1 document allows.
    const problems = fake.replies.flatMap((reply) => validate(reply));
    fake.replies.length = 0;
    expect(problems).toEqual([]);
  });

  afterAll(async () => {
    await fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('reads the engines it can run from GET /service-info, with the workflow type and its versions', async () => {
    await expect(executor.engines()).resolves.toEqual([
      { engine: 'cwltool', version: 'CWL v1.0, v1.2' },
      { engine: 'nextflow', version: 'NFL 1.0, DSL2' },
    ]);
    expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', path: '/ga4gh/wes/v1/service-info' });
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('submits a multipart POST /runs with the TRS descriptor URL, the newest CWL version and the test job', async () => {
    const handle = await executor.submit(spec());
    const [run] = runsOf(handle);
    expect(handle).toBe(encodeURIComponent(run.runId));
    const post = fake.requests.find((request) => request.method === 'POST');
    expect(post?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(post?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(WesFake.field(run, 'workflow_url')).toBe(WORKFLOW_URL);
    expect(WesFake.field(run, 'workflow_type')).toBe('CWL');
    expect(WesFake.field(run, 'workflow_type_version')).toBe('v1.2');
    expect(WesFake.field(run, 'workflow_engine')).toBe('cwltool');
    expect(JSON.parse(WesFake.field(run, 'workflow_params') ?? '')).toEqual({ message: 'hello' });
    expect(JSON.parse(WesFake.field(run, 'tags') ?? '')).toEqual({ managed_run: 'm-7', test: 'says-hello' });
  });

  it("attaches a job's relative input files under their crate paths and leaves absolute URLs as they are", async () => {
    const [run] = runsOf(await executor.submit(spec({ definitionPath: 'checks/file-input.yml' })));
    const attachments = run.parts.filter((part) => part.name === 'workflow_attachment');
    expect(attachments.map(({ filename, value }) => ({ filename, value }))).toEqual([
      { filename: 'test/data/in.txt', value: 'hello from a file\n' },
      { filename: 'test/data/in.txt.idx', value: 'index\n' },
    ]);
    expect(JSON.parse(WesFake.field(run, 'workflow_params') ?? '')).toEqual({
      greeting: {
        class: 'File',
        location: 'test/data/in.txt',
        secondaryFiles: [{ class: 'File', location: 'test/data/in.txt.idx' }],
      },
      remote: { class: 'File', location: 'https://data.example/x.txt' },
    });
  });

  it.each([
    ['QUEUED', 'queued', undefined],
    ['INITIALIZING', 'queued', undefined],
    ['RUNNING', 'running', undefined],
    ['PAUSED', 'running', undefined],
    ['UNKNOWN', 'running', undefined],
    ['COMPLETE', 'passed', 'COMPLETE'],
    ['EXECUTOR_ERROR', 'failed', 'EXECUTOR_ERROR (the workflow failed)'],
    ['SYSTEM_ERROR', 'error', "SYSTEM_ERROR (the WES endpoint's own failure)"],
    ['CANCELED', 'error', 'CANCELED (the run was cancelled)'],
    ['CANCELING', 'error', 'CANCELING (the run was cancelled)'],
    ['PREEMPTED', 'error', "PREEMPTED (the endpoint's system stopped it)"],
  ])('polls the WES state %s as %s', async (wesState, state, why) => {
    const handle = await executor.submit(spec());
    const [run] = runsOf(handle);
    fake.setState(run.runId, wesState);
    const expected =
      why === undefined
        ? { state }
        : { state, reason: `the WES run ${run.runId}: ${why}`, exitCode: state === 'passed' ? 0 : null };
    await expect(executor.poll(handle)).resolves.toEqual(expected);
    expect(fake.requests.at(-1)?.path).toBe(`/ga4gh/wes/v1/runs/${run.runId}/status`);
  });

  it('runs each test of the definition as its own WES run and fails the suite when one fails', async () => {
    const handle = await executor.submit(spec({ definitionPath: 'checks/two.yml' }));
    const [first, second] = runsOf(handle);
    expect(handle).toMatch(/^[^ ]+ x:[^ ]+$/);
    expect(WesFake.field(second, 'workflow_url')).toBe(`${TRS_VERSION}/PLAIN_CWL/descriptor/tools/say.cwl`);
    expect(JSON.parse(WesFake.field(second, 'workflow_params') ?? '')).toEqual({ message: 'bye' });
    fake.setState(first.runId, 'COMPLETE');
    await expect(executor.poll(handle)).resolves.toEqual({ state: 'running' });
    // The second test expects a failure: its run completing fails it.
    fake.setState(second.runId, 'COMPLETE');
    await expect(executor.poll(handle)).resolves.toMatchObject({
      state: 'failed',
      reason: expect.stringContaining('test 2') as string,
    });
    fake.setState(second.runId, 'EXECUTOR_ERROR');
    await expect(executor.poll(handle)).resolves.toMatchObject({ state: 'passed' });
  });

  it("answers lost when the endpoint knows the run no more (404), cancelling the suite's other runs", async () => {
    const handle = await executor.submit(spec({ definitionPath: 'checks/two.yml' }));
    const [first, second] = runsOf(handle);
    fake.forget(first.runId);
    await expect(executor.poll(handle)).resolves.toEqual({ state: 'lost' });
    expect(second.state).toBe('CANCELING');
  });

  it('cancels with POST /runs/{run_id}/cancel, and leaves a run the endpoint forgot as it is', async () => {
    const handle = await executor.submit(spec());
    const [run] = runsOf(handle);
    fake.setState(run.runId, 'RUNNING');
    await expect(executor.cancel(handle)).resolves.toBeUndefined();
    expect(fake.requests.at(-1)).toMatchObject({
      method: 'POST',
      path: `/ga4gh/wes/v1/runs/${run.runId}/cancel`,
    });
    await expect(executor.poll(handle)).resolves.toMatchObject({ state: 'error' });
    fake.forget(run.runId);
    await expect(executor.cancel(handle)).resolves.toBeUndefined();
    await expect(executor.release(handle)).resolves.toBeUndefined();
  });

  it('reads the log tail from GET /runs/{run_id}: state, system logs, and bounded tails of stdout and stderr', async () => {
    const handle = await executor.submit(spec());
    const run = runsOf(handle)[0];
    run.state = 'EXECUTOR_ERROR';
    run.systemLogs = ['node 3 ran out of disk'];
    run.stdout = `${'o'.repeat(50_000)}STDOUT-END\n`;
    run.stderr = `${'e'.repeat(50_000)}STDERR-END\n`;
    const small = await executor.logTail(handle, 1000);
    expect(small.length).toBeLessThanOrEqual(1000);
    expect(small.toString()).toMatch(/STDERR-END\n$/);
    const large = (await executor.logTail(handle, 200_000)).toString();
    expect(large).toContain(`[wes] run ${run.runId}: EXECUTOR_ERROR`);
    expect(large).toContain('[wes] node 3 ran out of disk');
    expect(large.indexOf('STDOUT-END')).toBeLessThan(large.indexOf('STDERR-END'));
    // Asked as suffix ranges, with the endpoint's credential: the log URLs are on its origin.
    expect(fake.logRequests.slice(0, 2)).toEqual([
      { path: `/logs/${run.runId}/stdout`, range: 'bytes=-1000', authorization: `Bearer ${TOKEN}` },
      { path: `/logs/${run.runId}/stderr`, range: 'bytes=-1000', authorization: `Bearer ${TOKEN}` },
    ]);
  });

  it('keeps the log tail bounded when the log server ignores ranges', async () => {
    fake.ranges = false;
    const handle = await executor.submit(spec());
    const run = runsOf(handle)[0];
    run.stdout = `${'o'.repeat(300_000)}END\n`;
    const tail = await executor.logTail(handle, 64);
    expect(tail.length).toBe(64);
    expect(tail.toString()).toMatch(/END\n$/);
  });

  it('reads the last task logs when the run log points to no output, and says which log it could not read', async () => {
    const handle = await executor.submit(spec());
    const run = runsOf(handle)[0];
    run.runLogUrls = false;
    run.tasks = [
      { id: 't1', name: 'say', stdout: 'task output\n' },
      { id: 't2', name: 'gone', stdout: 'x' },
    ];
    fake.fail({ kind: 'status', status: 500 }, /\/logs\/[^/]+\.t2\//);
    const log = (await executor.logTail(handle, 10_000)).toString();
    expect(log).toContain('[wes] say\ntask output\n');
    expect(log).toContain('[wes] gone\n[wes] its stdout could not be read: 127.0.0.1');
    expect(log).toContain('answered GET');
  });

  it('sends no credential to a log URL of another origin, and passes it through the private-address guard', async () => {
    const logs = new WesFake();
    await logs.start();
    try {
      fake.logOrigin = logs.url.replace('127.0.0.1', 'localhost');
      const handle = await executor.submit(spec());
      const run = runsOf(handle)[0];
      run.stdout = 'elsewhere\n';
      logs.runs.set(run.runId, run);
      const guarded = make(
        { url: fake.api, token: TOKEN },
        clientConfig(dataDir, { ALLOW_PRIVATE_NETWORK_LINKS: 'false' }),
      );
      const refused = (await guarded.logTail(handle, 1000)).toString();
      expect(refused).toMatch(
        /\[wes\] its stdout could not be read: localhost resolves to a private or reserved address/,
      );
      expect(logs.logRequests).toEqual([]);
      fake.logOrigin = logs.url;
      const read = (await executor.logTail(handle, 1000)).toString();
      expect(read).toContain('elsewhere\n');
      expect(logs.logRequests[0]).toEqual({
        path: `/logs/${run.runId}/stdout`,
        range: 'bytes=-1000',
        authorization: undefined,
      });
    } finally {
      fake.logOrigin = undefined;
      await logs.stop();
    }
  });

  it('sends username and password as HTTP Basic', async () => {
    fake.requiredAuthorization = `Basic ${Buffer.from('runner:s3cret-pass').toString('base64')}`;
    await expect(
      make({ url: fake.api, username: 'runner', password: 's3cret-pass' }).engines(),
    ).resolves.toHaveLength(2);
    await expect(
      make({ url: fake.api, username: 'runner', password: 'wrong-pass' }).engines(),
    ).rejects.toThrow(/answered GET \/service-info with 401/);
  });

  it('rejects submit and poll when the endpoint fails (5xx), without repeating a credential it echoes', async () => {
    const handle = await executor.submit(spec());
    fake.fail({
      kind: 'status',
      status: 503,
      body: { msg: `token ${TOKEN} is overloaded`, status_code: 503 },
    });
    const submitted = executor.submit(spec());
    await expect(submitted).rejects.toThrow(WesError);
    await expect(submitted).rejects.toThrow(
      /answered GET \/service-info with 503: token \[redacted\] is overloaded/,
    );
    await expect(executor.poll(handle)).rejects.toThrow(/answered GET \/runs\/.*\/status with 503/);
    await expect(executor.poll(handle)).rejects.not.toThrow(TOKEN);
  });

  it('cancels the runs it sent when a later POST /runs is refused, and rejects', async () => {
    fake.acceptRuns = 1;
    await expect(executor.submit(spec({ definitionPath: 'checks/two.yml' }))).rejects.toThrow(
      /answered POST \/runs with 500: queue full/,
    );
    const sent = [...fake.runs.values()].at(-1)!;
    expect(WesFake.field(sent, 'tags')).toContain('says-hello');
    expect(sent.state).toBe('CANCELING');
  });

  it('rejects when the endpoint does not answer in time, or is not there', async () => {
    const handle = await executor.submit(spec());
    fake.fail({ kind: 'hang' });
    await expect(executor.poll(handle)).rejects.toThrow(/did not answer within 1 s/);
    fake.heal();
    const gone = make({ url: 'http://127.0.0.1:9/ga4gh/wes/v1', token: TOKEN });
    await expect(gone.submit(spec())).rejects.toThrow(/127\.0\.0\.1:9 is unreachable/);
  });

  it("takes an answer that is not JSON, or a state WES does not have, as the endpoint's fault", async () => {
    const handle = await executor.submit(spec());
    fake.garbled.push('/status');
    await expect(executor.poll(handle)).rejects.toThrow(
      /answered GET \/runs\/.*\/status with something that is not JSON/,
    );
    fake.garbled.length = 0;
    fake.forcedState = 'DONE';
    await expect(executor.poll(handle)).rejects.toThrow(/the state 'DONE' .*which WES 1\.1 does not have/);
    fake.garbled.push('/service-info');
    await expect(executor.engines()).rejects.toThrow(/not JSON/);
  });

  it.each([
    [{ engine: 'snakemake', definitionPath: '' }, /runs no SMK\/SNAKEMAKE workflows \(it runs: CWL, NFL\)/],
    [{ workflowUrl: null }, /no TRS descriptor URL/],
    [
      { definitionPath: 'checks/outside.yml' },
      /its tool '..\/..\/elsewhere.cwl' is neither the main workflow/,
    ],
    [{ definitionPath: 'checks/directory.yml' }, /Directory '..\/test' cannot be sent/],
    [{ definitionPath: 'checks/not-a-list.yml' }, /not a list of tests/],
    [{ definitionPath: 'checks/none.yml' }, /'checks\/none.yml' is not a file of the crate/],
    [{ definitionPath: '../escape.yml' }, /is not a file of the crate/],
  ])(
    'sends nothing for a suite it cannot run (%o): the run polls as error with the reason',
    async (overrides, reason) => {
      const handle = await executor.submit(spec(overrides));
      expect(handle.length).toBeLessThanOrEqual(255);
      expect(fake.requests.filter((request) => request.method === 'POST')).toEqual([]);
      await expect(executor.poll(handle)).resolves.toMatchObject({
        state: 'error',
        reason: expect.stringMatching(reason) as string,
      });
      await expect(executor.logTail(handle, 1000)).resolves.toEqual(expect.any(Buffer));
      expect((await executor.logTail(handle, 1000)).toString()).toMatch(reason);
    },
  );

  it("runs a planemo suite's tests on the main workflow as GALAXY workflows, with each test's job", async () => {
    const types = fake.workflowTypes;
    fake.workflowTypes = { ...types, GALAXY: ['gxformat2'] };
    try {
      const [run] = runsOf(
        await executor.submit(spec({ engine: 'planemo', definitionPath: 'checks/say-test.yml' })),
      );
      expect(WesFake.field(run, 'workflow_url')).toBe(WORKFLOW_URL);
      expect(WesFake.field(run, 'workflow_type')).toBe('GALAXY');
      expect(WesFake.field(run, 'workflow_type_version')).toBe('gxformat2');
      expect(WesFake.field(run, 'workflow_engine')).toBeUndefined();
      expect(JSON.parse(WesFake.field(run, 'workflow_params') ?? '')).toEqual({ message: 'hello' });
    } finally {
      fake.workflowTypes = types;
    }
  });

  it('runs a nextflow suite as one run of the main workflow without parameters', async () => {
    const [run] = runsOf(await executor.submit(spec({ engine: 'nextflow', definitionPath: 'main.nf' })));
    expect(WesFake.field(run, 'workflow_type')).toBe('NFL');
    expect(WesFake.field(run, 'workflow_type_version')).toBe('DSL2');
    expect(WesFake.field(run, 'workflow_engine')).toBe('nextflow');
    expect(WesFake.field(run, 'workflow_params')).toBe('{}');
  });

  it.each([
    [{}, /executor 'cluster': 'url' must be the http\(s\) URL of a WES API/],
    [{ url: 'ftp://wes.example' }, /'url' must be the http\(s\) URL/],
    [{ url: 'https://wes.example/ga4gh/wes/v1?x=1' }, /'url' must have no query/],
    [{ url: 'https://u:p@wes.example/ga4gh/wes/v1' }, /'url' must have no query, fragment or credentials/],
    [{ url: 'https://wes.example', token: 5 }, /'token' must be a non-empty string/],
    [
      { url: 'https://wes.example', token: 't', username: 'u', password: 'p' },
      /either 'token' or 'username' and 'password'/,
    ],
    [{ url: 'https://wes.example', username: 'u' }, /'username' and 'password' go together/],
    [
      { url: 'https://wes.example', timeout: 3 },
      /type wes takes url, token, username, password, not timeout/,
    ],
  ])('refuses the settings %j at start-up with one line', (options, message) => {
    let thrown: unknown;
    try {
      make(options);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).message).toMatch(/^Invalid setting EXECUTORS_FILE: executor 'cluster': /);
    expect((thrown as ConfigError).message).toMatch(message);
    expect((thrown as ConfigError).message).not.toContain('\n');
  });

  it('refuses settings with several mistakes with one line for each', () => {
    expect(() => make({ url: 'ftp://wes.example', username: 'u', timeout: 3 })).toThrow(
      [
        "Invalid setting EXECUTORS_FILE: executor 'cluster': type wes takes url, token, username, password, not timeout",
        "Invalid setting EXECUTORS_FILE: executor 'cluster': 'url' must be the http(s) URL of a WES API (…/ga4gh/wes/v1)",
        "Invalid setting EXECUTORS_FILE: executor 'cluster': 'username' and 'password' go together",
      ].join('\n'),
    );
  });
});
