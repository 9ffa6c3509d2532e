import { DataSource } from 'typeorm';
import { DEFAULT_REFRESH_INTERVAL_MS } from '../../src/test-monitoring/refresh-schedule.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { GithubFake } from '../fakes/github-fake.js';
import { passedThenFailed } from '../support/changed-runs.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { seedVersion, type SeededVersion } from '../support/monitoring-seed.js';

/** A job name and a step name a CI would show as they are: the page must show them as text. */
const HOSTILE_JOB = 'test (<script>alert(1)</script>)';
const HOSTILE_STEP = 'Run <b>planemo</b> & "test"';

/** API.md 16 as a page: /status/{wf}/builds/{instance}/{build}/changes. */
describe(`the page of what changed since the last passing build (${testDatabase()})`, () => {
  let t: TestApp;
  let github: GithubFake;
  let owned: SeededVersion;
  let open: SeededVersion;
  let alice: string;
  let bob: string;

  const page = (seeded: SeededVersion, build: string, wf = seeded.workflowUuid): string =>
    `/status/${wf}/builds/${seeded.instances[0].uuid}/${build}/changes`;
  const as = (token: string | undefined, path: string) => {
    const request = t.http.get(path);
    return token === undefined ? request : request.set('Authorization', `Bearer ${token}`);
  };

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
    t = await createTestApp({ UPSTREAM_TIMEOUT_SECONDS: '2' });
    alice = await t.userToken(['user'], 'alice');
    bob = await t.userToken(['user']);
    const aliceId = (await as(alice, '/users/current')).body.id as number;
    github.setRuns('octo', 'matrix', 'ci.yml', passedThenFailed(HOSTILE_JOB, HOSTILE_STEP));
    const instance = {
      type: 'github' as const,
      url: github.url,
      resource: `${GithubFake.resource('octo', 'matrix', 'ci.yml')}#job=test (*)`,
    };
    const dataSource = t.app.get(DataSource);
    owned = await seedVersion(dataSource, {
      ownerId: aliceId,
      name: 'Private <i>pipeline</i>',
      suites: [{ instances: [{ ...instance, name: 'matrix' }] }],
    });
    open = await seedVersion(dataSource, {
      ownerId: aliceId,
      public: true,
      name: 'Open pipeline',
      suites: [{ instances: [instance] }],
    });
    await t.app.get(RefreshScheduler).tick(new Date(Date.now() + 2 * DEFAULT_REFRESH_INTERVAL_MS));
  });

  afterAll(async () => {
    await t?.close();
    await github?.stop();
  });

  afterEach(() => github.heal());

  it('shows both builds, the commits and their comparison, the runners, the durations and what failed', async () => {
    const reply = await as(alice, page(owned, '2_1')).expect(200);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.headers['cache-control']).toBe('private, no-cache');
    const html = reply.text;
    expect(html).toContain('<h1>What changed before build 2_1</h1>');
    expect(html).toContain(`<a href="/status/${owned.workflowUuid}?version=1.0">`);
    expect(html).toContain(
      'This build: <a href="https://github.com/octo/matrix/actions/runs/2">build 2_1</a>',
    );
    expect(html).toContain(
      'Last passing build: <a href="https://github.com/octo/matrix/actions/runs/1">build 1_1</a>',
    );
    expect(html).toContain('<time datetime="2024-01-02T10:00:00.000Z">2024-01-02 10:00 UTC</time>');
    expect(html).toContain('<time datetime="2024-01-01T10:00:00.000Z">2024-01-01 10:00 UTC</time>');
    // The selected jobs' span: 9 minutes failing, 5 passing.
    expect(html).toContain('<td data-label="Duration">9 min 0 s</td>');
    expect(html).toContain('<td data-label="Duration">5 min 0 s</td>');
    expect(html).toContain(
      `<a href="${github.url}/octo/matrix/compare/aaaa111...bbbb222">compare <code>aaaa111</code>…<code>bbbb222</code></a>`,
    );
    expect(html).toContain(`href="/instances/${owned.instances[0].uuid}/builds/2_1/logs"`);
    expect(html).toContain(`href="/instances/${owned.instances[0].uuid}/builds/1_1/logs"`);
    // The runner: the image's version changed, the rest did not.
    expect(html).toMatch(
      /Image version <span class="tag">changed<\/span><\/th>\s*<td data-label="Last passing build">20240101\.1\.0<\/td>\s*<td data-label="This build">20240108\.2\.0<\/td>/,
    );
    expect(html).toMatch(/<th scope="row">Operating system<\/th>\s*<td[^>]*>Ubuntu 22\.04\.3 LTS<\/td>/);
    expect(html).not.toContain('No passing build before this one');
    // The failed job links to its page; the passing one is not listed.
    expect(html).toContain(
      '<a href="https://github.com/octo/matrix/actions/runs/2/job/201"><bdi>test (&lt;script&gt;alert(1)&lt;/script&gt;)</bdi></a> <span class="state failed">failure</span>',
    );
    expect(html).not.toContain('<bdi>test (ubuntu-latest, 3.11)</bdi>');
    expect(html).toContain(
      '<strong><bdi>Run &lt;b&gt;planemo&lt;/b&gt; &amp; &quot;test&quot;</bdi></strong> <span class="state failed">failure</span>',
    );
    expect(html).toContain('<bdi>Private &lt;i&gt;pipeline&lt;/i&gt;</bdi>');
    expect(html).not.toMatch(/<script|<b>|<i>/);
  });

  it('says there is no passing build before the first one, and shows its runner only', async () => {
    const html = (await as(alice, page(owned, '1_1')).expect(200)).text;
    expect(html).toContain('No passing build before this one');
    expect(html).not.toContain('Last passing build');
    expect(html).not.toContain('/compare/');
    expect(html).toMatch(
      /<th scope="row">Image version<\/th>\s*<td data-label="This build">20240101\.1\.0<\/td>/,
    );
    expect(html).toContain('The CI service named no job of this build that did not pass.');
  });

  it("is the owner's for a private workflow: anybody else gets the 404 page, before the CI is asked", async () => {
    const asked = github.requests.length;
    for (const token of [undefined, bob]) {
      const reply = await as(token, page(owned, '2_1')).expect(404);
      expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(reply.text).toContain('There is no such workflow, or it is private and you may not see it.');
      expect(reply.text).not.toContain('pipeline');
    }
    expect(github.requests.length).toBe(asked);
  });

  it('signs in from the 404 page and comes back to the page', async () => {
    const path = page(owned, '2_1');
    const anonymous = await as(undefined, path).expect(404);
    expect(anonymous.text).toContain(
      `<a href="/status/sign-in?next=${encodeURIComponent(path)}">Sign in</a>`,
    );
    const signedIn = await t.http
      .post('/status/sign-in')
      .set('Origin', t.baseUrl)
      .type('form')
      .send(new URLSearchParams({ username: 'alice', password: 'a-test-password', next: path }).toString())
      .expect(303);
    expect(signedIn.headers.location).toBe(path);
    const session = /^session=([^;]*)/.exec(
      (signedIn.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('session=')) ?? '',
    )?.[1];
    const html = (await t.http.get(path).set('Cookie', `session=${session}`).expect(200)).text;
    expect(html).toContain('Signed in as <strong><bdi>alice</bdi></strong>');
  });

  it("is anybody's for a public workflow", async () => {
    const html = (await as(undefined, page(open, '2_1')).expect(200)).text;
    expect(html).toContain('<h1>What changed before build 2_1</h1>');
    expect(html).toContain('Public workflows (not signed in)');
  });

  it("answers 404 for another workflow's instance, a build the instance lacks, and 400 for a bad address", async () => {
    await as(alice, page(owned, '2_1', open.workflowUuid)).expect(404);
    await as(alice, page(owned, '9_1')).expect(404);
    const bad = await as(alice, page(owned, 'x'.repeat(65))).expect(400);
    expect(bad.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(bad.text).toContain('The address is not right');
    await as(alice, `/status/${owned.workflowUuid}/builds/not-a-uuid/2_1/changes`).expect(400);
  });

  it('shows the HTML error page saying the CI could not be asked when GitHub fails (502) or limits (503)', async () => {
    github.fail({ kind: 'status', status: 502 }, '/jobs');
    const failed = await as(alice, page(owned, '2_1')).expect(502);
    expect(failed.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(failed.text).toContain('<h1>502 Bad Gateway</h1>');
    expect(failed.text).toMatch(
      /The CI service could not be asked what changed: the github service http:\/\/127\.0\.0\.1:\d+ did not tell what build &#39;2_1&#39; ran/,
    );
    github.heal();
    github.limitRate({ resetAt: new Date(Date.now() + 600_000) });
    const limited = await as(alice, page(owned, '2_1')).expect(503);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(limited.text).toContain('The CI service could not be asked what changed: the github service');
    expect(limited.text).toContain('is rate-limited until');
  });

  it("links the page beside a failed build on the workflow's status page, not beside a passing one", async () => {
    const html = (await as(alice, `/status/${owned.workflowUuid}`).expect(200)).text;
    expect(html.split(`href="${page(owned, '2_1')}"`)).toHaveLength(2);
    expect(html).not.toContain(`href="/instances/${owned.instances[0].uuid}/builds/2_1/changes"`);
  });
});
