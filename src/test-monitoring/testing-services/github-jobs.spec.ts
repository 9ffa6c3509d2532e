import { GithubFake, type FakeGithubJob } from '../../../test/fakes/github-fake.js';
import { buildsOf, clientSpec } from '../../../test/support/testing-service-spec.js';
import { GithubActionsService } from './github-actions.service.js';
import { MAX_JOB_REQUESTS } from './job-builds.js';
import type { BuildDetailsResult, BuildLogResult } from './testing-service.js';

const WORKFLOW = GithubFake.resource('octo-org', 'octo-repo', 'ci.yml');
const SELECTING = `${WORKFLOW}#job=test (*)`;
const jobsPath = (run: number) => `/repos/octo-org/octo-repo/actions/runs/${run}/attempts/1/jobs`;

const { fake, service, check } = clientSpec({
  name: 'github-jobs',
  fake: new GithubFake(),
  service: (config) => new GithubActionsService(config),
  resource: SELECTING,
});

const HEADER = [
  '2024-01-01T00:00:01.0000000Z ##[group]Runner Image',
  '2024-01-01T00:00:01.0000000Z Image: ubuntu-22.04',
  '2024-01-01T00:00:01.0000000Z Version: 20240101.1.0',
  '2024-01-01T00:00:01.0000000Z ##[endgroup]',
  'the rest of the log',
].join('\n');

/** A matrix: the tests of this workflow fail on macOS, another workflow's lint passes. */
const MATRIX: FakeGithubJob[] = [
  { name: 'lint', conclusion: 'success' },
  { name: 'test (ubuntu-latest, 3.11)', conclusion: 'success', log: HEADER },
  {
    name: 'test (macos-latest, 3.11)',
    conclusion: 'failure',
    labels: ['macos-latest'],
    steps: [
      { name: 'Set up job', conclusion: 'success' },
      { name: 'Run planemo test', conclusion: 'failure' },
      { name: 'Upload', conclusion: 'skipped' },
    ],
  },
  { name: 'other workflow', conclusion: 'failure' },
];

beforeEach(() => {
  fake.setRuns('octo-org', 'octo-repo', 'ci.yml', []);
});

