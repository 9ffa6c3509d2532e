import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GithubFake, type FakeGithubRun } from '../../../test/fakes/github-fake.js';
import {
  GithubActionsService,
  MAX_ATTEMPT_REQUESTS,
  STATE_PERIOD_MS,
  stateReadDue,
} from './github-actions.service.js';
import type { BuildStatus } from './testing-service.js';
import { buildsOf, clientSpec } from '../../../test/support/testing-service-spec.js';

const RESOURCE = GithubFake.resource('octo-org', 'octo-repo', 'ci.yml');
const RUNS_PATH = GithubFake.runsPath('octo-org', 'octo-repo', 'ci.yml');
const WORKFLOW_PATH = `/${RESOURCE}`;
/**
 * http-client recognises its deadline with `reason instanceof Error`; under jest's vm modules the
 * AbortSignal's DOMException comes from another realm, so a timeout reads "cancelled" here.
 */
const TIMED_OUT = expect.stringMatching(/did not answer within 1 s|was cancelled/);

const { fake, dataDir, configWith, check, builds } = clientSpec({
  name: 'github-actions',
  fake: new GithubFake(),
  service: (config) => new GithubActionsService(config),
  resource: RESOURCE,
});

beforeEach(() => {
  fake.setRuns('octo-org', 'octo-repo', 'ci.yml', []);
  fake.setWorkflowState('octo-org', 'octo-repo', 'ci.yml', 'active');
});

