import { readFileSync } from 'node:fs';
import { runnerOfLogHead } from './github-runs.js';
import { buildOfJobs, selectJobs } from './job-builds.js';
import type { Build, BuildJob } from './testing-service.js';

const RUN: Build = {
  buildId: '7_1',
  status: 'failed',
  startedAt: new Date('2024-01-01T10:00:00Z'),
  durationSeconds: 900,
  url: 'https://github.com/o/r/actions/runs/7',
};

function job(name: string, status: BuildJob['status'], minutes = [0, 5]): BuildJob {
  return {
    name,
    status,
    conclusion: status,
    startedAt: new Date(Date.UTC(2024, 0, 1, 10, minutes[0])),
    finishedAt: new Date(Date.UTC(2024, 0, 1, 10, minutes[1])),
    steps: [],
  };
}

describe('builds made of their selected jobs (API.md 16)', () => {
  const jobs = [
    job('lint', 'failed'),
    job('test (ubuntu-latest, 3.11)', 'passed', [1, 4]),
    job('test (macos-latest, 3.11)', 'passed', [2, 8]),
    job('deploy', 'skipped'),
  ];

  it('passes when the matching jobs pass, whatever the others did, and lasts from their first start to their last end', () => {
    const build = buildOfJobs(RUN, selectJobs(jobs, 'test (*)'));
    expect(build).toMatchObject({ status: 'passed', durationSeconds: 7 * 60 });
    expect(build?.jobs?.map((j) => j.name)).toEqual([
      'test (ubuntu-latest, 3.11)',
      'test (macos-latest, 3.11)',
    ]);
  });

  it('reports a failure before an error, an error before an abort, an abort before a pass', () => {
    const of = (...statuses: BuildJob['status'][]) =>
      buildOfJobs(
        RUN,
        statuses.map((status, at) => job(`j${at}`, status)),
      )?.status;
    expect(of('passed', 'aborted', 'failed', 'error')).toBe('failed');
    expect(of('passed', 'aborted', 'error')).toBe('error');
    expect(of('passed', 'aborted')).toBe('aborted');
    expect(of('passed', 'skipped')).toBe('passed');
  });

  it('is running while a matching job runs, waiting while they only wait, with no duration yet', () => {
    expect(buildOfJobs(RUN, [job('a', 'passed'), job('b', 'running')])).toMatchObject({
      status: 'running',
      durationSeconds: 0,
    });
    expect(buildOfJobs(RUN, [job('a', 'waiting')])?.status).toBe('waiting');
  });

  it("hands the classifier the failing selected jobs' own words, not the whole run's", () => {
    const run: Build = { ...RUN, ciFields: ['conclusion: failure'] };
    const cancelled: BuildJob = { ...job('test (macos-latest, 3.11)', 'aborted'), conclusion: 'cancelled' };
    const selected = [job('test (ubuntu-latest, 3.11)', 'passed'), cancelled];
    expect(buildOfJobs(run, selected)?.ciFields).toEqual(['conclusion: cancelled']);
    // Travis names its field `state`: the jobs' words go under it.
    const travis: Build = { ...RUN, ciFields: ['state: failed'] };
    const errored: BuildJob = { ...job('b', 'error'), conclusion: 'errored' };
    expect(buildOfJobs(travis, [errored])?.ciFields).toEqual(['state: errored']);
    // A build its selected jobs make pass carries none, whatever the run said.
    expect(buildOfJobs(run, [job('a', 'passed')])?.ciFields).toBeUndefined();
  });

  it('is no build of the instance when no matching job ran in a finished run; an unfinished one keeps its status', () => {
    expect(buildOfJobs(RUN, selectJobs(jobs, 'deploy'))).toBeUndefined();
    expect(buildOfJobs(RUN, selectJobs(jobs, 'nothing*'))).toBeUndefined();
    expect(buildOfJobs({ ...RUN, status: 'running', durationSeconds: 0 }, [])?.status).toBe('running');
  });
});

describe('runnerOfLogHead', () => {
  it('reads the operating system, image and version of the "Set up job" group, timestamps and all', () => {
    const head = [
      "\uFEFF2024-01-01T00:00:01.0000000Z Current runner version: '2.311.0'",
      '2024-01-01T00:00:01.0000000Z ##[group]Operating System',
      '2024-01-01T00:00:01.0000000Z Ubuntu',
      '2024-01-01T00:00:01.0000000Z 22.04.3',
      '2024-01-01T00:00:01.0000000Z LTS',
      '2024-01-01T00:00:01.0000000Z ##[endgroup]',
      '2024-01-01T00:00:01.0000000Z ##[group]Runner Image',
      '2024-01-01T00:00:01.0000000Z Image: ubuntu-22.04',
      '2024-01-01T00:00:01.0000000Z Version: 20240101.1.0',
      '2024-01-01T00:00:01.0000000Z Included Software: https://github.com/actions/runner-images',
      '2024-01-01T00:00:01.0000000Z ##[endgroup]',
      '2024-01-01T00:00:01.0000000Z ##[group]Runner Image Provisioner',
      '2024-01-01T00:00:01.0000000Z 2.0.321.1',
      '2024-01-01T00:00:01.0000000Z ##[endgroup]',
      '2024-01-01T00:00:02.0000000Z Version: not the image',
    ].join('\r\n');
    expect(runnerOfLogHead(head)).toEqual({
      os: 'Ubuntu 22.04.3 LTS',
      image: 'ubuntu-22.04',
      version: '20240101.1.0',
    });
  });

  it('reads the older "Virtual Environment" group, and knows nothing of a log without them', () => {
    expect(
      runnerOfLogHead(
        '##[group]Virtual Environment\nEnvironment: ubuntu-20.04\nVersion: 20220101.1\n##[endgroup]\n',
      ),
    ).toEqual({ os: null, image: 'ubuntu-20.04', version: '20220101.1' });
    expect(runnerOfLogHead('just a log\n')).toEqual({ os: null, image: null, version: null });
  });

  it("reads a real job log's head, as GitHub's runner 2.283 wrote it (test/fixtures/ci-logs)", () => {
    const log = readFileSync(
      new URL('../../../test/fixtures/ci-logs/github-masci-elastic-logs-job.txt', import.meta.url),
      'utf8',
    );
    expect(runnerOfLogHead(log)).toEqual({
      os: 'Ubuntu 20.04.3 LTS',
      image: 'ubuntu-20.04',
      version: '20210919.1',
    });
  });
});
