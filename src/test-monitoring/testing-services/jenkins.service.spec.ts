import { JenkinsFake, type FakeJenkinsBuild } from '../../../test/fakes/jenkins-fake.js';
import { JenkinsService } from './jenkins.service.js';
import type { BuildStatus } from './testing-service.js';
import { clientSpec } from '../../../test/support/testing-service-spec.js';

const RESOURCE = JenkinsFake.resource('wf-tests');
/** See github-actions.service.spec.ts: under jest a timeout may read "cancelled". */
const TIMED_OUT = expect.stringMatching(/did not answer within 1 s|was cancelled/);

const { fake, configWith, check, builds } = clientSpec({
  name: 'jenkins',
  fake: new JenkinsFake(),
  service: (config) => new JenkinsService(config),
  resource: RESOURCE,
  serviceUrl: (jenkins) => `${jenkins.url}/`,
});

beforeEach(() => {
  fake.setJob('wf-tests', []);
});

describe('JenkinsService', () => {
  describe('state mapping (API.md 2.8)', () => {
    const table: [Omit<FakeJenkinsBuild, 'number'>, BuildStatus][] = [
      [{ building: true, result: null }, 'running'],
      [{ result: 'SUCCESS' }, 'passed'],
      [{ result: 'FAILURE' }, 'failed'],
      [{ result: 'UNSTABLE' }, 'failed'],
      [{ result: 'ABORTED' }, 'aborted'],
      [{ result: 'NOT_BUILT' }, 'aborted'],
      [{ result: 'SOMETHING_NEW' }, 'error'],
      [{ building: false, result: null }, 'error'],
    ];

    it.each(table)('maps %j to %s', async (native, expected) => {
      fake.setJob('wf-tests', [{ number: 1, ...native }]);
      const [build] = await builds();
      expect(build.status).toBe(expected);
    });

    it('hands its result to the failure classifier on failing builds only (API.md 16)', async () => {
      fake.setJob('wf-tests', [
        { number: 2, result: 'ABORTED' },
        { number: 1, result: 'SUCCESS' },
      ]);
      const [aborted, passed] = await builds();
      expect(aborted.ciFields).toEqual(['result: ABORTED']);
      expect(passed.ciFields).toBeUndefined();
    });

    it('maps every state in one listing, newest build first', async () => {
      fake.setJob(
        'wf-tests',
        table.map(([native], index) => ({ number: index + 1, ...native })),
      );
      const result = await builds({ limit: 100 });
      expect(result.map((build) => build.status)).toEqual(table.map(([, status]) => status).reverse());
    });
  });

  it('reports build number, start, duration in whole seconds and the build page', async () => {
    fake.setJob('wf-tests', [
      { number: 41, result: 'SUCCESS', timestamp: Date.parse('2024-03-01T10:00:00Z'), duration: 312_400 },
      { number: 42, building: true, timestamp: Date.parse('2024-03-01T11:00:00Z'), duration: 0 },
    ]);
    await expect(builds()).resolves.toEqual([
      {
        buildId: '42',
        status: 'running',
        startedAt: new Date('2024-03-01T11:00:00Z'),
        durationSeconds: 0,
        url: `${fake.url}/job/wf-tests/42/`,
      },
      {
        buildId: '41',
        status: 'passed',
        startedAt: new Date('2024-03-01T10:00:00Z'),
        durationSeconds: 312,
        url: `${fake.url}/job/wf-tests/41/`,
      },
    ]);
  });

  it('asks for the `limit` latest builds with a tree query and no credentials by default', async () => {
    fake.setJob(
      'wf-tests',
      Array.from({ length: 8 }, (_, index) => ({ number: index + 1 })),
    );
    const result = await builds({ limit: 3 });
    expect(result.map((build) => build.buildId)).toEqual(['8', '7', '6']);
    const [request] = fake.requests;
    expect(request.path).toBe('/job/wf-tests/api/json');
    expect(new URLSearchParams(request.url.split('?')[1]).get('tree')).toBe(
      'builds[number,url,result,building,timestamp,duration]{0,3}',
    );
    expect(request.headers.authorization).toBeUndefined();
  });

  it('follows nested jobs (folders, multibranch branches)', async () => {
    fake.setJob(['team', 'pipelines', 'feature/x'], [{ number: 3, result: 'FAILURE' }]);
    const result = await builds({ resource: 'job/team/job/pipelines/job/feature%2Fx/' });
    expect(result).toMatchObject([{ buildId: '3', status: 'failed' }]);
    expect(fake.requests[0].path).toBe('/job/team/job/pipelines/job/feature%2Fx/api/json');
  });

  it('fails for a folder, which has no builds of its own', async () => {
    fake.setJob('team/pipeline', []);
    await expect(check({ resource: 'job/team' })).resolves.toEqual({
      kind: 'failed',
      reason: 'team is not a job with builds',
    });
  });

  it('answers a job without builds as a successful check with no builds', async () => {
    await expect(check()).resolves.toEqual({ kind: 'builds', builds: [], etag: expect.any(String) });
  });

  it('sends HTTP Basic credentials when configured', async () => {
    const expected = `Basic ${Buffer.from('bot:api-token').toString('base64')}`;
    fake.requiredAuthorization = expected;
    const credentials = { type: 'jenkins' as const, url: fake.url, username: 'bot', password: 'api-token' };
    await expect(builds({ credentials })).resolves.toEqual([]);
    expect(fake.requests[0].headers.authorization).toBe(expected);
  });

  it('never repeats the credentials a refusing service echoes in its message', async () => {
    fake.fail({ kind: 'status', status: 401, body: { message: 'bad password api-token-1234 for bot' } });
    const credentials = {
      type: 'jenkins' as const,
      url: fake.url,
      username: 'bot',
      password: 'api-token-1234',
    };
    await expect(check({ credentials })).resolves.toEqual({
      kind: 'failed',
      reason: expect.stringMatching(/answered 401: bad password \[redacted\] for bot$/),
      retryAfter: undefined,
    });
  });

  it('sends no Authorization without a username and a password', async () => {
    await builds({ credentials: { type: 'jenkins', url: fake.url, username: 'bot' } });
    expect(fake.requests[0].headers.authorization).toBeUndefined();
  });

  it('sends If-None-Match and reports not_modified on a 304', async () => {
    fake.setJob('wf-tests', [{ number: 1 }]);
    const first = await check();
    const etag = first.kind === 'builds' ? first.etag : undefined;
    await expect(check({ etag })).resolves.toEqual({ kind: 'not_modified' });
    expect(fake.requests[1].headers['if-none-match']).toBe(etag);
  });

  it('pauses on a 429 until its Retry-After', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    fake.limitRate({ status: 429, retryAfterSeconds: 15 });
    await expect(check({ now })).resolves.toEqual({
      kind: 'rate_limited',
      until: new Date('2030-01-01T00:00:15Z'),
    });
  });

  it('fails with "job not found" on a 404', async () => {
    await expect(check({ resource: 'job/team/job/missing' })).resolves.toEqual({
      kind: 'failed',
      reason: 'job team/missing not found (404)',
    });
  });

  it('fails on a 500', async () => {
    fake.fail({ kind: 'status', status: 500 });
    await expect(check()).resolves.toMatchObject({
      kind: 'failed',
      reason: expect.stringMatching(/answered 500/),
    });
  });

  it('fails after the 1 s timeout when the service hangs', async () => {
    fake.fail({ kind: 'hang' });
    await expect(check()).resolves.toMatchObject({ kind: 'failed', reason: TIMED_OUT });
  });

  it('refuses a resource that is not a job, without calling', async () => {
    for (const resource of ['view/all', 'job', 'job/a/view/b', 'job/../script', 'job/a/job/b/build']) {
      await expect(check({ resource })).resolves.toMatchObject({ kind: 'failed' });
    }
    expect(fake.totalRequests).toBe(0);
  });

  it('refuses an unconfigured service on a private address when private links are not allowed', async () => {
    const guarded = new JenkinsService(configWith({ ALLOW_PRIVATE_NETWORK_LINKS: 'false' }));
    await expect(guarded.latestBuilds({ serviceUrl: fake.url, resource: RESOURCE })).resolves.toMatchObject({
      kind: 'failed',
      reason: expect.stringMatching(/private or reserved address/),
    });
    expect(fake.totalRequests).toBe(0);
  });

  describe('resourceProblem (checked when an instance is registered or added)', () => {
    it('accepts a job, nested or not, and names what is wrong with anything else', () => {
      const jenkins = new JenkinsService(configWith());
      expect(jenkins.resourceProblem('job/build')).toBeUndefined();
      expect(jenkins.resourceProblem('job/folder/job/build')).toBeUndefined();
      for (const resource of ['build', 'job', 'job/a/b', 'view/x', 'repos/o/r/actions/workflows/ci.yml']) {
        expect(jenkins.resourceProblem(resource)).toMatch(/is not a Jenkins job/);
      }
    });
  });
});

describe('JenkinsService.resourcePage (the status pages link it)', () => {
  it('links a job, nested in folders, under its server', () => {
    const service = new JenkinsService(configWith());
    expect(service.resourcePage({ serviceUrl: 'https://ci.example.org/', resource: 'job/a/job/b' })).toBe(
      'https://ci.example.org/job/a/job/b/',
    );
    expect(service.resourcePage({ serviceUrl: 'https://ci.example.org', resource: 'a/b' })).toBeUndefined();
  });
});
