import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { request as httpRequest } from 'node:http';
import { GitlabService } from '../../src/test-monitoring/testing-services/gitlab.service.js';
import {
  jobsInStageOrder,
  parseGitlabResource,
} from '../../src/test-monitoring/testing-services/gitlab-pipelines.js';
import { GitlabFake, type FakeGitlabPipeline } from '../fakes/gitlab-fake.js';
import { gitlabSchemas } from '../support/gitlab-schemas.js';
import { buildsOf, clientConfig } from '../support/testing-service-spec.js';
import { subjectWithFake, testingServiceContract } from './testing-service.contract.js';

const STATES = { passed: 'success', failed: 'failed', running: 'running' } as const;
const TOKEN = 'glpat-contract-token';

testingServiceContract('GitLab CI (loopback fake)', () => {
  const fake = new GitlabFake();
  let project = 0;
  return subjectWithFake(fake, (config) => ({
    service: new GitlabService(config),
    seed: (builds) => {
      const path = `group/sub/project-${++project}`;
      fake.addProject(path);
      fake.push(path, { branch: 'main', files: { 'README.md': 'x' } });
      fake.setPipelines(
        path,
        builds.map((kind, index) => ({ id: index + 1, status: STATES[kind] })),
      );
      return path;
    },
    unknownResource: 'group/none',
    malformedResource: 'group/../other',
    credentials: () => ({ type: 'gitlab', url: fake.url, token: TOKEN }),
    seedLog: (log) => {
      const path = `group/logs-${++project}`;
      fake.addProject(path);
      fake.setPipelines(path, [
        {
          id: 500,
          status: 'failed',
          jobs: [{ id: 9001, name: 'test', stage: 'test', status: 'failed', trace: log }],
        },
      ]);
      return { resource: GitlabFake.resource(path), buildId: '500' };
    },
  }));
});

