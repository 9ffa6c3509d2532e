import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { CheckStateEntity } from '../../src/test-monitoring/entities/check-state.entity.js';
import { FollowedRefEntity } from '../../src/repositories/follow/entities/followed-ref.entity.js';
import { FollowedRepositoryEntity } from '../../src/repositories/follow/entities/followed-repository.entity.js';
import { launchChromium, recordOutsideRequests, SCREENSHOTS } from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { seedBuilds, seedVersion, type SeededVersion } from '../support/monitoring-seed.js';
import { buildZip } from '../support/zip-builder.js';

const DAY = 86_400_000;
/** The password createTestApp's userToken gives every user it makes. */
const PASSWORD = 'a-test-password';
/** axe-core from node_modules, injected into the page by the test (the pages themselves run no script). */
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeResult {
  violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[];
}

const github = (repo: string) => ({
  type: 'github' as const,
  url: 'https://api.github.com',
  resource: `repos/${repo}/actions/workflows/ci.yml`,
});

/** The HTML status pages (API.md 5.4) in Chromium: the right data for each caller, and no accessibility violation. */
describe('status pages in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let aliceToken: string;
  let aliceId: number;
  let fake: GithubFake;
  const w = {} as Record<
    'rnaseq' | 'variants' | 'proteomics' | 'metagenomics' | 'internal' | 'runnable',
    SeededVersion
  >;

  /** Builds over the last 30 days, one run most days; a run fails when (day + instance + shift) divides by `failEvery` (0: never). */
  const history = async (
    dataSource: DataSource,
    version: SeededVersion,
    repo: string,
    failEvery: number,
    shift = 0,
  ) => {
    const now = Date.now();
    for (const [index, instance] of version.instances.entries()) {
      const builds = [];
      for (let day = 29; day >= 0; day--) {
        if ((day + index) % 6 === 5) {
          continue; // a quiet day
        }
        const run = 9000 + day * 10 + index;
        const failed = failEvery > 0 && (day + index + shift) % failEvery === 0;
        builds.push({
          buildId: `${run}_1`,
          status: failed ? 'failed' : 'passed',
          startedAt: new Date(now - day * DAY - (index + 1) * 3_600_000),
          durationSeconds: 240 + index * 95 + (day % 4) * 17,
          url: `https://github.com/${repo}/actions/runs/${run}`,
        });
      }
      await seedBuilds(dataSource, instance.id, builds);
    }
  };

  beforeAll(async () => {
    // The GitHub API of the workflow whose tests the owner runs from its page.
    fake = new GithubFake();
    await fake.start();
    t = await createTestApp({ GITHUB_API_URL: fake.url, GITHUB_TOKEN: 'ghp_status-pages-token' });
    browser = await launchChromium();
    const dataSource = t.app.get(DataSource);
    aliceToken = await t.userToken(['user'], 'alice');
    aliceId = (await t.http.get('/users/current').set('Authorization', `Bearer ${aliceToken}`)).body
      .id as number;
    const seed = (name: string, repo: string, instances: number, isPublic = true) =>
      seedVersion(dataSource, {
        ownerId: aliceId,
        public: isPublic,
        name,
        version: '1.2',
        suites: [
          {
            name: 'test1',
            instances: Array.from({ length: instances }, (_, n) => ({
              ...github(repo),
              name: n === 0 ? 'ubuntu-latest, Python 3.12' : 'macos-latest, Python 3.11',
            })),
          },
        ],
      });
    w.metagenomics = await seed('Metagenomics assembly', 'org/metagenomics', 1);
    w.proteomics = await seed('Proteomics QC', 'org/proteomics', 1);
    await history(dataSource, w.proteomics, 'org/proteomics', 1);
    w.variants = await seed('Variant calling (GATK)', 'org/variants', 2);
    await history(dataSource, w.variants, 'org/variants', 4);
    w.internal = await seed('Internal benchmark', 'org/internal', 1, false);
    await history(dataSource, w.internal, 'org/internal', 0);
    w.rnaseq = await seed('RNA-seq pipeline', 'nf-core/rnaseq', 2);
    await history(dataSource, w.rnaseq, 'nf-core/rnaseq', 9, 3);
    // The variant caller's last check failed: its status is stale.
    await dataSource
      .getRepository(CheckStateEntity)
      .update(
        { instanceId: w.variants.instances[0].id },
        { lastCheckFailed: true, lastCheckedAt: new Date() },
      );
    await dataSource
      .getRepository(CheckStateEntity)
      .update({ instanceId: w.rnaseq.instances[0].id }, { lastCheckedAt: new Date(Date.now() - 120_000) });
  });

  afterAll(async () => {
    await browser?.close();
    await links?.close();
    await t?.close();
    await fake?.stop();
  });

  let links: LinkServer;

  /**
   * Registers crs4/rocrate-validator's crate whose test instance has no resource (see its README
   * in test/fixtures), public, as its owner would: the version gets its repository checks' issues.
   */
  const registerCrateWithIssues = async (): Promise<string> => {
    links = await LinkServer.start();
    const folder = 'test/fixtures/crates/workflow-testing-profile/invalid/testinstance_no_resource';
    const zip = buildZip(
      readdirSync(folder).map((file) => ({ name: file, data: readFileSync(join(folder, file)) })),
    );
    const registered = await t.http
      .post('/users/current/workflows')
      .set('Authorization', `Bearer ${aliceToken}`)
      .send({
        roc_link: links.route('/crate.zip', { kind: 'bytes', body: zip }),
        version: '1.0',
        public: true,
      });
    expect(registered.status).toBe(201);
    return registered.body.uuid as string;
  };

  const open = async (
    context: BrowserContext,
    path: string,
  ): Promise<{ page: Page; status: number; outside: string[] }> => {
    const page = await context.newPage();
    const outside = recordOutsideRequests(page, t.baseUrl);
    const response = await page.goto(`${t.baseUrl}${path}`);
    await page.waitForLoadState('load');
    return { page, status: response?.status() ?? 0, outside };
  };

  /** axe-core's WCAG 2.1 A and AA rules, run in the page. */
  const axe = async (page: Page): Promise<AxeResult['violations']> => {
    await page.addScriptTag({ content: AXE });
    const result = await page.evaluate<AxeResult>(
      `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })`,
    );
    return result.violations;
  };

  // The test injects axe-core itself; the pages carry a Content-Security-Policy that would refuse it.
  const context = (signedIn: boolean) =>
    browser
      .newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 })
      .then(async (created) => {
        if (signedIn) {
          await created.addCookies([{ name: 'session', value: aliceToken, url: t.baseUrl }]);
        }
        return created;
      });

  it('lists the public workflows to anybody, newest first, with status, badge and 30 days, and no violation', async () => {
    const anonymous = await context(false);
    const { page, status, outside } = await open(anonymous, '/status');
    expect(status).toBe(200);
    const rows = await page.locator('tbody tr').allInnerTexts();
    expect(rows.map((row) => row.split('\t')[0].trim())).toEqual([
      'RNA-seq pipeline',
      'Variant calling (GATK)',
      'Proteomics QC',
      'Metagenomics assembly',
    ]);
    expect(rows[0]).toMatch(/\bpassing/);
    expect(rows[0]).not.toContain('some passing');
    expect(rows[1]).toMatch(/some passing\s*\(stale\)/);
    expect(rows[2]).toContain('failing');
    expect(rows[3]).toContain('no builds');
    expect(await page.locator('header').innerText()).toContain('Public workflows (not signed in)');
    // Badges are this service's images, loaded.
    const badges = page.locator('tbody img');
    expect(await badges.count()).toBe(4);
    expect(
      await page.evaluate<boolean>(
        '[...document.images].every((image) => image.complete && image.naturalWidth > 0)',
      ),
    ).toBe(true);
    expect(await axe(page)).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/status-anonymous.png`, fullPage: true });
    expect(outside).toEqual([]);
    await anonymous.close();
  });

  it("adds the owner's private workflows when the session cookie says who they are", async () => {
    const alice = await context(true);
    const { page, status, outside } = await open(alice, '/status');
    expect(status).toBe(200);
    const names = (await page.locator('tbody th').allInnerTexts()).map((name) => name.trim());
    expect(names).toContain('Internal benchmark private');
    expect(await page.locator('header').innerText()).toContain('Signed in as alice');
    expect(await axe(page)).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/status-list.png`, fullPage: true });
    expect(outside).toEqual([]);
    await alice.close();
  });

  it('shows one workflow: status, chart, instances linked to their CI, latest builds linked to their runs; no violation', async () => {
    const anonymous = await context(false);
    const { page, status, outside } = await open(anonymous, `/status/${w.variants.workflowUuid}`);
    expect(status).toBe(200);
    expect(await page.locator('h1').innerText()).toBe('Variant calling (GATK) public');
    expect(await page.locator('p.summary').innerText()).toMatch(/^some passing — stale/);
    const chart = page.locator('svg.chart');
    expect(await chart.getAttribute('aria-label')).toMatch(
      /^Last 30 days: \d+ passed, \d+ failed builds; failures on \d+ days$/,
    );
    expect(await chart.locator('rect').count()).toBeGreaterThanOrEqual(30);
    const instance = page.locator('tbody tr').first();
    expect(await instance.locator('td a').first().getAttribute('href')).toBe(
      'https://github.com/org/variants/actions/workflows/ci.yml',
    );
    expect(await instance.locator('td[data-label="CI run"] a').getAttribute('href')).toMatch(
      /^https:\/\/github\.com\/org\/variants\/actions\/runs\/\d+$/,
    );
    // Beside each build, its log (API.md 11); the button to run the tests is for the owner only.
    // A failed build has "What changed" after its log (API.md 16).
    expect(await instance.locator('td[data-label="Log"] a').first().getAttribute('href')).toMatch(
      new RegExp(`^/instances/${w.variants.instances[0].uuid}/builds/\\d+_1/logs$`),
    );
    expect(await page.getByRole('button', { name: 'Run tests now' }).count()).toBe(0);
    expect(await page.locator('tbody tr').count()).toBe(2);
    expect(await axe(page)).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/status-workflow.png`, fullPage: true });
    expect(outside).toEqual([]);
    await anonymous.close();
  });

  it('shows what a followed repository registered, ignored and failed to register; no violation', async () => {
    const dataSource = t.app.get(DataSource);
    const at = (minutes: number) => new Date(Date.now() - minutes * 60_000);
    const [repository] = await dataSource.getRepository(FollowedRepositoryEntity).save([
      {
        workflowId: w.rnaseq.workflowId,
        fullName: 'nf-core/rnaseq',
        owner: 'nf-core',
        repo: 'rnaseq',
        apiFollow: JSON.stringify({ tags: ['v*.*.*'], branches: ['main'] }),
        fileFollow: null,
        refsReadAt: at(1),
        refsEtags: null,
        nextPollAt: null,
        claimOwner: null,
        claimUntil: null,
        polledAt: at(1),
        pollError: 'GitHub answered 502 Bad Gateway for the tags of nf-core/rnaseq',
        goneAt: null,
      },
    ]);
    const ref = (
      name: string,
      state: FollowedRefEntity['state'],
      minutes: number,
      reason: string | null = null,
    ) => ({
      repositoryId: repository.id,
      kind: 'tag' as const,
      name,
      commit: 'acb5820ced9479c074f688cc328bf03f341a511d',
      state,
      version: state === 'registered' ? name : null,
      reason,
      attempts: 1,
      nextAttemptAt: null,
      claimOwner: null,
      claimUntil: null,
      updatedAt: at(minutes),
    });
    await dataSource
      .getRepository(FollowedRefEntity)
      .save([
        ref('v3.14.0', 'registered', 30),
        ref(
          'v3.15.0',
          'failed',
          20,
          "the GitHub repository nf-core/rnaseq has no ro-crate-metadata.json at its root (ref 'v3.15.0')",
        ),
        ref(
          'v3.15.0/rc',
          'ignored',
          10,
          "the tag name 'v3.15.0/rc' cannot be a version name: it must not contain '/'",
        ),
      ]);
    const anonymous = await context(false);
    const { page, status, outside } = await open(anonymous, `/status/${w.rnaseq.workflowUuid}`);
    expect(status).toBe(200);
    const section = page.locator('h2', { hasText: 'Following' });
    expect(await section.innerText()).toBe('Following nf-core/rnaseq');
    expect(await section.locator('a').getAttribute('href')).toBe('https://github.com/nf-core/rnaseq');
    const text = await page.locator('main').innerText();
    expect(text).toMatch(
      /New versions from tags v\*\.\*\.\* and pushes to branches main \(set through the API\)\./,
    );
    expect(text).toMatch(/The last look at the repository, .* failed: GitHub answered 502/);
    const rows = await page.locator('h2:has-text("Following") ~ table tbody tr').allInnerTexts();
    expect(rows.map((row) => row.split('\t').slice(0, 2).join(' | '))).toEqual([
      "tag v3.15.0/rc | ignored: the tag name 'v3.15.0/rc' cannot be a version name: it must not contain '/'",
      "tag v3.15.0 | not registered: the GitHub repository nf-core/rnaseq has no ro-crate-metadata.json at its root (ref 'v3.15.0')",
      'tag v3.14.0 | version v3.14.0 registered',
    ]);
    expect(await axe(page)).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/status-workflow-following.png`, fullPage: true });
    expect(outside).toEqual([]);
    await anonymous.close();
  });

  it('signs in with the form and out again: the session cookie of the API, no violation on the form', async () => {
    const anonymous = await context(false);
    const { page, outside } = await open(anonymous, `/status/${w.variants.workflowUuid}`);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.waitForURL(/\/status\/sign-in\?next=/);
    expect(await axe(page)).toEqual([]);
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill('not-her-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForLoadState('load');
    expect(await page.getByRole('alert').innerText()).toContain('Wrong username or password');
    expect(await axe(page)).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/status-sign-in-refused.png`, fullPage: true });

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back to the page the sign-in started from, signed in.
    await page.waitForURL(`${t.baseUrl}/status/${w.variants.workflowUuid}`);
    expect(await page.locator('header').innerText()).toContain('Signed in as alice');
    const cookies = await anonymous.cookies(t.baseUrl);
    expect(cookies.find((cookie) => cookie.name === 'session')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
    });
    await page.goto(`${t.baseUrl}/status`);
    expect(await page.locator('tbody th').allInnerTexts()).toContain('Internal benchmark private');
    await page.screenshot({ path: `${SCREENSHOTS}/status-signed-in.png`, fullPage: true });

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${t.baseUrl}/status`);
    expect(await page.locator('header').innerText()).toContain('Public workflows (not signed in)');
    expect(await page.locator('tbody th').allInnerTexts()).not.toContain('Internal benchmark private');
    expect((await anonymous.cookies(t.baseUrl)).some((cookie) => cookie.name === 'session')).toBe(false);
    expect(outside).toEqual([]);
    await anonymous.close();
  });

  it('refuses a sign-in form posted by another site, even one on the same host (CSRF)', async () => {
    // Another origin on the same host (127.0.0.1, another port): the same site to the browser, so
    // even a SameSite=Strict cookie would go along; the Origin check is what refuses it.
    const attacker = createServer((_request, response) => {
      response.setHeader('content-type', 'text/html; charset=utf-8');
      response.end(
        `<!doctype html><form method="post" action="${t.baseUrl}/status/sign-in">` +
          `<input name="username" value="alice"><input name="password" value="${PASSWORD}"></form>` +
          '<script>document.forms[0].submit()</script>',
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    const anonymous = await context(false);
    try {
      const page = await anonymous.newPage();
      await page.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`);
      await page.waitForURL(`${t.baseUrl}/status/sign-in`);
      expect(await page.locator('h1').innerText()).toBe('403 Forbidden');
      expect(await page.locator('main').innerText()).toContain('sent from another site');
      expect((await anonymous.cookies(t.baseUrl)).some((cookie) => cookie.name === 'session')).toBe(false);
    } finally {
      await anonymous.close();
      await new Promise<void>((resolve) => attacker.close(() => resolve()));
    }
  });

  it.each([360, 390])(
    'fits a phone %i px wide: no page scrolls sideways, and the phone layout has no violation',
    async (width) => {
      const phone = await browser.newContext({
        bypassCSP: true,
        viewport: { width, height: 780 },
        deviceScaleFactor: 1,
        isMobile: true,
        hasTouch: true,
      });
      await phone.addCookies([{ name: 'session', value: aliceToken, url: t.baseUrl }]);
      for (const [name, path] of [
        ['list', '/status'],
        ['workflow', `/status/${w.variants.workflowUuid}`],
        ['wall', '/status/wall'],
        ['sign-in', '/status/sign-in'],
        ['issue-types', '/workflows/issues.html'],
      ] as const) {
        const { page, status } = await open(phone, path);
        expect({ path, status }).toEqual({ path, status: 200 });
        const scrollWidth = await page.evaluate<number>('document.documentElement.scrollWidth');
        expect({ path, width, scrollWidth: Math.min(scrollWidth, width) }).toEqual({
          path,
          width,
          scrollWidth,
        });
        if (name === 'workflow' || name === 'list' || name === 'issue-types') {
          expect(await axe(page)).toEqual([]);
        }
        await page.screenshot({ path: `${SCREENSHOTS}/status-phone-${width}-${name}.png`, fullPage: true });
        await page.close();
      }
      await phone.close();
    },
  );

  it('shows a wall screen full width, failing first, reloading itself without script', async () => {
    const wall = await browser.newContext({
      bypassCSP: true,
      viewport: { width: 1920, height: 1080 },
      deviceScaleFactor: 1,
      javaScriptEnabled: false,
    });
    const { page, status, outside } = await open(wall, '/status/wall?refresh=60');
    expect(status).toBe(200);
    expect(await page.locator('meta[http-equiv="refresh"]').getAttribute('content')).toBe('60');
    const tiles = await page.locator('li.tile h2').allInnerTexts();
    expect(tiles).toEqual([
      'Proteomics QC',
      'Variant calling (GATK)',
      'Metagenomics assembly',
      'RNA-seq pipeline',
    ]);
    const mainWidth = await page.locator('main').evaluate((main) => main.getBoundingClientRect().width);
    expect(mainWidth).toBeGreaterThan(1850);
    await page.screenshot({ path: `${SCREENSHOTS}/status-wall.png`, fullPage: true });
    expect(outside).toEqual([]);
    await wall.close();
    // axe needs script: the same page once more with it.
    const checked = await context(false);
    const again = await open(checked, '/status/wall');
    expect(await axe(again.page)).toEqual([]);
    await checked.close();
  });

  it('answers /favicon.ico with an icon the browser can draw', async () => {
    const anonymous = await context(false);
    const { page } = await open(anonymous, '/status');
    const size = await page.evaluate<[number, number]>(`new Promise((resolve) => {
      const icon = new Image();
      icon.onload = () => resolve([icon.naturalWidth, icon.naturalHeight]);
      icon.onerror = () => resolve([0, 0]);
      icon.src = '/favicon.ico';
    })`);
    expect(size).toEqual([16, 16]);
    await anonymous.close();
  });

  it('answers a private workflow with the 404 page to others, and shows it to its owner; the 404 page has no violation', async () => {
    const anonymous = await context(false);
    const hidden = await open(anonymous, `/status/${w.internal.workflowUuid}`);
    expect(hidden.status).toBe(404);
    expect(await hidden.page.locator('h1').innerText()).toBe('404 Not Found');
    expect(await hidden.page.content()).not.toContain('Internal benchmark');
    expect(await axe(hidden.page)).toEqual([]);
    await anonymous.close();
    const alice = await context(true);
    const own = await open(alice, `/status/${w.internal.workflowUuid}`);
    expect(own.status).toBe(200);
    expect(await own.page.locator('h1').innerText()).toBe('Internal benchmark private');
    await alice.close();
  });

  it("shows a version's issues and an instance that is never checked, and why; the page of issue types; no violation", async () => {
    const uuid = await registerCrateWithIssues();
    const anonymous = await context(false);
    const { page, status, outside } = await open(anonymous, `/status/${uuid}`);
    expect(status).toBe(200);
    const issues = await page.locator('ul.issues li').allInnerTexts();
    expect(issues[0]).toMatch(
      /^ERROR Workflow Testing RO-Crate: TestInstance resource wftest.TestInstanceResource\s+The TestInstance MUST/,
    );
    expect(issues.some((issue) => /^ERROR Test instance that cannot be checked/.test(issue))).toBe(true);
    expect(issues.some((issue) => /^WARNING Missing LICENSE/.test(issue))).toBe(false);
    expect(await page.locator('ul.issues li a').first().getAttribute('href')).toBe(
      '/workflows/issues.html#wftest.TestInstanceResource',
    );
    const instance = await page.locator('tbody tr').first().innerText();
    expect(instance).toMatch(/jenkins: no resource/);
    expect(instance).toMatch(/NEVER CHECKED\s+the crate gives it no resource/);
    expect(await axe(page)).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/status-workflow-issues.png`, fullPage: true });
    expect(outside).toEqual([]);

    // Its issue's link: the page of issue types, at the type.
    await page.locator('ul.issues li a').first().click();
    await page.waitForLoadState('load');
    expect(page.url()).toBe(`${t.baseUrl}/workflows/issues.html#wftest.TestInstanceResource`);
    expect(await page.locator('h1').innerText()).toBe('Repository checks');
    const row = page.locator('tr[id="wftest.TestInstanceResource"]');
    expect(await row.innerText()).toMatch(/TestInstance resource[\s\S]*ERROR/);
    expect(await page.locator('tbody tr').count()).toBeGreaterThanOrEqual(17);
    expect(await axe(page)).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/issue-types.png`, fullPage: true });
    await anonymous.close();

    const back = await open(await context(false), '/workflows/issues.html?back=/status');
    expect(back.status).toBe(200);
    expect(await back.page.locator('main a').first().getAttribute('href')).toBe('/status');
    const refused = await open(await context(false), '/workflows/issues.html?back=javascript:alert(1)');
    expect(refused.status).toBe(400);
    expect(await refused.page.locator('main').innerText()).toContain('back must be an http(s) URL or a path');
  });

  it("lets the owner run the tests from the workflow's page and read the log of a build; no violation", async () => {
    // Seeded last, so that the lists of the tests before stay as they are.
    const dataSource = t.app.get(DataSource);
    w.runnable = await seedVersion(dataSource, {
      ownerId: aliceId,
      public: true,
      name: 'Single-cell atlas',
      version: '2.0',
      suites: [
        {
          name: 'test1',
          instances: [
            {
              type: 'github',
              url: fake.url,
              resource: 'repos/org/atlas/actions/workflows/ci.yml',
              name: 'ubuntu-latest',
            },
          ],
        },
      ],
    });
    fake.addRepository('org', 'atlas');
    fake.push('org', 'atlas', { branch: 'main', files: { 'README.md': 'atlas' } });
    fake.setRuns('org', 'atlas', 'ci.yml', [{ id: 7100, conclusion: 'failure' }]);
    fake.setRunLogs('org', 'atlas', 7100, [
      { name: 'test', text: '##[group]Run planemo test\nTool atlas_filter failed: reference data moved\n' },
    ]);
    await seedBuilds(dataSource, w.runnable.instances[0].id, [
      {
        buildId: '7100_1',
        status: 'failed',
        startedAt: new Date(Date.now() - 40 * DAY),
        durationSeconds: 312,
        url: `https://github.com/org/atlas/actions/runs/7100`,
      },
    ]);
    const alice = await context(true);
    const { page, status, outside } = await open(alice, `/status/${w.runnable.workflowUuid}`);
    expect(status).toBe(200);
    const row = page.locator('tbody tr').first();
    expect(await row.getByRole('link', { name: 'Log of build 7100_1' }).getAttribute('href')).toBe(
      `/instances/${w.runnable.instances[0].uuid}/builds/7100_1/logs`,
    );
    expect(await axe(page)).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/status-run-tests.png`, fullPage: true });
    await page.getByRole('link', { name: 'Log of build 7100_1' }).click();
    await page.waitForLoadState('load');
    expect(await page.locator('body').innerText()).toContain(
      'Tool atlas_filter failed: reference data moved',
    );
    await page.screenshot({ path: `${SCREENSHOTS}/status-build-log.png` });
    await page.goBack();
    const posted = () =>
      page.waitForResponse(
        (response) => response.request().method() === 'POST' && /\/builds$/.test(response.url()),
      );
    const [started] = await Promise.all([
      posted(),
      page.getByRole('button', { name: 'Run tests now' }).click(),
    ]);
    // The form's POST answers 303 back to the page.
    expect(started.status()).toBe(303);
    await page.waitForURL(`${t.baseUrl}/status/${w.runnable.workflowUuid}`);
    await page.waitForLoadState('load');
    expect(fake.dispatches).toEqual([{ owner: 'org', repo: 'atlas', workflow: 'ci.yml', ref: 'main' }]);
    // A second click within 10 minutes: the 429 page says when to try again.
    const [again] = await Promise.all([
      posted(),
      page.getByRole('button', { name: 'Run tests now' }).click(),
    ]);
    expect(again.status()).toBe(429);
    await page.waitForLoadState('load');
    expect(await page.locator('h1').innerText()).toBe('429 Too Many Requests');
    const refusal = await page.locator('main').innerText();
    expect(refusal).toContain('The tests were not started.');
    expect(refusal).toContain('at most one start per instance per 10 minutes');
    expect(refusal).toMatch(/The next run can be asked for at \d{4}-\d\d-\d\d \d\d:\d\d UTC\./);
    // The start it refers to, as people read a time: to the minute, not in ISO 8601.
    expect(refusal).toMatch(/A build of this test instance was started at \d{4}-\d\d-\d\d \d\d:\d\d UTC:/);
    expect(refusal).not.toMatch(/\d\dT\d\d:\d\d/);
    expect(await axe(page)).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/status-run-tests-again.png`, fullPage: true });
    expect(fake.dispatches).toHaveLength(1);
    // The refusal's way back: the workflow's page, with its button.
    await page.getByRole('link', { name: 'Back to the workflow' }).click();
    await page.waitForURL(`${t.baseUrl}/status/${w.runnable.workflowUuid}`);
    expect(await page.locator('h1').innerText()).toContain('Single-cell atlas');
    expect(await page.getByRole('button', { name: 'Run tests now' }).count()).toBe(1);

    expect(outside).toEqual([]);
    await alice.close();
  });

  it('says on the first line that the check failed and why, and when it was tried, before any build; no violation', async () => {
    // Seeded last, so that the lists of the tests before stay as they are.
    const dataSource = t.app.get(DataSource);
    const unreachable = await seedVersion(dataSource, {
      ownerId: aliceId,
      public: true,
      name: 'Long-read assembly',
      version: '0.9',
      suites: [{ name: 'test1', instances: [{ ...github('org/long-read'), name: 'ubuntu-latest' }] }],
    });
    // Whole seconds, as MariaDB would keep it.
    const tried = new Date(Math.floor(Date.now() / 1000) * 1000 - 5 * 60_000);
    await dataSource.getRepository(CheckStateEntity).update(
      { instanceId: unreachable.instances[0].id },
      {
        lastCheckFailed: true,
        lastCheckAt: tried,
        failureCount: 1,
        lastError: 'api.github.com is unreachable (ECONNREFUSED)',
      },
    );
    const { page, status, outside } = await open(await context(false), `/status/${unreachable.workflowUuid}`);
    expect(status).toBe(200);
    expect(await page.locator('p.summary').innerText()).toBe(
      'The last check of ubuntu-latest failed: api.github.com is unreachable (ECONNREFUSED)',
    );
    const lastCheck = await page.locator('ul.facts li').nth(1).innerText();
    expect(lastCheck).toMatch(/^Last check: \d{4}-\d\d-\d\d \d\d:\d\d UTC \(failed\), none successful yet$/);
    expect(await page.locator('ul.facts li time').first().getAttribute('datetime')).toBe(tried.toISOString());
    expect(await page.locator('tbody tr').first().innerText()).toMatch(
      /check failed \d{4}-\d\d-\d\d \d\d:\d\d UTC: api\.github\.com is unreachable \(ECONNREFUSED\)/,
    );
    expect(await axe(page)).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/status-workflow-check-failed.png`, fullPage: true });
    expect(outside).toEqual([]);
  });
});
