import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GitlabFake, sampleTrace, type FakeGitlabJob } from '../../../test/fakes/gitlab-fake.js';
import { clientConfig, clientSpec } from '../../../test/support/testing-service-spec.js';
import { cleanLine, FailureClassifier } from '../failures/failure-classifier.js';
import { GitlabService } from './gitlab.service.js';

const PATH = 'lab/ci-matrix';
const RESOURCE = GitlabFake.resource(PATH);

const { fake, service, builds, dataDir } = clientSpec({
  name: 'gitlab',
  fake: new GitlabFake(),
  service: (config) => new GitlabService(config),
  resource: RESOURCE,
});

/** A pipeline of one CI workflow testing two scientific workflows, `wf-a` and `wf-b`, after a build stage. */
function matrix(id: number, jobs: Partial<Record<'build' | 'wf-a' | 'wf-b', Partial<FakeGitlabJob>>>) {
  const stageOf = { build: 'build', 'wf-a': 'test', 'wf-b': 'test' } as const;
  const order = ['build', 'wf-a', 'wf-b'] as const;
  return order
    .filter((name) => jobs[name] !== undefined)
    .map((name, index) => ({
      id: id * 10 + index,
      name,
      stage: stageOf[name],
      status: 'success',
      trace: `trace of ${name} in ${id}\n`,
      ...jobs[name],
    }));
}

const jobsRequests = () => fake.requests.filter((request) => request.path.endsWith('/jobs')).length;

beforeEach(() => {
  fake.addProject(PATH);
  fake.push(PATH, { branch: 'main', files: { 'README.md': 'x' } });
});

describe('GitLab job selection (API.md 16)', () => {
  beforeEach(() => {
    fake.setPipelines(PATH, [
      {
        id: 3,
        status: 'failed',
        jobs: matrix(3, {
          build: {},
          'wf-a': {},
          'wf-b': { status: 'failed', failureReason: 'script_failure' },
        }),
      },
      { id: 2, status: 'success', jobs: matrix(2, { build: {}, 'wf-b': {} }) },
      { id: 1, status: 'canceled', jobs: matrix(1, { build: {}, 'wf-a': { status: 'canceled' } }) },
    ]);
  });

  it("makes a selecting instance's builds of its matching jobs only", async () => {
    const a = await builds({ resource: `${RESOURCE}#job=wf-a` });
    // Pipeline 2 ran no wf-a: it did not test that workflow.
    expect(a.map((build) => [build.buildId, build.status])).toEqual([
      ['3', 'passed'],
      ['1', 'error'],
    ]);
    expect(a[0].ciFields).toBeUndefined();
    expect(a[1].ciFields).toEqual(['status: canceled']);
    const b = await builds({ resource: `${RESOURCE}#job=wf-*` });
    expect(b.map((build) => [build.buildId, build.status])).toEqual([
      ['3', 'failed'],
      ['2', 'passed'],
      ['1', 'error'],
    ]);
    expect(b[0].ciFields).toEqual(['status: failed', 'failure_reason: script_failure']);
    expect(b[0].jobs?.map((job) => [job.name, job.status, job.conclusion])).toEqual([
      ['wf-a', 'passed', 'success'],
      ['wf-b', 'failed', 'failed'],
    ]);
  });

  it('reads no jobs of pipelines stored finished', async () => {
    await builds({ resource: `${RESOURCE}#job=wf-a`, finishedBuildIds: new Set(['1', '2', '3']) });
    expect(jobsRequests()).toBe(0);
  });

  it("reads a selecting instance's log from its matching jobs' traces only", async () => {
    const result = await service.buildLog({
      serviceUrl: fake.url,
      resource: `${RESOURCE}#job=wf-b`,
      buildId: '3',
      signal: new AbortController().signal,
    });
    expect(result.kind).toBe('log');
    const chunks: Buffer[] = [];
    for await (const chunk of result.kind === 'log' ? result.chunks : []) {
      // Each chunk is a view of a buffer the next one reuses.
      chunks.push(Buffer.from(chunk));
    }
    expect(Buffer.concat(chunks).toString()).toBe('trace of wf-b in 3\n');
  });
});