describe('GitLab CI client', () => {
  let fake: GitlabFake;
  let service: GitlabService;
  let dataDir: string;
  const validate = gitlabSchemas();

  beforeAll(async () => {
    fake = new GitlabFake();
    await fake.start();
    dataDir = mkdtempSync(join(tmpdir(), 'gitlab-client-'));
    service = new GitlabService(clientConfig(dataDir));
  });

  afterAll(async () => {
    await fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  beforeEach(() => {
    fake.heal();
    fake.resetLog();
  });

  const check = (resource: string, extra: object = {}) =>
    service.latestBuilds({ serviceUrl: fake.url, resource, ...extra });

  /** GET of a path on the fake, its status and JSON body, as any client sees it. */
  function get(path: string): Promise<{ status: number; body: unknown }> {
    return new Promise((resolve, reject) => {
      httpRequest(`${fake.url}${path}`, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
        );
      })
        .on('error', reject)
        .end();
    });
  }

  describe("the fake's replies validate against GitLab's own schemas", () => {
    it('pipelines, jobs, branches, tags and commits', async () => {
      fake.addProject('schema/check');
      const sha = fake.push('schema/check', { branch: 'main', tag: 'v1', files: { a: 'b' } });
      fake.setPipelines('schema/check', [
        {
          id: 1,
          status: 'failed',
          jobs: [
            {
              id: 11,
              name: 'unit',
              stage: 'test',
              status: 'failed',
              failureReason: 'script_failure',
              runner: 'shared-runners-manager-1',
              tags: ['docker'],
            },
          ],
        },
        { id: 2, status: 'running', jobs: [{ id: 12, name: 'build', stage: 'build', status: 'running' }] },
      ]);
      const project = encodeURIComponent('schema/check');
      const replies: [string, string][] = [
        [`/api/v4/projects/${project}/pipelines`, 'public_api/v4/pipelines.json'],
        [`/api/v4/projects/${project}/pipelines/1/jobs`, 'public_api/v4/jobs.json'],
        [`/api/v4/projects/${project}/repository/branches`, 'public_api/v4/branches.json'],
        [`/api/v4/projects/${project}/repository/branches/main`, 'public_api/v4/branch.json'],
        [`/api/v4/projects/${project}/repository/tags`, 'public_api/v4/tags.json'],
        [`/api/v4/projects/${project}/repository/tags/v1`, 'public_api/v4/tag.json'],
        [`/api/v4/projects/${project}/repository/commits/${sha}`, 'public_api/v4/commit/basic.json'],
      ];
      for (const [path, schema] of replies) {
        const reply = await get(path);
        expect(reply.status).toBe(200);
        // The jobs listing has no schema file of its own: each job is job.json.
        const errors =
          schema === 'public_api/v4/jobs.json'
            ? (reply.body as unknown[]).flatMap((job) => validate('public_api/v4/job.json', job))
            : validate(schema, reply.body);
        expect({ path, errors }).toEqual({ path, errors: [] });
      }
    });
  });

  it('maps every pipeline status as API.md 18 says, and leaves skipped pipelines out', async () => {
    const statuses = [
      'success',
      'failed',
      'canceled',
      'skipped',
      'created',
      'waiting_for_resource',
      'preparing',
      'pending',
      'running',
      'scheduled',
      'manual',
    ];
    fake.addProject('map/states');
    fake.setPipelines(
      'map/states',
      statuses.map((status, index): FakeGitlabPipeline => ({ id: 100 - index, status })),
    );
    const builds = buildsOf(await check('map/states', { limit: 20 }));
    expect(Object.fromEntries(builds.map((build) => [build.buildId, build.status]))).toEqual({
      '100': 'passed',
      '99': 'failed',
      '98': 'error',
      '96': 'running',
      '95': 'running',
      '94': 'running',
      '93': 'running',
      '92': 'running',
      '91': 'running',
      '90': 'running',
    });
    // The listing has no start: a finished pipeline lasted from its creation to its last update.
    expect(builds[0]).toMatchObject({
      url: `${fake.url}/map/states/-/pipelines/100`,
      durationSeconds: 95,
    });
  });

  it('asks for the pipelines of the resource ref only, with the project path URL-encoded', async () => {
    fake.addProject('deep/group/ref-only');
    fake.setPipelines('deep/group/ref-only', [
      { id: 1, ref: 'main' },
      { id: 2, ref: 'dev' },
    ]);
    const builds = buildsOf(await check('deep/group/ref-only?ref=dev'));
    expect(builds.map((build) => build.buildId)).toEqual(['2']);
    expect(fake.requests.at(-1)?.url).toMatch(
      /^\/api\/v4\/projects\/deep%2Fgroup%2Fref-only\/pipelines\?per_page=10&ref=dev$/,
    );
  });

  it('refuses paths that climb or hide a slash, without a request', async () => {
    for (const resource of [
      'group/..',
      'group/./project',
      'group%2F..%2Fx',
      'group/sub%2Fproject',
      'a\\b/c',
      'x/y?ref=../z',
      'x/y#job=',
      'x/y?token=1',
    ]) {
      expect(parseGitlabResource(resource)).toBeUndefined();
      await expect(check(resource)).resolves.toMatchObject({ kind: 'failed' });
    }
    expect(fake.requests).toHaveLength(0);
    expect(parseGitlabResource('group%2Fsub%2Fproject?ref=main#job=test*')).toEqual({
      project: 'group/sub/project',
      ref: 'main',
      jobGlob: 'test*',
    });
    expect(parseGitlabResource('278964')).toEqual({ project: '278964' });
  });

  it('pauses on RateLimit-* headers until their reset', async () => {
    fake.addProject('rate/limited');
    const resetAt = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_600_000);
    fake.limitRate({ status: 429, resetAt, headerPrefix: 'ratelimit' });
    await expect(check('rate/limited')).resolves.toEqual({ kind: 'rate_limited', until: resetAt });
  });

  it('starts a pipeline on the default branch with the token in a Bearer header', async () => {
    fake.addProject('trigger/me', { defaultBranch: 'trunk' });
    fake.push('trigger/me', { branch: 'trunk', files: { a: 'b' } });
    const result = await service.triggerBuild({
      serviceUrl: fake.url,
      resource: 'trigger/me',
      credentials: { type: 'gitlab', url: fake.url, token: TOKEN },
    });
    expect(result).toEqual({ kind: 'triggered', how: 'build' });
    expect(fake.triggers.at(-1)).toEqual({ project: 'trigger/me', ref: 'trunk' });
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("reads the jobs' traces in stage order, and exposes the jobs with their failure reasons", async () => {
    fake.addProject('logs/stages');
    fake.setPipelines('logs/stages', [
      {
        id: 7,
        status: 'failed',
        jobs: [
          { id: 30, name: 'deploy', stage: 'deploy', status: 'skipped' },
          {
            id: 21,
            name: 'unit',
            stage: 'test',
            status: 'failed',
            failureReason: 'script_failure',
            trace: 'unit\n',
          },
          { id: 22, name: 'lint', stage: 'test', status: 'success', trace: 'lint\n' },
          { id: 10, name: 'compile', stage: 'build', status: 'success', trace: 'compile\n' },
        ],
      },
    ]);
    const target = { serviceUrl: fake.url, resource: 'logs/stages' };
    const jobs = await service.pipelineJobs(target, '7');
    expect(jobs).toMatchObject({ kind: 'jobs' });
    expect(jobs.kind === 'jobs' ? jobs.jobs.find((job) => job.id === 21) : undefined).toMatchObject({
      id: 21,
      name: 'unit',
      stage: 'test',
      status: 'failed',
      failureReason: 'script_failure',
      url: `${fake.url}/logs/stages/-/jobs/21`,
      tags: [],
    });
    const log = await service.buildLog({ ...target, buildId: '7', signal: new AbortController().signal });
    const parts: Buffer[] = [];
    if (log.kind === 'log') {
      for await (const chunk of log.chunks) {
        parts.push(Buffer.from(chunk));
      }
    }
    expect(Buffer.concat(parts).toString()).toBe('compile\nunit\nlint\n');
    expect(
      jobsInStageOrder([
        { id: 5, stage: 'b' },
        { id: 9, stage: 'a' },
        { id: 3, stage: 'a' },
      ]),
    ).toEqual([
      { id: 3, stage: 'a' },
      { id: 9, stage: 'a' },
      { id: 5, stage: 'b' },
    ]);
  });

  // The service's memory while it serves such a tail is measured by test/bench/build-logs.bench-spec.ts.
  it('streams a 200 MiB trace as it comes', async () => {
    const size = 200 * 1024 * 1024;
    fake.addProject('logs/huge');
    fake.setPipelines('logs/huge', [
      {
        id: 1,
        jobs: [{ id: 1, name: 'huge', stage: 'test', status: 'success', trace: () => lines(size) }],
      },
    ]);
    const log = await service.buildLog({
      serviceUrl: fake.url,
      resource: 'logs/huge',
      buildId: '1',
      signal: new AbortController().signal,
    });
    expect(log.kind).toBe('log');
    let total = 0;
    let largest = 0;
    if (log.kind === 'log') {
      for await (const chunk of log.chunks) {
        total += chunk.length;
        largest = Math.max(largest, chunk.length);
      }
    }
    expect(total).toBe(size);
    expect(largest).toBeLessThanOrEqual(1024 * 1024);
  });
});

/** `bytes` of log lines, made as they are read. */
function lines(bytes: number): Readable {
  const line = Buffer.from(`${'x'.repeat(99)}\n`);
  const block = Buffer.concat(Array.from({ length: 1024 }, () => line));
  let left = bytes;
  return new Readable({
    read() {
      if (left <= 0) {
        this.push(null);
        return;
      }
      const piece = block.subarray(0, Math.min(block.length, left));
      left -= piece.length;
      this.push(piece);
    },
  });
}
