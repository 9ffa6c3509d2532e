import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { CheckStateEntity } from '../../src/test-monitoring/entities/check-state.entity.js';
import { launchChromium, recordOutsideRequests, SCREENSHOTS } from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { seedBuilds, seedVersion, type SeededVersion } from '../support/monitoring-seed.js';

const DAY = 86_400_000;
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
  const w = {} as Record<'rnaseq' | 'variants' | 'proteomics' | 'metagenomics' | 'internal', SeededVersion>;

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
    t = await createTestApp();
    browser = await launchChromium();
    const dataSource = t.app.get(DataSource);
    aliceToken = await t.userToken(['user'], 'alice');
    const aliceId = (await t.http.get('/users/current').set('Authorization', `Bearer ${aliceToken}`)).body
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
    await t?.close();
  });

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
    expect(await instance.locator('td a').last().getAttribute('href')).toMatch(
      /^https:\/\/github\.com\/org\/variants\/actions\/runs\/\d+$/,
    );
    expect(await page.locator('tbody tr').count()).toBe(2);
    expect(await axe(page)).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/status-workflow.png`, fullPage: true });
    expect(outside).toEqual([]);
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
});
