import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { LinkServer } from '../fakes/link-server.js';
import { launchChromium, SCREENSHOTS } from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { seedBuilds, seedVersion, type SeededVersion } from '../support/monitoring-seed.js';

/** The service as a lab reaches it: plain HTTP, under a LAN name (not localhost, which browsers trust). */
const SERVICE_HOST = 'registry.lab.test';
/** Another site that embeds the service's badges and reads its public workflows. */
const EMBEDDER_HOST = 'wiki.lab.test';

const GITHUB = {
  type: 'github' as const,
  url: 'http://127.0.0.1:9/api',
  resource: 'repos/lab/pipeline/actions/workflows/ci.yml',
};

interface Read {
  status?: number;
  body?: string;
  error?: string;
}

/**
 * Where people deploy (API.md 0, 5.1, 5.2): /docs and /status over plain HTTP under a LAN name,
 * and the badges and public reads used from another origin, in Chromium.
 */
describe('over plain HTTP under a LAN name, and from another site, in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let embedder: LinkServer;
  let service: string;
  let open: SeededVersion;
  let hidden: SeededVersion;
  let badgeToken: string;

  beforeAll(async () => {
    t = await createTestApp();
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    service = `http://${SERVICE_HOST}:${port}`;
    embedder = await LinkServer.start();
    browser = await launchChromium([SERVICE_HOST, EMBEDDER_HOST]);
    const dataSource = t.app.get(DataSource);
    const alice = await t.userToken(['user'], 'alice');
    const aliceId = (await t.http.get('/users/current').set('Authorization', `Bearer ${alice}`)).body
      .id as number;
    const seed = async (isPublic: boolean): Promise<SeededVersion> => {
      const w = await seedVersion(dataSource, {
        ownerId: aliceId,
        public: isPublic,
        name: isPublic ? 'Lab pipeline' : 'Unpublished pipeline',
        suites: [{ instances: [GITHUB] }],
      });
      await seedBuilds(dataSource, w.instances[0].id, [
        { buildId: '1_1', status: 'passed', startedAt: new Date() },
      ]);
      return w;
    };
    open = await seed(true);
    hidden = await seed(false);
    badgeToken = (
      await t.http
        .get(`/workflows/${hidden.workflowUuid}/badge-token`)
        .set('Authorization', `Bearer ${alice}`)
        .expect(200)
    ).body.token as string;
  });

  afterAll(async () => {
    await browser?.close();
    await embedder?.close();
    await t?.close();
  });

  /** Requests of the page that failed (a blocked or upgraded subresource), data: URLs aside. */
  const failures = (page: Page): string[] => {
    const failed: string[] = [];
    page.on('requestfailed', (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`));
    page.on('response', (response) => {
      if (response.status() >= 400) {
        failed.push(`${response.url()}: ${response.status()}`);
      }
    });
    return failed;
  };

  it('shows the Swagger UI at /docs, with every script and style loaded over plain HTTP', async () => {
    const page = await browser.newPage();
    const failed = failures(page);
    await page.setViewportSize({ width: 1280, height: 900 });
    expect((await page.goto(`${service}/docs`))?.status()).toBe(200);
    await page.locator('.opblock-tag').first().waitFor({ state: 'visible', timeout: 15_000 });
    await page.screenshot({ path: `${SCREENSHOTS}/lan-docs.png` });
    expect(await page.locator('.opblock').count()).toBeGreaterThan(5);
    // The UI renders the operations near the viewport only: the last tag's show once scrolled to.
    await page.keyboard.press('End');
    await page.locator('.opblock-tag[data-tag="service"]').waitFor({ state: 'visible', timeout: 15_000 });
    expect(failed).toEqual([]);
    await page.close();
  });

  it('shows the badge images of /status over plain HTTP', async () => {
    const page = await browser.newPage();
    const failed = failures(page);
    await page.setViewportSize({ width: 1280, height: 900 });
    expect((await page.goto(`${service}/status`))?.status()).toBe(200);
    await page.waitForLoadState('load');
    await page.screenshot({ path: `${SCREENSHOTS}/lan-status.png` });
    const images = await page.evaluate<{ src: string; width: number }[]>(
      `[...document.querySelectorAll('img')].map((img) => ({ src: img.getAttribute('src'), width: img.naturalWidth }))`,
    );
    expect(images).toEqual([{ src: `/workflows/${open.workflowUuid}/badge.svg`, width: expect.any(Number) }]);
    expect(images[0].width).toBeGreaterThan(50);
    expect(failed).toEqual([]);
    await page.close();
  });

  it('lets another site embed badges (<img>) and read badges and public workflows (fetch()), never a private workflow', async () => {
    const badge = (w: SeededVersion, query = '') =>
      `${service}/workflows/${w.workflowUuid}/badge.svg${query}`;
    const html = `<!doctype html><html lang="en"><head><title>Lab wiki</title></head><body>
<h1>Our pipelines</h1>
<p><img id="public" alt="public badge" src="${badge(open)}"></p>
<p><img id="token" alt="private badge, by its token" src="${badge(hidden, `?token=${badgeToken}`)}"></p>
<p><img id="hidden" alt="private badge, no token" src="${badge(hidden)}"></p>
<script>
const read = async (url, init) => {
  try {
    const response = await fetch(url, init);
    return { status: response.status, body: await response.text() };
  } catch (error) {
    return { error: String(error) };
  }
};
window.reads = (async () => ({
  badgeJson: await read(${JSON.stringify(`${service}/workflows/${open.workflowUuid}/badge.json`)}),
  tokenBadgeJson: await read(${JSON.stringify(`${service}/workflows/${hidden.workflowUuid}/badge.json?token=${badgeToken}`)}),
  workflow: await read(${JSON.stringify(`${service}/workflows/${open.workflowUuid}`)}),
  status: await read(${JSON.stringify(`${service}/workflows/${open.workflowUuid}/status`)}),
  privateWorkflow: await read(${JSON.stringify(`${service}/workflows/${hidden.workflowUuid}`)}),
  withCredentials: await read(${JSON.stringify(`${service}/workflows/${open.workflowUuid}`)}, { credentials: 'include' }),
}))();
</script></body></html>`;
    embedder.route('/pipelines.html', {
      kind: 'bytes',
      body: html,
      headers: { 'content-type': 'text/html; charset=utf-8' },
    });
    const { port } = new URL(embedder.origin);
    const page = await browser.newPage();
    await page.setViewportSize({ width: 800, height: 400 });
    expect((await page.goto(`http://${EMBEDDER_HOST}:${port}/pipelines.html`))?.status()).toBe(200);
    await page.waitForLoadState('load');
    await page.screenshot({ path: `${SCREENSHOTS}/embedded-badges.png` });
    const widths = await page.evaluate<Record<string, number>>(
      `Object.fromEntries([...document.querySelectorAll('img')].map((img) => [img.id, img.naturalWidth]))`,
    );
    expect(widths.public).toBeGreaterThan(50);
    expect(widths.token).toBeGreaterThan(50);
    expect(widths.hidden).toBe(0);

    const reads = await page.evaluate<Record<string, Read>>('window.reads');
    expect(reads.badgeJson).toEqual({ status: 200, body: expect.stringContaining('"message":"passing"') });
    expect(reads.tokenBadgeJson).toEqual({
      status: 200,
      body: expect.stringContaining('"message":"passing"'),
    });
    expect(reads.workflow).toEqual({ status: 200, body: expect.stringContaining(open.workflowUuid) });
    expect(reads.status).toEqual({ status: 200, body: expect.stringContaining('aggregate_test_status') });
    // Closed: the browser hands the other site's script nothing, not even the status.
    expect(reads.privateWorkflow).toEqual({ error: expect.stringContaining('Failed to fetch') });
    expect(reads.withCredentials).toEqual({ error: expect.stringContaining('Failed to fetch') });
    await page.close();
  });
});
