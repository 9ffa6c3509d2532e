import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { DEFAULT_REFRESH_INTERVAL_MS } from '../../src/test-monitoring/refresh-schedule.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { GithubFake } from '../fakes/github-fake.js';
import { launchChromium, recordOutsideRequests, SCREENSHOTS } from '../support/browser.js';
import { passedThenFailed } from '../support/changed-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { seedVersion, type SeededVersion } from '../support/monitoring-seed.js';

/** axe-core from node_modules, injected into the page by the test (the page itself runs no script). */
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeResult {
  violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[];
}

/** What changed since the last passing build (API.md 16) as a page in Chromium, from the workflow's page. */
describe('the page of what changed in a real browser', () => {
  let t: TestApp;
  let github: GithubFake;
  let browser: Browser;
  let seeded: SeededVersion;

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
    t = await createTestApp();
    browser = await launchChromium();
    github.setRuns(
      'nf-core',
      'rnaseq',
      'ci.yml',
      passedThenFailed('test (macos-latest, 3.11)', 'Run nf-test --profile docker'),
    );
    seeded = await seedVersion(t.app.get(DataSource), {
      public: true,
      name: 'RNA-seq pipeline',
      version: '3.14',
      suites: [
        {
          instances: [
            {
              type: 'github',
              url: github.url,
              name: 'matrix',
              resource: `${GithubFake.resource('nf-core', 'rnaseq', 'ci.yml')}#job=test (*)`,
            },
          ],
        },
      ],
    });
    await t.app.get(RefreshScheduler).tick(new Date(Date.now() + 2 * DEFAULT_REFRESH_INTERVAL_MS));
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await github?.stop();
  });

  /** axe-core's WCAG 2.1 A and AA rules, run in the page. */
  const axe = async (page: Page): Promise<AxeResult['violations']> => {
    await page.addScriptTag({ content: AXE });
    const result = await page.evaluate<AxeResult>(
      `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })`,
    );
    return result.violations;
  };

  it.each([
    ['desktop', 1280],
    ['phone', 360],
  ])(
    "opens from the failed build's link (%s): builds, commits, runners, failures; no violation, nothing from elsewhere",
    async (name, width) => {
      const context = await browser.newContext({
        bypassCSP: true,
        viewport: { width, height: 900 },
        deviceScaleFactor: 1,
      });
      const page = await context.newPage();
      const outside = recordOutsideRequests(page, t.baseUrl);
      await page.goto(`${t.baseUrl}/status/${seeded.workflowUuid}`);
      await page.getByRole('link', { name: /What changed/ }).click();
      await page.waitForLoadState('load');
      expect(page.url()).toBe(
        `${t.baseUrl}/status/${seeded.workflowUuid}/builds/${seeded.instances[0].uuid}/2_1/changes`,
      );
      expect(await page.locator('h1').innerText()).toBe('What changed before build 2_1');
      expect(await page.getByRole('link', { name: /^compare aaaa111/ }).getAttribute('href')).toBe(
        `${github.url}/nf-core/rnaseq/compare/aaaa111...bbbb222`,
      );
      expect(await page.getByRole('row', { name: /Image version/ }).innerText()).toMatch(
        /20240101\.1\.0[\s\S]*20240108\.2\.0/,
      );
      expect(await page.getByRole('link', { name: 'test (macos-latest, 3.11)' }).getAttribute('href')).toBe(
        'https://github.com/nf-core/rnaseq/actions/runs/2/job/201',
      );
      const scrollWidth = await page.evaluate<number>('document.documentElement.scrollWidth');
      expect(scrollWidth).toBeLessThanOrEqual(width);
      expect(await axe(page)).toEqual([]);
      await page.screenshot({ path: `${SCREENSHOTS}/build-changes-${name}.png`, fullPage: true });
      expect(outside).toEqual([]);
      await context.close();
    },
  );
});