describe('GitLab fields for failure classes (API.md 16)', () => {
  const classifier = new FailureClassifier();

  it("hands a failing pipeline's status and its failed jobs' failure_reason to the classifier", async () => {
    fake.setPipelines(PATH, [
      {
        id: 7,
        status: 'failed',
        jobs: matrix(7, {
          build: { status: 'failed', failureReason: 'runner_system_failure' },
          'wf-a': { status: 'skipped' },
        }),
      },
      { id: 6, status: 'success', jobs: matrix(6, { build: {} }) },
    ]);
    const [failed, passed] = await builds();
    expect(failed.ciFields).toEqual(['status: failed', 'failure_reason: runner_system_failure']);
    expect(passed.ciFields).toBeUndefined();
    expect(classifier.decidedByFields(failed.ciFields ?? [])).toEqual({
      class: 'infrastructure',
      reason: 'the runner failed',
      evidence: ['failure_reason: runner_system_failure'],
    });
    // One jobs listing: the passing pipeline's jobs are not read.
    expect(jobsRequests()).toBe(1);
  });

  it('keeps the pipeline status alone when its jobs cannot be read', async () => {
    fake.setPipelines(PATH, [{ id: 8, status: 'failed', jobs: matrix(8, { build: { status: 'failed' } }) }]);
    fake.fail({ kind: 'status', status: 500 }, '/jobs');
    const [failed] = await builds();
    expect(failed.ciFields).toEqual(['status: failed']);
  });

  it.each([
    ['status: canceled', 'infrastructure', 'cancelled on the CI'],
    ['failure_reason: stuck_or_timeout_failure', 'infrastructure', 'timed out on the CI'],
    ['failure_reason: job_execution_timeout', 'infrastructure', 'timed out on the CI'],
    ['failure_reason: scheduler_failure', 'infrastructure', 'the CI service failed'],
    ['failure_reason: data_integrity_failure', 'infrastructure', 'the CI service failed'],
    ['failure_reason: runner_unsupported', 'infrastructure', 'the runner failed'],
  ])('decides %s as %s before the log', (field, cls, reason) => {
    expect(classifier.decidedByFields(['status: failed', field])).toEqual({
      class: cls,
      reason,
      evidence: [field],
    });
  });

  it('leaves a script_failure to the log, and calls it a test failure when the log does not tell', () => {
    const fields = ['status: failed', 'failure_reason: script_failure'];
    expect(classifier.decidedByFields(fields)).toBeUndefined();
    expect(
      classifier.classify({ fields, log: 'curl: (6) Could not resolve host: example.org\n' }).class,
    ).toBe('infrastructure');
    expect(classifier.classify({ fields, log: 'nothing to see\n' })).toEqual({
      class: 'test',
      reason: 'the job script failed',
      evidence: ['failure_reason: script_failure'],
    });
  });
});

describe("gitlabhq's own runner trace (test/fixtures/gitlab/trace/sample_trace)", () => {
  const classifier = new FailureClassifier();
  const trace = sampleTrace();

  it('is read through buildLog byte for byte: colours and section markers as GitLab keeps them', async () => {
    fake.setPipelines(PATH, [
      { id: 9, status: 'failed', jobs: matrix(9, { 'wf-a': { status: 'failed', trace } }) },
    ]);
    const result = await service.buildLog({
      serviceUrl: fake.url,
      resource: RESOURCE,
      buildId: '9',
      signal: new AbortController().signal,
    });
    expect(result.kind).toBe('log');
    const chunks: Buffer[] = [];
    for await (const chunk of result.kind === 'log' ? result.chunks : []) {
      // Each chunk is a view of a buffer the next one reuses.
      chunks.push(Buffer.from(chunk));
    }
    expect(Buffer.concat(chunks).equals(Buffer.from(trace, 'utf8'))).toBe(true);
    expect(trace).toContain('section_start:1522927141:build_script\n');
    expect(trace).toContain('\u001b[32;1m$ bundle --version\u001b[0;m\n');
  });

  it('holds no failure the patterns know: 819 examples, 0 failures, 92 pending, and the job succeeded', () => {
    // The pending list opens "Failures listed here are expected"; the uploads answered 200 and 201.
    const lines = trace.split('\n').map(cleanLine);
    expect(lines).toContain('819 examples, 0 failures, 92 pending');
    expect(lines).toContain('Job succeeded');
    expect(lines).toContain('section_end:1522927520:upload_artifacts');
    expect(classifier.classify({ fields: ['status: failed'], log: trace })).toEqual({
      class: 'unknown',
      reason: 'no known pattern in the CI fields or the log',
      evidence: ['status: failed'],
    });
    // A script_failure on such a log: the field is all there is to go by.
    const fields = ['status: failed', 'failure_reason: script_failure'];
    expect(classifier.classify({ fields, log: trace })).toEqual({
      class: 'test',
      reason: 'the job script failed',
      evidence: ['failure_reason: script_failure'],
    });
  });

  it('names the failing tests when the same trace ends in failures', () => {
    const failing = trace.replace(
      '819 examples, 0 failures, 92 pending',
      '819 examples, 2 failures, 92 pending',
    );
    expect(
      classifier.classify({ fields: ['status: failed', 'failure_reason: script_failure'], log: failing }),
    ).toEqual({
      class: 'test',
      reason: 'failing tests reported',
      evidence: ['819 examples, 2 failures, 92 pending'],
    });
  });
});