describe('GithubActionsService', () => {
  describe('state mapping (API.md 2.8)', () => {
    const table: [Pick<FakeGithubRun, 'status' | 'conclusion'>, BuildStatus][] = [
      [{ status: 'queued', conclusion: null }, 'waiting'],
      [{ status: 'requested', conclusion: null }, 'waiting'],
      [{ status: 'waiting', conclusion: null }, 'waiting'],
      [{ status: 'pending', conclusion: null }, 'waiting'],
      [{ status: 'in_progress', conclusion: null }, 'running'],
      [{ status: 'completed', conclusion: 'success' }, 'passed'],
      [{ status: 'completed', conclusion: 'failure' }, 'failed'],
      [{ status: 'completed', conclusion: 'cancelled' }, 'aborted'],
      [{ status: 'completed', conclusion: 'timed_out' }, 'error'],
      [{ status: 'completed', conclusion: 'skipped' }, 'error'],
      [{ status: 'completed', conclusion: 'neutral' }, 'error'],
      [{ status: 'completed', conclusion: 'action_required' }, 'error'],
      [{ status: 'completed', conclusion: 'stale' }, 'error'],
      [{ status: 'completed', conclusion: 'startup_failure' }, 'error'],
      [{ status: 'completed', conclusion: 'something_new' }, 'error'],
      [{ status: 'something_new', conclusion: null }, 'waiting'],
    ];

    it.each(table)('maps %j to %s', async (native, expected) => {
      fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [{ id: 101, ...native }]);
      const [build] = await builds();
      expect(build.status).toBe(expected);
    });

    it('maps every state in one listing, newest run first', async () => {
      fake.setRuns(
        'octo-org',
        'octo-repo',
        'ci.yml',
        table.map(([native], index) => ({ id: 200 + index, ...native })),
      );
      const result = await builds({ limit: 100 });
      expect(result.map((build) => build.status)).toEqual(table.map(([, status]) => status).reverse());
    });
  });

  it('reads the fixture run as GitHub sends it', async () => {
    const fixture = JSON.parse(readFileSync('test/fixtures/github/workflow-run-paginated.json', 'utf8')) as {
      workflow_runs: {
        id: number;
        status: string;
        conclusion: null;
        run_started_at: string;
        updated_at: string;
      }[];
    };
    const run = fixture.workflow_runs[0];
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [
      { id: run.id, status: run.status, conclusion: run.conclusion, startedAt: run.run_started_at },
    ]);
    await expect(builds()).resolves.toEqual([
      {
        buildId: '30433642_1',
        status: 'waiting',
        startedAt: new Date('2020-01-22T19:33:08Z'),
        durationSeconds: 0,
        url: 'https://github.com/octo-org/octo-repo/actions/runs/30433642',
        headSha: 'acb5820ced9479c074f688cc328bf03f341a511d',
      },
    ]);
  });

  it('reports build id, start, duration in whole seconds, the run page and its commit', async () => {
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [
      {
        id: 8765,
        conclusion: 'failure',
        startedAt: '2024-03-01T10:00:00Z',
        updatedAt: '2024-03-01T10:05:12Z',
        headSha: 'f00d',
      },
      {
        id: 8766,
        headSha: 'beef',
        status: 'in_progress',
        startedAt: '2024-03-01T11:00:00Z',
        updatedAt: '2024-03-01T11:03:00Z',
      },
    ]);
    await expect(builds()).resolves.toEqual([
      {
        buildId: '8766_1',
        status: 'running',
        startedAt: new Date('2024-03-01T11:00:00Z'),
        durationSeconds: 0,
        url: 'https://github.com/octo-org/octo-repo/actions/runs/8766',
        headSha: 'beef',
      },
      {
        buildId: '8765_1',
        status: 'failed',
        startedAt: new Date('2024-03-01T10:00:00Z'),
        durationSeconds: 312,
        url: 'https://github.com/octo-org/octo-repo/actions/runs/8765',
        headSha: 'f00d',
        // What the failure classifier reads first (API.md 16).
        ciFields: ['conclusion: failure'],
      },
    ]);
  });

  it('asks for `limit` runs with the documented headers and no credentials by default', async () => {
    await builds({ limit: 7 });
    // The runs, then the workflow's state (read whenever the runs changed).
    expect(fake.requests.map((request) => request.path)).toEqual([RUNS_PATH, WORKFLOW_PATH]);
    const [request] = fake.requests;
    expect(request.url).toBe(`${RUNS_PATH}?per_page=7`);
    expect(request.headers.accept).toBe('application/vnd.github+json');
    expect(request.headers['x-github-api-version']).toBe('2022-11-28');
    expect(request.headers.authorization).toBeUndefined();
  });

  it('answers an empty history as a successful check with no builds', async () => {
    await expect(check()).resolves.toEqual({
      kind: 'builds',
      builds: [],
      etag: expect.any(String),
      workflowDisabled: false,
    });
  });

  it('sends the configured token as a Bearer token', async () => {
    fake.requiredAuthorization = 'Bearer s3cret';
    const credentials = { type: 'github' as const, url: `${fake.url}/`, token: 's3cret' };
    await expect(builds({ credentials })).resolves.toEqual([]);
    expect(fake.requests[0].headers.authorization).toBe('Bearer s3cret');
  });

  it('never sends credentials that belong to another service URL', async () => {
    const credentials = { type: 'github' as const, url: 'https://api.github.com', token: 's3cret' };
    await builds({ credentials });
    expect(fake.requests[0].headers.authorization).toBeUndefined();
  });

  it('reports refused credentials as a failed check', async () => {
    fake.requiredAuthorization = 'Bearer right';
    const credentials = { type: 'github' as const, url: fake.url, token: 'wrong' };
    await expect(check({ credentials })).resolves.toEqual({
      kind: 'failed',
      reason: expect.stringMatching(/answered 401: Bad credentials/),
      retryAfter: undefined,
    });
  });

  describe('conditional requests', () => {
    it('sends If-None-Match and reports not_modified on a 304', async () => {
      fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [{ id: 1 }]);
      const first = await check();
      expect(first).toMatchObject({ kind: 'builds', etag: expect.stringMatching(/^W\/"/) });
      const etag = first.kind === 'builds' ? first.etag : undefined;

      await expect(check({ etag, now: outsideStateSlot() })).resolves.toEqual({ kind: 'not_modified' });
      expect(fake.requests[2].headers['if-none-match']).toBe(etag);
      expect(fake.requests).toHaveLength(3);
      expect(fake.notModifiedCount).toBe(1);
    });

    it('gets the new builds with a new ETag once the runs change', async () => {
      fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [{ id: 1 }]);
      const first = await check();
      const etag = first.kind === 'builds' ? first.etag : undefined;
      fake.addRun('octo-org', 'octo-repo', 'ci.yml', { id: 2, status: 'queued' });

      const second = await check({ etag });
      expect(second).toMatchObject({ kind: 'builds', builds: [{ buildId: '2_1' }, { buildId: '1_1' }] });
      expect(second.kind === 'builds' && second.etag).not.toBe(etag);
    });
  });

  describe('re-run attempts', () => {
    const attempts: FakeGithubRun[] = [
      { id: 7, attempt: 1, conclusion: 'failure', startedAt: '2024-01-01T10:00:00Z' },
      { id: 7, attempt: 2, conclusion: 'cancelled', startedAt: '2024-01-01T11:00:00Z' },
      { id: 7, attempt: 3, conclusion: 'success', startedAt: '2024-01-01T12:00:00Z' },
    ];

    it('reports every attempt as a build, fetching the earlier ones', async () => {
      fake.setRuns('octo-org', 'octo-repo', 'ci.yml', attempts);
      const result = await builds();
      expect(result.map((build) => [build.buildId, build.status])).toEqual([
        ['7_3', 'passed'],
        ['7_2', 'aborted'],
        ['7_1', 'failed'],
      ]);
      expect(fake.requests.map((request) => request.path)).toEqual([
        RUNS_PATH,
        '/repos/octo-org/octo-repo/actions/runs/7/attempts/1',
        '/repos/octo-org/octo-repo/actions/runs/7/attempts/2',
        WORKFLOW_PATH,
      ]);
    });

    it('does not fetch attempts the caller knows already: the runs and the state only', async () => {
      fake.setRuns('octo-org', 'octo-repo', 'ci.yml', attempts);
      const result = await check({ knownBuildIds: new Set(['7_1', '7_2']) });
      expect(result).toMatchObject({
        kind: 'builds',
        builds: [{ buildId: '7_3' }],
        etag: expect.any(String),
      });
      expect(fake.requests.map((request) => request.path)).toEqual([RUNS_PATH, WORKFLOW_PATH]);
    });

    it(`fetches at most ${MAX_ATTEMPT_REQUESTS} attempts per check and leaves the ETag out until complete`, async () => {
      const many = Array.from({ length: MAX_ATTEMPT_REQUESTS + 3 }, (_, index) => ({
        id: 9,
        attempt: index + 1,
      }));
      fake.setRuns('octo-org', 'octo-repo', 'ci.yml', many);
      const first = await check();
      expect(first).toMatchObject({ kind: 'builds', etag: undefined });
      expect(fake.totalRequests).toBe(1 + MAX_ATTEMPT_REQUESTS + 1);

      const known = new Set(first.kind === 'builds' ? first.builds.map((build) => build.buildId) : []);
      const second = await check({ knownBuildIds: known });
      expect(second).toMatchObject({ kind: 'builds', etag: expect.any(String) });
      expect(second.kind === 'builds' ? second.builds : []).toHaveLength(3);
    });

    it('keeps the listed builds and drops the ETag when an attempt cannot be fetched', async () => {
      fake.setRuns('octo-org', 'octo-repo', 'ci.yml', attempts);
      fake.fail({ kind: 'status', status: 502 }, '/attempts/');
      const result = await check();
      expect(result).toEqual({
        kind: 'builds',
        builds: [expect.objectContaining({ buildId: '7_3' })],
        etag: undefined,
        workflowDisabled: false,
      });
      expect(fake.totalRequests).toBe(3);
    });
  });

  describe('workflow state (API.md 6.2 TESTS_STOPPED, 16 stale)', () => {
    it.each(['disabled_manually', 'disabled_inactivity', 'disabled_fork'])(
      'reports a workflow in state %s as disabled with its builds',
      async (state) => {
        fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [{ id: 1 }]);
        fake.setWorkflowState('octo-org', 'octo-repo', 'ci.yml', state);
        await expect(check()).resolves.toMatchObject({
          kind: 'builds',
          builds: [{ buildId: '1_1' }],
          workflowDisabled: true,
        });
      },
    );

    it('reports an active workflow as not disabled, and nothing of one whose state cannot be read', async () => {
      fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [{ id: 1 }]);
      await expect(check()).resolves.toMatchObject({ kind: 'builds', workflowDisabled: false });
      fake.setWorkflowState('octo-org', 'octo-repo', 'ci.yml', 'disabled_manually');
      fake.fail({ kind: 'status', status: 502 }, /ci\.yml$/);
      const unreadable = await check();
      fake.heal();
      expect(unreadable).toMatchObject({ kind: 'builds', builds: [{ buildId: '1_1' }] });
      expect(unreadable).not.toHaveProperty('workflowDisabled');
    });

    it('on a 304 reads the state only in the first check of its period', async () => {
      fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [{ id: 1 }]);
      const first = await check();
      const etag = first.kind === 'builds' ? first.etag : undefined;
      fake.setWorkflowState('octo-org', 'octo-repo', 'ci.yml', 'disabled_manually');
      await expect(check({ etag, now: outsideStateSlot() })).resolves.toEqual({ kind: 'not_modified' });
      expect(fake.requests.at(-1)?.path).toBe(RUNS_PATH);
      await expect(check({ etag, now: insideStateSlot() })).resolves.toEqual({
        kind: 'not_modified',
        workflowDisabled: true,
      });
      expect(fake.requests.at(-1)?.path).toBe(WORKFLOW_PATH);
    });

    it('places one state read per period and instance, none with the timer off', () => {
      const interval = 300_000;
      const start = Date.UTC(2026, 0, 1);
      const due = (resource: string, intervalMs: number) =>
        Array.from({ length: (2 * STATE_PERIOD_MS) / interval }, (_, index) =>
          stateReadDue(resource, new Date(start + index * interval), intervalMs),
        ).filter(Boolean).length;
      expect(due(RESOURCE, interval)).toBe(2);
      expect(due('repos/other/repo/actions/workflows/x.yml', interval)).toBe(2);
      expect(due(RESOURCE, 0)).toBe(0);
    });
  });

  describe('rate limits', () => {
    it('pauses until x-ratelimit-reset when the quota is exhausted (403)', async () => {
      const resetAt = new Date(Math.ceil(Date.now() / 1000) * 1000 + 600_000);
      fake.limitRate({ status: 403, resetAt });
      await expect(check()).resolves.toEqual({ kind: 'rate_limited', until: resetAt });
    });

    it('pauses until x-ratelimit-reset on a 429 too', async () => {
      const resetAt = new Date(Math.ceil(Date.now() / 1000) * 1000 + 60_000);
      fake.limitRate({ status: 429, resetAt });
      await expect(check()).resolves.toEqual({ kind: 'rate_limited', until: resetAt });
    });

    it('honours Retry-After (secondary rate limit)', async () => {
      const now = new Date('2030-01-01T00:00:00Z');
      fake.limitRate({ status: 403, retryAfterSeconds: 120 });
      await expect(check({ now })).resolves.toEqual({
        kind: 'rate_limited',
        until: new Date('2030-01-01T00:02:00Z'),
      });
    });

    it('treats a 403 without rate-limit signs as a failure', async () => {
      fake.fail({ kind: 'status', status: 403, body: { message: 'Resource not accessible by integration' } });
      await expect(check()).resolves.toMatchObject({
        kind: 'failed',
        reason: expect.stringMatching(/403: Resource not accessible by integration/),
      });
    });
  });

  describe('failures', () => {
    it('fails with "workflow not found" on a 404', async () => {
      await expect(
        check({ resource: GithubFake.resource('octo-org', 'octo-repo', 'missing.yml') }),
      ).resolves.toEqual({
        kind: 'failed',
        reason: 'workflow octo-org/octo-repo/missing.yml not found (404)',
      });
    });

    it('fails on a 500', async () => {
      fake.fail({ kind: 'status', status: 500 });
      await expect(check()).resolves.toMatchObject({
        kind: 'failed',
        reason: expect.stringMatching(/answered 500/),
      });
    });

    it('passes a Retry-After of a 503 on', async () => {
      const now = new Date('2030-01-01T00:00:00Z');
      fake.fail({ kind: 'status', status: 503, headers: { 'retry-after': '30' } });
      await expect(check({ now })).resolves.toMatchObject({
        kind: 'failed',
        retryAfter: new Date('2030-01-01T00:00:30Z'),
      });
    });

    it.each(['hang', 'stall'] as const)(
      'gives up on a service that does not answer (%s): the request is cut at the timeout, not retried',
      async (kind) => {
        fake.fail({ kind });
        await expect(check()).resolves.toMatchObject({ kind: 'failed', reason: TIMED_OUT });
        // The check closed its connection rather than leave it hanging, and sent no second request.
        await fake.untilUnfinished(1);
        expect(fake.unfinished).toHaveLength(1);
        expect(fake.totalRequests).toBe(1);
      },
    );

    it('fails when the connection is reset', async () => {
      fake.fail({ kind: 'reset' });
      await expect(check()).resolves.toMatchObject({
        kind: 'failed',
        reason: expect.stringMatching(/unreachable/),
      });
    });

    it('refuses a resource that is not a workflow, without calling', async () => {
      await expect(
        check({ resource: 'repos/octo-org/octo-repo/actions/workflows/../../../../user' }),
      ).resolves.toMatchObject({ kind: 'failed', reason: expect.stringMatching(/not a GitHub workflow/) });
      await expect(check({ resource: 'repos/o/r/actions/runs/1' })).resolves.toMatchObject({
        kind: 'failed',
      });
      expect(fake.totalRequests).toBe(0);
    });
  });

  describe('private addresses', () => {
    it('refuses an unconfigured service on a private address when private links are not allowed', async () => {
      const guarded = new GithubActionsService(configWith({ ALLOW_PRIVATE_NETWORK_LINKS: 'false' }));
      await expect(guarded.latestBuilds({ serviceUrl: fake.url, resource: RESOURCE })).resolves.toMatchObject(
        {
          kind: 'failed',
          reason: expect.stringMatching(/private or reserved address/),
        },
      );
      expect(fake.totalRequests).toBe(0);
    });

    it('trusts a configured service on a private address', async () => {
      const file = join(dataDir, 'testing-services.yaml');
      writeFileSync(file, `services:\n  - {type: github, url: "${fake.url}/", token: "t0ken"}\n`);
      const trusting = new GithubActionsService(
        configWith({ ALLOW_PRIVATE_NETWORK_LINKS: 'false', TESTING_SERVICES_FILE: file }),
      );
      await expect(
        trusting.latestBuilds({ serviceUrl: fake.url, resource: RESOURCE }),
      ).resolves.toMatchObject({
        kind: 'builds',
      });
    });
  });

  describe('resourcePage (the status pages link it)', () => {
    it('links the workflow on github.com and on GitHub Enterprise', () => {
      const service = new GithubActionsService(configWith());
      const page = (serviceUrl: string, resource: string) => service.resourcePage({ serviceUrl, resource });
      expect(page('https://api.github.com', 'repos/o/r/actions/workflows/ci.yml')).toBe(
        'https://github.com/o/r/actions/workflows/ci.yml',
      );
      expect(page('https://ghe.example.org/api/v3', 'repos/o/r/actions/workflows/42')).toBe(
        'https://ghe.example.org/o/r/actions/workflows/42',
      );
      expect(page('https://api.github.com', 'repos/o/r')).toBe('https://github.com');
      expect(page('not a url', 'repos/o/r/actions/workflows/ci.yml')).toBeUndefined();
    });
  });

  describe('resourceProblem (checked when an instance is registered or added)', () => {
    it('accepts a workflow by file or id and names what is wrong with anything else', () => {
      const github = new GithubActionsService(configWith());
      expect(github.resourceProblem('repos/o/r/actions/workflows/ci.yml')).toBeUndefined();
      expect(github.resourceProblem('repos/o/r/actions/workflows/123')).toBeUndefined();
      for (const resource of ['repos/o/r', 'repos/o/../actions/workflows/ci.yml', 'job/a', 'repo/1', '']) {
        expect(github.resourceProblem(resource)).toMatch(/is not a GitHub workflow \(repos\/\{owner\}/);
      }
    });
  });
});

