import { DataSource } from 'typeorm';
import { DEFAULT_REFRESH_INTERVAL_MS } from '../../src/test-monitoring/refresh-schedule.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { GithubFake, type FakeGithubJob } from '../fakes/github-fake.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { seedVersion, type SeededVersion } from '../support/monitoring-seed.js';

const HEADER = (image: string, version: string): string =>
  [
    '2024-01-01T00:00:01.0000000Z ##[group]Operating System',
    '2024-01-01T00:00:01.0000000Z Ubuntu',
    '2024-01-01T00:00:01.0000000Z 22.04.3',
    '2024-01-01T00:00:01.0000000Z LTS',
    '2024-01-01T00:00:01.0000000Z ##[endgroup]',
    '2024-01-01T00:00:01.0000000Z ##[group]Runner Image',
    `2024-01-01T00:00:01.0000000Z Image: ${image}`,
    `2024-01-01T00:00:01.0000000Z Version: ${version}`,
    '2024-01-01T00:00:01.0000000Z ##[endgroup]',
  ].join('\n');

/** One CI workflow testing two scientific workflows: `lint` is the other's, the matrix is ours. */
function matrix(macos: string, image: string, version: string, at: string): FakeGithubJob[] {
  const start = Date.parse(at);
  const time = (minutes: number): string => new Date(start + minutes * 60_000).toISOString();
  return [
    { name: 'lint', conclusion: 'failure' },
    {
      name: 'test (ubuntu-latest, 3.11)',
      conclusion: 'success',
      startedAt: time(0),
      completedAt: time(3),
      log: HEADER(image, version),
    },
    {
      name: 'test (macos-latest, 3.11)',
      conclusion: macos,
      startedAt: time(1),
      completedAt: time(macos === 'success' ? 5 : 9),
      labels: ['macos-latest'],
      steps: [
        { name: 'Set up job', conclusion: 'success' },
        { name: 'Run planemo test', conclusion: macos },
      ],
    },
  ];
}

describe(`what changed since the last passing build, and job selection (${testDatabase()})`, () => {
  let t: TestApp;
  let github: GithubFake;
  let seeded: SeededVersion;
  let admin: string;

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
    t = await createTestApp({ UPSTREAM_TIMEOUT_SECONDS: '2' });
    admin = await t.login();
    github.setRuns('octo', 'matrix', 'ci.yml', [
      {
        id: 1,
        conclusion: 'failure',
        headSha: 'aaaa111',
        startedAt: '2024-01-01T10:00:00Z',
        jobs: matrix('success', 'ubuntu-22.04', '20240101.1.0', '2024-01-01T10:00:00Z'),
      },
      {
        id: 2,
        conclusion: 'failure',
        headSha: 'bbbb222',
        startedAt: '2024-01-02T10:00:00Z',
        jobs: matrix('failure', 'ubuntu-22.04', '20240108.2.0', '2024-01-02T10:00:00Z'),
      },
    ]);
    seeded = await seedVersion(t.app.get(DataSource), {
      suites: [
        {
          instances: [
            {
              type: 'github',
              url: github.url,
              resource: `${GithubFake.resource('octo', 'matrix', 'ci.yml')}#job=test (*)`,
            },
          ],
        },
      ],
    });
    await t.app.get(RefreshScheduler).tick(new Date(Date.now() + 2 * DEFAULT_REFRESH_INTERVAL_MS));
  });

  afterAll(async () => {
    await t?.close();
    await github?.stop();
  });

  const get = (path: string) => t.http.get(path).set('Authorization', `Bearer ${admin}`);

  it("makes the instance's builds of its matching jobs only: the other workflow's failing lint does not count", async () => {
    const reply = await get(`/instances/${seeded.instances[0].uuid}/latest-builds`).expect(200);
    expect(
      (reply.body as { items: { build_id: string; status: string; duration: number }[] }).items.map((b) => [
        b.build_id,
        b.status,
        b.duration,
      ]),
    ).toEqual([
      ['2_1', 'failed', 540],
      ['1_1', 'passed', 300],
    ]);
  });

  it('answers the commits, their comparison, the runners, the durations and the failed jobs and steps', async () => {
    const reply = await get(`/instances/${seeded.instances[0].uuid}/builds/2_1/changes`).expect(200);
    expect(reply.body).toEqual({
      last_passing: expect.objectContaining({ build_id: '1_1', status: 'passed', duration: 300 }),
      commits: {
        from: 'aaaa111',
        to: 'bbbb222',
        compare_url: `${github.url}/octo/matrix/compare/aaaa111...bbbb222`,
      },
      runner: {
        before: {
          os: 'Ubuntu 22.04.3 LTS',
          image: 'ubuntu-22.04',
          version: '20240101.1.0',
          labels: ['ubuntu-latest'],
        },
        after: {
          os: 'Ubuntu 22.04.3 LTS',
          image: 'ubuntu-22.04',
          version: '20240108.2.0',
          labels: ['ubuntu-latest'],
        },
      },
      duration_s: { before: 300, after: 540 },
      failed_jobs: [
        {
          name: 'test (macos-latest, 3.11)',
          conclusion: 'failure',
          url: 'https://github.com/octo/matrix/actions/runs/2/job/202',
        },
      ],
      failed_steps: [{ job: 'test (macos-latest, 3.11)', name: 'Run planemo test', conclusion: 'failure' }],
    });
  });

  it('answers nulls before the first passing build, and 404 for a build the instance does not have', async () => {
    const first = await get(`/instances/${seeded.instances[0].uuid}/builds/1_1/changes`).expect(200);
    expect(first.body).toMatchObject({
      last_passing: null,
      commits: { from: null, to: 'aaaa111', compare_url: null },
      runner: { before: null },
      duration_s: { before: null, after: 300 },
      failed_jobs: [],
    });
    const missing = await get(`/instances/${seeded.instances[0].uuid}/builds/9_1/changes`).expect(404);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('links what changed beside a failed build on the status page', async () => {
    const page = await get(`/status/${seeded.workflowUuid}`).expect(200);
    const link = `href="/status/${seeded.workflowUuid}/builds/${seeded.instances[0].uuid}/2_1/changes"`;
    expect(page.text.split(link)).toHaveLength(2);
    expect(page.text).toContain(
      'What changed<span class="visually-hidden"> since the last passing build before build 2_1</span>',
    );
  });

  it('refuses an empty or unclosed #job= glob with a 400 in the problem shape', async () => {
    for (const glob of ['', 'test [ab']) {
      const reply = await t.http
        .post(`/suites/${seeded.suites[0].uuid}/instances`)
        .set('Authorization', `Bearer ${admin}`)
        .send({
          name: 'selected',
          service: { type: 'github', url: github.url },
          resource: `${GithubFake.resource('octo', 'matrix', 'ci.yml')}#job=${glob}`,
        })
        .expect(400);
      expect(reply.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect((reply.body as { detail: string }).detail).toMatch(
        glob === '' ? /#job= glob is empty/ : /not closed/,
      );
    }
  });
});
