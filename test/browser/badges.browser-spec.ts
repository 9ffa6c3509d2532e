import type { Browser } from 'playwright-core';
import { DataSource } from 'typeorm';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { launchChromium, recordOutsideRequests, SCREENSHOTS } from '../support/browser.js';
import { seedBuilds, seedVersion, type SeededVersion } from '../support/monitoring-seed.js';

const GITHUB = {
  type: 'github' as const,
  url: 'http://127.0.0.1:9/api',
  resource: 'repos/o/r/actions/workflows/ci.yml',
};

interface DrawnPart {
  text: string;
  fill: string;
  textFill: string;
  x: number;
  width: number;
  textLeft: number;
  textRight: number;
}

interface Drawn {
  title: string;
  width: number;
  label: DrawnPart;
  message: DrawnPart;
}

/** The SVG badge (API.md 5.2) as Chromium draws it: its texts, their room, its colours. */
describe('badges in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  const workflows: { name: string; w: SeededVersion; label: string; message: string; fill: string }[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    browser = await launchChromium();
    const dataSource = t.app.get(DataSource);
    const cases: [string, string[][], string, string, string, number?][] = [
      ['passing', [['passed'], ['passed']], 'tests', 'passing', 'rgb(68, 204, 17)'],
      ['some passing', [['passed'], ['failed']], 'galaxy tests', 'some passing', 'rgb(223, 179, 23)'],
      ['failing', [['failed']], 'CI', 'failing', 'rgb(224, 93, 68)'],
      ['no builds', [[]], 'a much longer label, 32 chars...', 'no builds yet for 1.0', 'rgb(159, 159, 159)'],
      // API.md 16: the newest build is older than STALE_AFTER_DAYS (30).
      ['stale', [['passed']], 'tests', 'passing (stale)', 'rgb(68, 204, 17)', 40],
    ];
    for (const [name, statuses, label, message, fill, daysAgo = 0] of cases) {
      const w = await seedVersion(dataSource, {
        public: true,
        suites: [{ instances: statuses.map(() => GITHUB) }],
      });
      for (const [index, builds] of statuses.entries()) {
        await seedBuilds(
          dataSource,
          w.instances[index].id,
          builds.map((status, n) => ({
            buildId: `${n + 1}_1`,
            status,
            startedAt: new Date(Date.now() - daysAgo * 24 * 3600_000),
          })),
        );
      }
      workflows.push({ name, w, label, message, fill });
    }
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('draws the label and the status, each inside its own part, in the colours of API.md 5.2', async () => {
    const page = await browser.newPage({ deviceScaleFactor: 2 });
    const outside = recordOutsideRequests(page, t.baseUrl);
    for (const { name, w, label, message, fill } of workflows) {
      const url = `${t.baseUrl}/workflows/${w.workflowUuid}/badge.svg?label=${encodeURIComponent(label)}`;
      expect((await page.goto(url))?.status()).toBe(200);
      // A string, evaluated in the page: this project compiles without the DOM's types.
      const drawn = await page.evaluate<Drawn>(`(() => {
        const svg = document.querySelector('svg');
        const part = (which) => {
          const rect = svg.querySelector('rect[data-part="' + which + '"]');
          const text = svg.querySelector('text[data-part="' + which + '"]');
          const box = text.getBBox();
          return {
            text: text.textContent,
            fill: getComputedStyle(rect).fill,
            textFill: getComputedStyle(text).fill,
            x: rect.x.baseVal.value,
            width: rect.width.baseVal.value,
            textLeft: box.x,
            textRight: box.x + box.width,
          };
        };
        return {
          title: svg.querySelector('title').textContent,
          width: svg.width.baseVal.value,
          label: part('label'),
          message: part('message'),
        };
      })()`);
      expect({ name, title: drawn.title }).toEqual({ name, title: `${label}: ${message}` });
      expect(drawn.label).toMatchObject({
        text: label,
        fill: 'rgb(85, 85, 85)',
        textFill: 'rgb(255, 255, 255)',
      });
      expect(drawn.message).toMatchObject({ text: message, fill, textFill: 'rgb(255, 255, 255)' });
      // Each text inside its part with at least 3 px to spare each side, and the parts fill the badge.
      for (const part of [drawn.label, drawn.message]) {
        expect({ name, left: part.textLeft - part.x >= 3 }).toEqual({ name, left: true });
        expect({ name, right: part.x + part.width - part.textRight >= 3 }).toEqual({ name, right: true });
      }
      expect(drawn.message.x).toBe(drawn.label.width);
      expect(drawn.width).toBe(drawn.label.width + drawn.message.width);
    }

    // One picture of them all, twice the size, for a person to look at.
    const rows = workflows
      .map(
        ({ name, w, label }) =>
          `<p style="display: flex; align-items: center; gap: 8px"><img alt="${name}" src="${t.baseUrl}/workflows/${w.workflowUuid}/badge.svg?label=${encodeURIComponent(label)}"> ${name}</p>`,
      )
      .join('');
    await page.setViewportSize({ width: 480, height: 270 });
    await page.goto(`${t.baseUrl}/health/live`);
    await page.setContent(`<body style="font: 14px sans-serif; margin: 16px">${rows}</body>`);
    await page.waitForFunction(
      '[...document.images].every((image) => image.complete && image.naturalWidth > 0)',
    );
    await page.screenshot({ path: `${SCREENSHOTS}/badges.png`, scale: 'device' });
    expect(outside).toEqual([]);
    await page.close();
  });
});
