import { TravisFake } from '../../../test/fakes/travis-fake.js';
import type { BuildStatus } from './testing-service.js';
import { travisWebBase, TravisService } from './travis.service.js';
import { clientSpec } from '../../../test/support/testing-service-spec.js';

const SLUG = 'octo-org/octo-repo';
const RESOURCE = TravisFake.resource(SLUG);
/** See github-actions.service.spec.ts: under jest a timeout may read "cancelled". */
const TIMED_OUT = expect.stringMatching(/did not answer within 1 s|was cancelled/);

let repoId: number;

const { fake, configWith, check, builds } = clientSpec({
  name: 'travis',
  fake: new TravisFake(),
  service: (config) => new TravisService(config),
  resource: RESOURCE,
});

beforeEach(() => {
  repoId = fake.setRepo(SLUG, []);
});

describe('TravisService', () => {
  describe('state mapping (API.md 2.8)', () => {
    const table: [string, BuildStatus][] = [
      ['created', 'waiting'],
      ['received', 'waiting'],
      ['started', 'running'],
      ['passed', 'passed'],
      ['failed', 'failed'],
      ['canceled', 'aborted'],
      ['errored', 'error'],
    ];

    it.each(table)('maps %s to %s', async (state, expected) => {
      fake.setRepo(SLUG, [{ id: 1, state }]);
      const [build] = await builds();
      expect(build.status).toBe(expected);
    });

    it('hands its state to the failure classifier on failing builds only (API.md 16)', async () => {
      fake.setRepo(SLUG, [
        { id: 2, state: 'errored' },
        { id: 1, state: 'passed' },
      ]);
      const [errored, passed] = await builds();
      expect(errored.ciFields).toEqual(['state: errored']);
      expect(passed.ciFields).toBeUndefined();
    });

    it('maps every state in one listing, newest build first', async () => {
      fake.setRepo(
        SLUG,
        table.map(([state], index) => ({ id: 100 + index, state })),
      );
      const result = await builds({ limit: 100 });
      expect(result.map((build) => build.status)).toEqual(table.map(([, status]) => status).reverse());
    });
  });

  it('reports build id, start, duration, the web page of the build and its commit', async () => {
    fake.setRepo(SLUG, [
      { id: 8765, state: 'passed', startedAt: '2024-03-01T10:00:00Z', duration: 312, sha: 'f00d' },
      { id: 8766, state: 'started', startedAt: '2024-03-01T11:00:00Z', sha: 'beef' },
    ]);
    await expect(builds()).resolves.toEqual([
      {
        buildId: '8766',
        status: 'running',
        startedAt: new Date('2024-03-01T11:00:00Z'),
        durationSeconds: 0,
        url: `${fake.url}/${SLUG}/builds/8766`,
        headSha: 'beef',
      },
      {
        buildId: '8765',
        status: 'passed',
        startedAt: new Date('2024-03-01T10:00:00Z'),
        durationSeconds: 312,
        url: `${fake.url}/${SLUG}/builds/8765`,
        headSha: 'f00d',
      },
    ]);
  });

  it('dates a build that has not started by its last update', async () => {
    fake.setRepo(SLUG, [{ id: 5, state: 'created' }]);
    const [build] = await builds();
    expect(build.startedAt).toEqual(new Date('2024-01-01T00:00:00Z'));
  });

  it('asks for `limit` builds of the URL-encoded slug with API version 3 and no credentials by default', async () => {
    await builds({ limit: 5 });
    const [request] = fake.requests;
    expect(request.url).toBe('/repo/octo-org%2Focto-repo/builds?limit=5');
    expect(request.headers['travis-api-version']).toBe('3');
    expect(request.headers.authorization).toBeUndefined();
  });

  it('accepts a numeric repository id and an unencoded slug', async () => {
    fake.setRepo(SLUG, [{ id: 3 }]);
    await expect(builds({ resource: `repo/${repoId}` })).resolves.toMatchObject([
      { buildId: '3', url: `${fake.url}/${SLUG}/builds/3` },
    ]);
    await expect(builds({ resource: `repo/${SLUG}` })).resolves.toMatchObject([{ buildId: '3' }]);
    expect(fake.requests.map((request) => request.path)).toEqual([
      `/repo/${repoId}/builds`,
      '/repo/octo-org%2Focto-repo/builds',
    ]);
  });

  it('answers an empty history as a successful check with no builds', async () => {
    await expect(check()).resolves.toEqual({ kind: 'builds', builds: [], etag: expect.any(String) });
  });

  it('sends the configured token as `token <token>`', async () => {
    fake.requiredAuthorization = 'token s3cret';
    const credentials = { type: 'travis' as const, url: fake.url, token: 's3cret' };
    await expect(builds({ credentials })).resolves.toEqual([]);
    expect(fake.requests[0].headers.authorization).toBe('token s3cret');
  });

  it('never sends credentials of another service type or URL', async () => {
    await builds({ credentials: { type: 'github', url: fake.url, token: 'a' } });
    await builds({ credentials: { type: 'travis', url: 'https://api.travis-ci.com', token: 'b' } });
    expect(fake.requests.map((request) => request.headers.authorization)).toEqual([undefined, undefined]);
  });

  it('sends If-None-Match and reports not_modified on a 304', async () => {
    fake.setRepo(SLUG, [{ id: 1 }]);
    const first = await check();
    const etag = first.kind === 'builds' ? first.etag : undefined;
    expect(etag).toEqual(expect.any(String));
    await expect(check({ etag })).resolves.toEqual({ kind: 'not_modified' });
    expect(fake.requests[1].headers['if-none-match']).toBe(etag);
  });

  it('pauses on a 429 until its Retry-After', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    fake.limitRate({ status: 429, retryAfterSeconds: 90 });
    await expect(check({ now })).resolves.toEqual({
      kind: 'rate_limited',
      until: new Date('2030-01-01T00:01:30Z'),
    });
  });

  it('pauses a minute on a 429 that does not say how long', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    fake.fail({ kind: 'status', status: 429 });
    await expect(check({ now })).resolves.toEqual({
      kind: 'rate_limited',
      until: new Date('2030-01-01T00:01:00Z'),
    });
  });

  it('fails with "not found" on a 404', async () => {
    await expect(check({ resource: TravisFake.resource('octo-org/missing') })).resolves.toEqual({
      kind: 'failed',
      reason: 'repository octo-org/missing not found (404)',
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

  it('refuses a resource that is not a repository, without calling', async () => {
    await expect(check({ resource: 'user/1' })).resolves.toMatchObject({ kind: 'failed' });
    await expect(check({ resource: 'repo/../user' })).resolves.toMatchObject({ kind: 'failed' });
    await expect(check({ resource: 'repo/a/b/c' })).resolves.toMatchObject({ kind: 'failed' });
    expect(fake.totalRequests).toBe(0);
  });

  it('refuses an unconfigured service on a private address when private links are not allowed', async () => {
    const guarded = new TravisService(configWith({ ALLOW_PRIVATE_NETWORK_LINKS: 'false' }));
    await expect(guarded.latestBuilds({ serviceUrl: fake.url, resource: RESOURCE })).resolves.toMatchObject({
      kind: 'failed',
      reason: expect.stringMatching(/private or reserved address/),
    });
    expect(fake.totalRequests).toBe(0);
  });
  describe('resourceProblem (checked when an instance is registered or added)', () => {
    it('accepts a repository by id or slug and names what is wrong with anything else', () => {
      const travis = new TravisService(configWith());
      expect(travis.resourceProblem('repo/1002447')).toBeUndefined();
      expect(travis.resourceProblem('repo/octo/alpha')).toBeUndefined();
      expect(travis.resourceProblem('repo/octo%2Falpha')).toBeUndefined();
      for (const resource of ['repo', 'repo/a/b/c', 'repos/o/r/actions/workflows/ci.yml', 'job/a']) {
        expect(travis.resourceProblem(resource)).toMatch(/is not a Travis repository/);
      }
    });
  });
});

describe('travisWebBase', () => {
  it('maps the hosted APIs to their web hosts and anything else to its own origin', () => {
    expect(travisWebBase('https://api.travis-ci.com')).toBe('https://app.travis-ci.com');
    expect(travisWebBase('https://api.travis-ci.com/')).toBe('https://app.travis-ci.com');
    expect(travisWebBase('https://api.travis-ci.org')).toBe('https://travis-ci.org');
    expect(travisWebBase('https://travis.example.org/api')).toBe('https://travis.example.org');
    expect(travisWebBase('http://127.0.0.1:4000')).toBe('http://127.0.0.1:4000');
  });
});

describe('TravisService builds per version (API.md 7.2)', () => {
  const JAN = (day: number) => new Date(Date.UTC(2024, 0, day));

  beforeEach(() => {
    fake.setRepo(SLUG, [
      { id: 11, branch: '1.0', state: 'passed', startedAt: JAN(2) },
      { id: 12, branch: '2.0', state: 'failed', startedAt: JAN(5) },
      { id: 13, branch: 'main', state: 'failed', startedAt: JAN(6) },
      { id: 14, branch: 'main', state: 'passed', startedAt: JAN(12) },
    ]);
  });

  const ids = (found: { buildId: string }[]) => found.map((build) => build.buildId);

  it('keeps the builds of the first candidate ref Travis has builds of', async () => {
    expect(ids(await builds({ selection: { refs: ['1.0'], from: JAN(10) } }))).toEqual(['11']);
    expect(ids(await builds({ selection: { refs: ['9.9', '2.0'], from: JAN(10) } }))).toEqual(['12']);
    expect(fake.requests[0].url).toContain('branch.name=1.0');
  });

  it('falls back to the registration window when no candidate is a branch Travis knows', async () => {
    expect(ids(await builds({ selection: { refs: ['9.9'], from: JAN(4), until: JAN(10) } }))).toEqual([
      '13',
      '12',
    ]);
    expect(ids(await builds({ selection: { refs: [], from: JAN(10) } }))).toEqual(['14']);
  });

  it('keeps the ETag of the request that gave the result', async () => {
    const byRef = await check({ selection: { refs: ['1.0'], from: JAN(1) } });
    expect(byRef).toMatchObject({ kind: 'builds', etag: expect.any(String) });
    expect(await check({ selection: { refs: ['9.8'], from: JAN(1) } })).toMatchObject({
      kind: 'builds',
      etag: expect.any(String),
    });
  });
});

describe('TravisService.resourcePage (the status pages link it)', () => {
  it('links a repository by slug on the web site of its API, and the site alone for a numeric id', () => {
    const service = new TravisService(configWith());
    const page = (serviceUrl: string, resource: string) => service.resourcePage({ serviceUrl, resource });
    expect(page('https://api.travis-ci.com', 'repo/o%2Fr')).toBe('https://app.travis-ci.com/github/o/r');
    expect(page('https://travis.example.org/api', 'repo/o/r')).toBe('https://travis.example.org/github/o/r');
    expect(page('https://api.travis-ci.com', 'repo/1002447')).toBe('https://app.travis-ci.com');
  });
});