describe('GithubActionsService builds per version (API.md 7.2)', () => {
  const JAN = (day: number) => new Date(Date.UTC(2024, 0, day));

  beforeAll(() => {
    fake.addRepository('octo-org', 'octo-repo');
    fake.push('octo-org', 'octo-repo', { tag: '1.0', files: {} });
    fake.push('octo-org', 'octo-repo', { tag: '2.0', files: {} });
    fake.push('octo-org', 'octo-repo', { branch: 'release/3', files: {} });
  });

  beforeEach(() => {
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [
      { id: 1, branch: '1.0', conclusion: 'success', createdAt: JAN(2), startedAt: JAN(2) },
      { id: 2, branch: '2.0', conclusion: 'failure', createdAt: JAN(5), startedAt: JAN(5) },
      { id: 3, branch: 'main', conclusion: 'failure', createdAt: JAN(6), startedAt: JAN(6) },
      { id: 4, branch: 'main', conclusion: 'success', createdAt: JAN(12), startedAt: JAN(12) },
    ]);
  });

  const ids = (found: { buildId: string }[]) => found.map((build) => build.buildId);

  it('keeps the runs of the version string when it is a tag with runs, in one request', async () => {
    const selection = { refs: ['1.0'], from: JAN(10) };
    expect(ids(await builds({ selection }))).toEqual(['1_1']);
    expect(ids(await builds({ selection: { refs: ['2.0'], from: JAN(10) } }))).toEqual(['2_1']);
    expect(fake.requests.filter((request) => request.path === RUNS_PATH)).toHaveLength(2);
    expect(fake.requests[0].url).toContain('branch=1.0');
  });

  it('takes the source ref first, then the version string', async () => {
    expect(ids(await builds({ selection: { refs: ['2.0', '1.0'], from: JAN(1) } }))).toEqual(['2_1']);
  });

  it('answers no builds for an existing ref without runs, not the window', async () => {
    const result = await check({ selection: { refs: ['release/3'], from: JAN(1) } });
    expect(result).toEqual({ kind: 'builds', builds: [], etag: expect.any(String), workflowDisabled: false });
  });

  it('remembers a missing ref for an hour: the next check is one request, its window', async () => {
    const selection = { refs: ['9.6'], from: JAN(1) };
    // Requests other than the workflow state reads, which follow every new listing (API.md 6.2).
    const upstreamReads = () => fake.requests.filter((request) => request.path !== WORKFLOW_PATH).length;
    await builds({ selection, now: JAN(20) });
    const before = upstreamReads();
    expect(ids(await builds({ selection, now: new Date(JAN(20).getTime() + 3000_000) }))).toEqual([
      '4_1',
      '3_1',
      '2_1',
      '1_1',
    ]);
    expect(upstreamReads() - before).toBe(1);
    await builds({ selection, now: new Date(JAN(20).getTime() + 3700_000) });
    expect(upstreamReads() - before).toBe(5);
  });

  it('falls back to the registration window when no candidate names a branch or tag', async () => {
    expect(ids(await builds({ selection: { refs: ['9.9'], from: JAN(4), until: JAN(10) } }))).toEqual([
      '3_1',
      '2_1',
    ]);
    expect(ids(await builds({ selection: { refs: [], from: JAN(10) } }))).toEqual(['4_1']);
    const windowed = fake.requests.filter((request) => request.url.includes('created='));
    expect(decodeURIComponent(windowed[0].url)).toContain(
      'created=2024-01-04T00:00:00Z..2024-01-10T00:00:00Z',
    );
    expect(decodeURIComponent(windowed[1].url)).toContain('created=>=2024-01-10T00:00:00Z');
  });

  it('keeps the ETag of the request that gave the result, which the next check sends first', async () => {
    const byRef = await check({ selection: { refs: ['1.0'], from: JAN(1) } });
    expect(byRef).toMatchObject({ kind: 'builds', etag: expect.any(String) });
    const again = await check({
      selection: { refs: ['1.0'], from: JAN(1) },
      etag: (byRef as { etag: string }).etag,
      knownBuildIds: new Set(['1_1']),
    });
    expect(again).toEqual({ kind: 'not_modified' });
    const byWindow = await check({ selection: { refs: ['9.8'], from: JAN(1) }, now: JAN(20) });
    expect(byWindow).toMatchObject({ kind: 'builds', etag: expect.any(String) });
    const before = fake.totalRequests;
    const windowAgain = await check({
      selection: { refs: ['9.8'], from: JAN(1) },
      etag: (byWindow as { etag: string }).etag,
      knownBuildIds: new Set(['1_1']),
      now: JAN(20),
    });
    expect(windowAgain).toEqual({ kind: 'not_modified' });
    expect(fake.totalRequests - before).toBe(1);
  });

  it('does not take a 304 of a ref for "unchanged" when the ETag may be an empty window’s', async () => {
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', []);
    const empty = await check({ selection: { refs: ['9.5'], from: JAN(1) }, now: JAN(20) });
    expect(empty).toMatchObject({ kind: 'builds', builds: [] });
    fake.addRun('octo-org', 'octo-repo', 'ci.yml', {
      id: 9,
      branch: 'main',
      createdAt: JAN(3),
      startedAt: JAN(3),
    });
    // The memory of the missing ref has expired: the ref's (empty) listing comes first, with the window's ETag.
    const later = await check({
      selection: { refs: ['9.5'], from: JAN(1) },
      etag: (empty as { etag: string }).etag,
      now: new Date(JAN(20).getTime() + 2 * 3600_000),
    });
    expect(ids(buildsOf(later))).toEqual(['9_1']);
  });

  it('reports a failure of the ref lookup as a failed check', async () => {
    fake.fail({ kind: 'status', status: 500 }, /\/git\/ref\//);
    const result = await check({ selection: { refs: ['9.7'], from: JAN(1) } });
    expect(result).toMatchObject({ kind: 'failed' });
  });
});