describe('GithubActionsService job selection (API.md 16)', () => {
  it('makes each run of the matching matrix jobs, leaves out runs where none ran, and keeps the ETag', async () => {
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [
      { id: 1, conclusion: 'failure', jobs: MATRIX },
      {
        id: 2,
        conclusion: 'failure',
        jobs: [
          { name: 'lint', conclusion: 'success' },
          { name: 'other workflow', conclusion: 'failure' },
        ],
      },
      {
        id: 3,
        conclusion: 'failure',
        jobs: [
          {
            name: 'test (ubuntu-latest, 3.11)',
            conclusion: 'success',
            startedAt: '2024-01-01T10:00:00Z',
            completedAt: '2024-01-01T10:02:00Z',
          },
          {
            name: 'test (macos-latest, 3.11)',
            conclusion: 'success',
            startedAt: '2024-01-01T10:01:00Z',
            completedAt: '2024-01-01T10:05:30Z',
          },
          { name: 'other workflow', conclusion: 'failure' },
        ],
      },
    ]);
    const result = await check();
    expect(result).toMatchObject({ kind: 'builds', etag: expect.any(String) });
    const builds = buildsOf(result);
    expect(builds.map((build) => [build.buildId, build.status, build.durationSeconds])).toEqual([
      ['3_1', 'passed', 330],
      ['1_1', 'failed', 60],
    ]);
    expect(builds[1].jobs?.map((job) => [job.name, job.status])).toEqual([
      ['test (ubuntu-latest, 3.11)', 'passed'],
      ['test (macos-latest, 3.11)', 'failed'],
    ]);
    expect(fake.requests.filter((request) => request.path.endsWith('/jobs')).map((r) => r.path)).toEqual([
      jobsPath(3),
      jobsPath(2),
      jobsPath(1),
    ]);
  });

  it("reads a large matrix's jobs page after page, as GitHub pages them (at most 100 a page)", async () => {
    // 256 is GitHub's most jobs a matrix makes: three pages, the last one short.
    const matrix: FakeGithubJob[] = Array.from({ length: 256 }, (_, index) => ({
      name: `test (node-${index})`,
      conclusion: index === 255 ? 'failure' : 'success',
    }));
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [{ id: 1, conclusion: 'failure', jobs: matrix }]);
    const before = fake.jobPagesRead;
    const [build] = buildsOf(await check());
    expect(fake.jobPagesRead - before).toBe(3);
    expect(build.jobs).toHaveLength(256);
    expect(build.status).toBe('failed');
    expect(build.jobs?.at(-1)?.name).toBe('test (node-255)');
  });

  it('reads the jobs of runs until they are stored finished, and no more after', async () => {
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [
      { id: 1, conclusion: 'failure', jobs: MATRIX },
      { id: 2, status: 'in_progress', jobs: [{ name: 'test (ubuntu-latest, 3.11)', status: 'in_progress' }] },
    ]);
    const result = await check({
      knownBuildIds: new Set(['1_1', '2_1']),
      finishedBuildIds: new Set(['1_1']),
    });
    expect(buildsOf(result).map((build) => [build.buildId, build.status])).toEqual([['2_1', 'running']]);
    expect(fake.requests.filter((request) => request.path.endsWith('/jobs')).map((r) => r.path)).toEqual([
      jobsPath(2),
    ]);
  });

  it(`reads at most ${MAX_JOB_REQUESTS} runs' jobs per check, and then keeps no ETag`, async () => {
    fake.setRuns(
      'octo-org',
      'octo-repo',
      'ci.yml',
      Array.from({ length: MAX_JOB_REQUESTS + 2 }, (_, at) => ({ id: at + 1, jobs: [{ name: 'test (a)' }] })),
    );
    const result = await check({ limit: 20 });
    expect(buildsOf(result)).toHaveLength(MAX_JOB_REQUESTS);
    expect(result.kind === 'builds' ? result.etag : 'not builds').toBeUndefined();
  });

  it('ends the check with the trouble of a jobs listing', async () => {
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [{ id: 1, jobs: MATRIX }]);
    fake.fail({ kind: 'status', status: 502 }, '/jobs');
    await expect(check()).resolves.toMatchObject({ kind: 'failed' });
  });

  it('serves the log of the matching jobs only', async () => {
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [{ id: 1, jobs: MATRIX }]);
    fake.setRunLogs('octo-org', 'octo-repo', 1, [
      { name: 'lint', text: 'lint log\n' },
      { name: 'test (ubuntu-latest, 3.11)', text: 'ubuntu log\n' },
      { name: 'test (macos-latest, 3.11)', text: 'macos log\n' },
    ]);
    const log = await service.buildLog({
      serviceUrl: fake.url,
      resource: SELECTING,
      buildId: '1_1',
      signal: new AbortController().signal,
    });
    expect(await text(log)).toBe('ubuntu log\nmacos log\n');
  });

  it('tells what a build ran: its commit, the repository page, the runner of its log head, the selected jobs', async () => {
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [
      { id: 1, conclusion: 'failure', headSha: 'f00d', jobs: MATRIX },
    ]);
    const result = await service.buildDetails({ serviceUrl: fake.url, resource: SELECTING, buildId: '1_1' });
    expect(result).toMatchObject({
      kind: 'details',
      details: {
        headSha: 'f00d',
        runner: { os: null, image: 'ubuntu-22.04', version: '20240101.1.0', labels: ['ubuntu-latest'] },
      },
    });
    const details = (result as Extract<BuildDetailsResult, { kind: 'details' }>).details;
    // The fake's API is on its own origin: its web site is that origin (as for GitHub Enterprise).
    expect(details.repositoryPage).toBe(`${fake.url}/octo-org/octo-repo`);
    expect(details.jobs.map((job) => job.name)).toEqual([
      'test (ubuntu-latest, 3.11)',
      'test (macos-latest, 3.11)',
    ]);
    expect(details.jobs[1].steps.map((step) => [step.name, step.status])).toEqual([
      ['Set up job', 'passed'],
      ['Run planemo test', 'failed'],
      ['Upload', 'skipped'],
    ]);
  });

  it('tells nothing of a run GitHub does not know, and no runner when the job log is gone', async () => {
    await expect(
      service.buildDetails({ serviceUrl: fake.url, resource: WORKFLOW, buildId: '99_1' }),
    ).resolves.toMatchObject({ kind: 'none' });
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [{ id: 1, jobs: [{ name: 'build' }] }]);
    await expect(
      service.buildDetails({ serviceUrl: fake.url, resource: WORKFLOW, buildId: '1_1' }),
    ).resolves.toMatchObject({
      kind: 'details',
      details: { runner: { os: null, image: null, version: null, labels: ['ubuntu-latest'] } },
    });
  });

  it('keeps the selector through canonicalTarget and checks the workflow under it', () => {
    expect(
      service.canonicalTarget({
        url: 'https://github.com',
        resource: 'https://github.com/o/r/actions/workflows/ci.yml#job=test (*)',
      }),
    ).toEqual({ url: 'https://api.github.com', resource: 'repos/o/r/actions/workflows/ci.yml#job=test (*)' });
    expect(service.resourceProblem(SELECTING)).toBeUndefined();
  });
});

async function text(result: BuildLogResult): Promise<string> {
  if (result.kind !== 'log') {
    throw new Error(`expected a log, got ${JSON.stringify(result)}`);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of result.chunks) {
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString('utf8');
}
