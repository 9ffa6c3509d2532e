import { TravisFake } from '../../../test/fakes/travis-fake.js';
import { buildsOf, clientSpec } from '../../../test/support/testing-service-spec.js';
import type { BuildLogResult } from './testing-service.js';
import { TravisService } from './travis.service.js';

const SLUG = 'octo-org/octo-repo';
const SELECTING = `${TravisFake.resource(SLUG)}#job=test *`;

const { fake, service, check } = clientSpec({
  name: 'travis-jobs',
  fake: new TravisFake(),
  service: (config) => new TravisService(config),
  resource: SELECTING,
});

const JOBS = [
  { name: 'lint', state: 'failed' },
  { name: 'test galaxy', state: 'passed', os: 'linux', dist: 'focal' },
  { name: 'test cwl', state: 'errored', os: 'linux', dist: 'jammy' },
];

describe('TravisService job selection (API.md 16)', () => {
  it('makes each build of its jobs that match by name, and leaves out builds stored finished', async () => {
    fake.setRepo(SLUG, [
      { id: 10, state: 'failed', jobs: JOBS },
      {
        id: 20,
        state: 'failed',
        jobs: [
          { name: 'lint', state: 'failed' },
          { name: 'test galaxy', state: 'passed' },
        ],
      },
      { id: 30, state: 'passed', jobs: [{ name: 'test galaxy' }] },
    ]);
    const builds = buildsOf(
      await check({ knownBuildIds: new Set(['30']), finishedBuildIds: new Set(['30']) }),
    );
    expect(builds.map((build) => [build.buildId, build.status])).toEqual([
      ['20', 'passed'],
      ['10', 'error'],
    ]);
    expect(fake.requests.map((request) => request.path).filter((path) => path.startsWith('/build/'))).toEqual(
      ['/build/20/jobs', '/build/10/jobs'],
    );
  });

  it('serves the logs of the matching jobs only', async () => {
    fake.setRepo(SLUG, [{ id: 10, state: 'failed', jobs: JOBS }]);
    ['lint log\n', 'galaxy log\n', 'cwl log\n'].forEach((log, at) => fake.setJobLog(10 + 1 + at, log));
    const log = await service.buildLog({
      serviceUrl: fake.url,
      resource: SELECTING,
      buildId: '10',
      signal: new AbortController().signal,
    });
    expect(await text(log)).toBe('galaxy log\ncwl log\n');
  });

  it("tells what a build ran: its commit, its GitHub page, the first selected job's os and dist, the jobs", async () => {
    fake.setRepo(SLUG, [{ id: 10, state: 'failed', sha: 'f00d', jobs: JOBS }]);
    await expect(
      service.buildDetails({ serviceUrl: fake.url, resource: SELECTING, buildId: '10' }),
    ).resolves.toEqual({
      kind: 'details',
      details: {
        headSha: 'f00d',
        repositoryPage: `https://github.com/${SLUG}`,
        runner: { os: 'linux', image: 'focal', version: null, labels: [] },
        jobs: [
          expect.objectContaining({ name: 'test galaxy', status: 'passed', conclusion: 'passed' }),
          expect.objectContaining({ name: 'test cwl', status: 'error', conclusion: 'errored' }),
        ],
      },
    });
    await expect(
      service.buildDetails({ serviceUrl: fake.url, resource: SELECTING, buildId: '99' }),
    ).resolves.toMatchObject({ kind: 'none' });
  });

  it('keeps the selector through canonicalTarget', () => {
    expect(
      service.canonicalTarget({ url: 'https://travis-ci.com', resource: 'github/o/r#job=test *' }),
    ).toEqual({
      url: 'https://api.travis-ci.com',
      resource: 'repo/o%2Fr#job=test *',
    });
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