/** The refresh interval of the spec's configuration (its default). */
const SPEC_INTERVAL_MS = 300_000;

/** A check time when a 304 does not read the workflow's state. */
function outsideStateSlot(): Date {
  return slotSearch(false);
}

function insideStateSlot(): Date {
  return slotSearch(true);
}

function slotSearch(wanted: boolean): Date {
  for (let at = Date.UTC(2026, 0, 1); ; at += SPEC_INTERVAL_MS / 3) {
    if (stateReadDue(RESOURCE, new Date(at), SPEC_INTERVAL_MS) === wanted) {
      return new Date(at);
    }
  }
}

describe('GithubActionsService periodic re-runs (API.md 11, 16)', () => {
  const DAY = 24 * 3600_000;
  const NOW = new Date('2026-06-01T12:00:00.000Z');
  const trigger = (latestBuildId: string | undefined, rerun: boolean) =>
    new GithubActionsService(configWith()).triggerBuild({
      serviceUrl: fake.url,
      resource: RESOURCE,
      credentials: { type: 'github', url: `${fake.url}/`, token: 'rerun-token' },
      latestBuildId,
      rerun,
      now: NOW,
    });

  beforeAll(() => {
    fake.now = () => NOW;
    fake.addRepository('octo-org', 'octo-repo', { defaultBranch: 'main' });
    fake.push('octo-org', 'octo-repo', { branch: 'main', files: {} });
  });

  afterAll(() => {
    fake.now = () => new Date();
  });

  const sent = () =>
    fake.requests.filter((request) => request.method === 'POST').map((request) => request.path);

  it('re-runs the latest run while GitHub still re-runs it (30 days)', async () => {
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [
      { id: 61, startedAt: new Date(NOW.getTime() - 29 * DAY) },
    ]);
    fake.resetLog();
    await expect(trigger('61_1', true)).resolves.toEqual({ kind: 'triggered', how: 'rerun' });
    expect(sent()).toEqual(['/repos/octo-org/octo-repo/actions/runs/61/rerun']);
  });

  it("dispatches a fresh run on the version's ref when GitHub refuses to re-run a run over a month old", async () => {
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [
      { id: 62, startedAt: new Date(NOW.getTime() - 31 * DAY) },
    ]);
    fake.resetLog();
    await expect(trigger('62_1', true)).resolves.toEqual({ kind: 'triggered', how: 'dispatch' });
    expect(sent()).toEqual([
      '/repos/octo-org/octo-repo/actions/runs/62/rerun',
      '/repos/octo-org/octo-repo/actions/workflows/ci.yml/dispatches',
    ]);
    expect(fake.dispatches.at(-1)).toMatchObject({ repo: 'octo-repo', ref: 'main' });
  });

  it('says both refusals when a disabled workflow takes neither a re-run nor a fresh run', async () => {
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [{ id: 63, startedAt: new Date(NOW.getTime() - DAY) }]);
    fake.setWorkflowState('octo-org', 'octo-repo', 'ci.yml', 'disabled_inactivity');
    const result = await trigger('63_1', true);
    expect(result).toMatchObject({ kind: 'refused', status: 422 });
    expect(result.kind === 'refused' ? result.reason : '').toMatch(
      /re-run was refused \(.*403.*\), and so was a fresh run: .*422: Cannot trigger a 'workflow_dispatch' on a disabled workflow/,
    );
  });

  it("a trigger on demand dispatches, and does not re-run a disabled workflow's run", async () => {
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [{ id: 64, startedAt: new Date(NOW.getTime() - DAY) }]);
    fake.resetLog();
    await expect(trigger('64_1', false)).resolves.toEqual({ kind: 'triggered', how: 'dispatch' });
    fake.setWorkflowState('octo-org', 'octo-repo', 'ci.yml', 'disabled_manually');
    fake.resetLog();
    await expect(trigger('64_1', false)).resolves.toMatchObject({ kind: 'refused', status: 422 });
    expect(sent()).toEqual(['/repos/octo-org/octo-repo/actions/workflows/ci.yml/dispatches']);
  });

  it('dispatches at once a periodic re-run of an instance without a run, and keeps a rate limit a rate limit', async () => {
    fake.resetLog();
    await expect(trigger(undefined, true)).resolves.toEqual({ kind: 'triggered', how: 'dispatch' });
    expect(sent()).toEqual(['/repos/octo-org/octo-repo/actions/workflows/ci.yml/dispatches']);
    fake.setRuns('octo-org', 'octo-repo', 'ci.yml', [{ id: 65, startedAt: new Date(NOW.getTime() - DAY) }]);
    fake.limitRate({ status: 429, retryAfterSeconds: 60 });
    await expect(trigger('65_1', true)).resolves.toMatchObject({ kind: 'rate_limited' });
  });
});