describe('GitlabService.buildDetails (API.md 16: the changes route)', () => {
  beforeEach(() => {
    fake.setPipelines(PATH, [
      {
        id: 4,
        status: 'failed',
        jobs: matrix(4, {
          build: { runner: 'saas-linux-small-amd64', tags: ['saas-linux-small-amd64'] },
          'wf-a': { status: 'failed', failureReason: 'script_failure', runner: 'blue-2.shared.runners' },
          'wf-b': { status: 'skipped' },
        }),
      },
    ]);
  });

  it('tells the commit, the jobs in stage order, the runner and where commits compare', async () => {
    const result = await service.buildDetails({
      serviceUrl: `${fake.url}/`,
      resource: RESOURCE,
      buildId: '4',
    });
    if (result.kind !== 'details') {
      throw new Error(JSON.stringify(result));
    }
    const { details } = result;
    expect(details.headSha).toMatch(/^[0-9a-f]{40}$/);
    expect(details.repositoryPage).toBe(`${fake.url}/lab/ci-matrix/-`);
    expect(details.runner).toEqual({
      os: null,
      image: 'saas-linux-small-amd64',
      version: null,
      labels: ['saas-linux-small-amd64'],
    });
    expect(details.jobs.map((job) => [job.name, job.status, job.conclusion, job.url])).toEqual([
      ['build', 'passed', 'success', `${fake.url}/lab/ci-matrix/-/jobs/40`],
      ['wf-a', 'failed', 'failed', `${fake.url}/lab/ci-matrix/-/jobs/41`],
      ['wf-b', 'skipped', 'skipped', `${fake.url}/lab/ci-matrix/-/jobs/42`],
    ]);
  });

  it("tells a selecting instance's jobs only, with their runner", async () => {
    const result = await service.buildDetails({
      serviceUrl: fake.url,
      resource: `${RESOURCE}#job=wf-a`,
      buildId: '4',
    });
    expect(result.kind === 'details' && result.details.jobs.map((job) => job.name)).toEqual(['wf-a']);
    expect(result.kind === 'details' && result.details.runner?.image).toBe('blue-2.shared.runners');
  });

  it('answers none for a pipeline GitLab does not know, and a fault for a failing GitLab', async () => {
    expect(
      (await service.buildDetails({ serviceUrl: fake.url, resource: RESOURCE, buildId: '99' })).kind,
    ).toBe('none');
    fake.fail({ kind: 'status', status: 502 }, '/jobs');
    expect(
      (await service.buildDetails({ serviceUrl: fake.url, resource: RESOURCE, buildId: '4' })).kind,
    ).toBe('refused');
  });

  it('has no comparison page for a project named by its id', async () => {
    const id = fake.addProject('lab/by-id');
    fake.setPipelines('lab/by-id', [{ id: 5, jobs: matrix(5, { build: {} }) }]);
    const result = await service.buildDetails({ serviceUrl: fake.url, resource: String(id), buildId: '5' });
    expect(result.kind === 'details' && result.details.repositoryPage).toBeUndefined();
    expect(result.kind === 'details' && result.details.jobs.length).toBe(1);
  });
});

describe('GitlabService.claimsUrl (API.md 18: a crate names GitLab by its instance url)', () => {
  it('claims gitlab.com and the configured gitlab instances, nothing else', () => {
    const file = join(dataDir, 'claims-services.yaml');
    writeFileSync(file, 'services:\n  - {type: gitlab, url: "https://git.example.org/lab", token: "t"}\n');
    const configured = new GitlabService(clientConfig(dataDir, { TESTING_SERVICES_FILE: file }));
    expect(configured.claimsUrl('https://gitlab.com')).toBe(true);
    expect(configured.claimsUrl('https://GitLab.com/api/v4/')).toBe(true);
    expect(configured.claimsUrl('https://git.example.org/lab/')).toBe(true);
    expect(configured.claimsUrl('https://git.example.org/lab/api/v4')).toBe(true);
    expect(configured.claimsUrl('https://git.example.org')).toBe(false);
    expect(configured.claimsUrl('https://github.com')).toBe(false);
    expect(configured.claimsUrl('not a url')).toBe(false);
  });
});
