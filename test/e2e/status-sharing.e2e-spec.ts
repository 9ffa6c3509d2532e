import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { CheckStateEntity } from '../../src/test-monitoring/entities/check-state.entity.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { seedBuilds, seedVersion, type SeededVersion } from '../support/monitoring-seed.js';

const DAY = 86_400_000;
const dateOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

const GITHUB = {
  type: 'github' as const,
  url: 'http://127.0.0.1:9/api',
  resource: 'repos/o/r/actions/workflows/ci.yml',
};

/** Badges (API.md 5.2), history (5.3): what public and private workflows show, to whom, and their caching. */
describe(`sharing the test status (${testDatabase()})`, () => {
  let t: TestApp;
  let dataSource: DataSource;
  let alice: string;
  let aliceId: number;
  let bob: string;
  let admin: string;
  /** One seeded workflow per aggregate state, public unless said otherwise. */
  const seeded = {} as Record<'passing' | 'some' | 'failing' | 'none' | 'private' | 'stale', SeededVersion>;

  const seed = async (statuses: string[][], options: { public?: boolean; name?: string } = {}) => {
    const version = await seedVersion(dataSource, {
      ownerId: aliceId,
      public: options.public ?? true,
      name: options.name ?? 'secret-project-name',
      suites: [{ instances: statuses.map(() => GITHUB) }],
    });
    for (const [index, builds] of statuses.entries()) {
      await seedBuilds(
        dataSource,
        version.instances[index].id,
        builds.map((status, n) => ({
          buildId: `${1000 + n}_1`,
          status,
          startedAt: new Date(Date.now() - (builds.length - n) * 3_600_000),
        })),
      );
    }
    return version;
  };

  beforeAll(async () => {
    t = await createTestApp();
    dataSource = t.app.get(DataSource);
    alice = await t.userToken(['user']);
    aliceId = (await t.http.get('/users/current').set('Authorization', `Bearer ${alice}`)).body.id;
    bob = await t.userToken(['user']);
    admin = await t.login();
    seeded.passing = await seed([['passed'], ['failed', 'passed']]);
    seeded.some = await seed([['passed'], ['failed']]);
    seeded.failing = await seed([['error']]);
    seeded.none = await seed([[]]);
    seeded.private = await seed([['passed']], { public: false });
    seeded.stale = await seed([['passed']]);
    await dataSource
      .getRepository(CheckStateEntity)
      .update({ instanceId: seeded.stale.instances[0].id }, { lastCheckFailed: true });
  });

  afterAll(async () => {
    await t.close();
  });

  const badge = (w: SeededVersion, query = '') =>
    t.http.get(`/workflows/${w.workflowUuid}/badge.svg${query}`);
  const badgeJson = (w: SeededVersion, query = '') =>
    t.http.get(`/workflows/${w.workflowUuid}/badge.json${query}`);

  describe('badges (5.2)', () => {
    it.each([
      ['passing', 'passing', '#4c1', 'brightgreen'],
      ['some', 'some passing', '#dfb317', 'yellow'],
      ['failing', 'failing', '#e05d44', 'red'],
      ['none', 'no builds yet for 1.0', '#9f9f9f', 'lightgrey'],
      ['stale', 'passing (stale)', '#4c1', 'brightgreen'],
    ] as const)('shows %s as "%s" in %s (shields: %s), to anybody', async (key, message, fill, color) => {
      const svg = await badge(seeded[key]).buffer(true);
      expect(svg.status).toBe(200);
      expect(svg.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
      const text = svg.body.toString('utf8');
      expect(text).toContain(`<title>tests: ${message}</title>`);
      expect(text).toContain(`fill="${fill}"`);
      expect(text).not.toContain('secret-project-name');
      const json = await badgeJson(seeded[key]);
      expect(json.status).toBe(200);
      expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(json.body).toEqual({ schemaVersion: 1, label: 'tests', message, color });
    });

    it('says "no builds yet for 1.1" while the latest version has none of its own (API.md 7.2), and the page shows 1.0 beside it', async () => {
      const first = await seed([['failed', 'passed']], { name: 'Two versions' });
      const second = await seedVersion(dataSource, {
        ownerId: aliceId,
        public: true,
        workflowUuid: first.workflowUuid,
        version: '1.1',
        name: 'Two versions',
        suites: [{ instances: [GITHUB] }],
      });
      const svg = (await badge(second).buffer(true)).body.toString('utf8');
      expect(svg).toContain('<title>tests: no builds yet for 1.1</title>');
      expect((await badgeJson(second)).body).toEqual({
        schemaVersion: 1,
        label: 'tests',
        message: 'no builds yet for 1.1',
        color: 'lightgrey',
      });
      expect((await badgeJson(second, '?version=1.0')).body).toMatchObject({ message: 'passing' });
      const html = (await t.http.get(`/status/${first.workflowUuid}`)).text;
      expect(html).toContain(
        '<p class="summary"><span class="state not_available">no builds yet for 1.1</span>',
      );
      expect(html).toContain(
        `<p class="previous">Until it has builds, the version before it: <a href="/status/${first.workflowUuid}?version=1.0"><bdi>1.0</bdi></a> <span class="state all_passing">passing</span></p>`,
      );
      expect((await t.http.get(`/status/${first.workflowUuid}?version=1.0`)).text).not.toContain(
        'class="previous"',
      );
      expect((await t.http.get('/status')).text).toContain(
        '<span class="state not_available">no builds yet for 1.1</span>',
      );
    });

    it('takes a label, escaped in the SVG', async () => {
      const svg = await badge(seeded.passing, `?label=${encodeURIComponent('<CI & "more">')}`).buffer(true);
      expect(svg.status).toBe(200);
      expect(svg.body.toString('utf8')).toContain(
        '<title>&#60;CI &#38; &#34;more&#34;&#62;: passing</title>',
      );
      const json = await badgeJson(seeded.passing, '?label=galaxy%20tests&version=1.0');
      expect(json.body).toMatchObject({ label: 'galaxy tests', message: 'passing' });
    });

    it('answers 304 to If-None-Match with its ETag, and lets shared caches keep public badges for 60 s', async () => {
      for (const get of [badge, badgeJson]) {
        const first = await get(seeded.passing);
        expect(first.headers['cache-control']).toBe('public, max-age=60');
        const etag = first.headers.etag;
        expect(etag).toMatch(/^"[\w-]{27}"$/);
        const again = await get(seeded.passing).set('If-None-Match', etag);
        expect(again.status).toBe(304);
        expect(again.headers.etag).toBe(etag);
        expect(again.headers['cache-control']).toBe('public, max-age=60');
        expect(again.text ?? '').toBe('');
        const other = await get(seeded.passing, '?label=other').set('If-None-Match', etag);
        expect(other.status).toBe(200);
      }
    });

    it("hides a private workflow's badge (404) from anybody without access, keeps it private in caches for those with", async () => {
      for (const token of [undefined, bob]) {
        const request = badge(seeded.private);
        const response = await (token ? request.set('Authorization', `Bearer ${token}`) : request);
        expect(response.status).toBe(404);
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(JSON.stringify(response.body)).not.toContain('secret-project-name');
      }
      for (const token of [alice, admin]) {
        const response = await badgeJson(seeded.private).set('Authorization', `Bearer ${token}`);
        expect(response.status).toBe(200);
        expect(response.headers['cache-control']).toBe('private, max-age=60');
      }
    });

    it('opens a private badge with its badge token, the same until revoked, and nothing else', async () => {
      const w = seeded.private;
      const path = `/workflows/${w.workflowUuid}/badge-token`;
      expect((await t.http.get(path)).status).toBe(401);
      expect((await t.http.get(path).set('Authorization', `Bearer ${bob}`)).status).toBe(404);
      const issued = await t.http.get(path).set('Authorization', `Bearer ${alice}`);
      expect(issued.status).toBe(200);
      expect(issued.headers['cache-control']).toBe('no-store');
      const token = issued.body.token as string;
      expect(token).toMatch(/^[\w-]{43}$/);
      expect(issued.body.svg).toBe(`${t.baseUrl}/workflows/${w.workflowUuid}/badge.svg?token=${token}`);
      expect(issued.body.json).toBe(`${t.baseUrl}/workflows/${w.workflowUuid}/badge.json?token=${token}`);
      expect((await t.http.get(path).set('Authorization', `Bearer ${admin}`)).body.token).toBe(token);
      // Stored hashed, not in clear.
      const [row] = await dataSource.query(
        'SELECT badge_token_sha256 AS sha, badge_token_sealed AS sealed FROM workflows WHERE uuid = ?',
        [w.workflowUuid],
      );
      expect(row.sha).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(row)).not.toContain(token);

      const opened = await badgeJson(w, `?token=${token}`);
      expect(opened.status).toBe(200);
      expect(opened.body.message).toBe('passing');
      expect(opened.headers['cache-control']).toBe('public, max-age=60');
      expect((await badge(w, `?token=${token}`)).status).toBe(200);
      // A badge token is not a login: every other read stays 404.
      for (const read of [
        `/workflows/${w.workflowUuid}?token=${token}`,
        `/workflows/${w.workflowUuid}/status?token=${token}`,
      ]) {
        expect({ read, status: (await t.http.get(read)).status }).toEqual({ read, status: 404 });
      }
      expect(
        (await t.http.get(`/workflows/${w.workflowUuid}`).set('Authorization', `Bearer ${token}`)).status,
      ).toBe(401);
      // Nor does it open another workflow's badge.
      expect((await badge(seeded.passing, `?token=${token}`)).status).toBe(200);
      const otherPrivate = await seed([['passed']], { public: false });
      expect((await badge(otherPrivate, `?token=${token}`)).status).toBe(404);

      expect((await t.http.delete(path).set('Authorization', `Bearer ${bob}`)).status).toBe(404);
      expect((await t.http.delete(path).set('Authorization', `Bearer ${alice}`)).status).toBe(204);
      expect((await badge(w, `?token=${token}`)).status).toBe(404);
      const renewed = await t.http.get(path).set('Authorization', `Bearer ${alice}`);
      expect(renewed.body.token).not.toBe(token);
      expect((await badge(w, `?token=${renewed.body.token}`)).status).toBe(200);
      expect((await t.http.delete(path).set('Authorization', `Bearer ${alice}`)).status).toBe(204);
      expect((await t.http.delete(path).set('Authorization', `Bearer ${alice}`)).status).toBe(204);
    });

    it('lets any origin embed a badge anybody may see (<img>, fetch()), never one a credential opened', async () => {
      const issued = await t.http
        .get(`/workflows/${seeded.private.workflowUuid}/badge-token`)
        .set('Authorization', `Bearer ${alice}`);
      const opened = [
        badge(seeded.passing),
        badgeJson(seeded.passing),
        badge(seeded.passing).set('Authorization', `Bearer ${bob}`),
        badgeJson(seeded.private, `?token=${issued.body.token as string}`),
      ];
      for (const response of await Promise.all(opened)) {
        expect(response.status).toBe(200);
        expect(response.headers['cross-origin-resource-policy']).toBe('cross-origin');
        expect(response.headers['access-control-allow-origin']).toBe('*');
        expect(response.headers['access-control-allow-credentials']).toBeUndefined();
      }
      // The owner's own view of a private badge, and a badge nobody may see: closed to other origins.
      const closed = [
        badgeJson(seeded.private).set('Authorization', `Bearer ${alice}`),
        badge(seeded.private),
        badge(seeded.private, '?token=not-the-token'),
      ];
      for (const response of await Promise.all(closed)) {
        expect(response.headers['cross-origin-resource-policy']).toBe('same-origin');
        expect(response.headers['access-control-allow-origin']).toBeUndefined();
      }
    });

    it('forbids another user (403) the badge token of a public workflow they can see', async () => {
      const path = `/workflows/${seeded.passing.workflowUuid}/badge-token`;
      expect((await t.http.get(path).set('Authorization', `Bearer ${bob}`)).status).toBe(403);
      expect((await t.http.delete(path).set('Authorization', `Bearer ${bob}`)).status).toBe(403);
    });

    it('answers 400 to a bad version, label or token, 404 to an unknown uuid or version, never a 500', async () => {
      const w = seeded.passing;
      for (const query of [
        '?label=',
        `?label=${'x'.repeat(33)}`,
        '?label=a%00b',
        '?label=a&label=b',
        `?version=${'9'.repeat(65)}`,
        '?version=a%2Fb',
        '?version=',
        '?token=',
        `?token=${'t'.repeat(129)}`,
      ]) {
        for (const get of [badge, badgeJson]) {
          const response = await get(w, query);
          expect({ query, status: response.status }).toEqual({ query, status: 400 });
          expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
        }
      }
      expect((await badge(w, '?version=9.9')).status).toBe(404);
      expect((await badge(w, '?token=not-the-token')).status).toBe(200);
      expect((await t.http.get(`/workflows/${randomUUID()}/badge.svg`)).status).toBe(404);
      expect((await t.http.get(`/workflows/${randomUUID()}/badge.json?token=${'a'.repeat(43)}`)).status).toBe(
        404,
      );
      expect((await t.http.get('/workflows/nope/badge.svg')).status).toBe(400);
    });
  });

  describe('history and stats (5.3)', () => {
    let history: SeededVersion;
    const now = Date.now();

    beforeAll(async () => {
      history = await seedVersion(dataSource, {
        ownerId: aliceId,
        public: true,
        suites: [{ instances: [GITHUB, GITHUB] }],
      });
      const at = (daysAgo: number, hours = 0) => new Date(now - daysAgo * DAY - hours * 3_600_000);
      await seedBuilds(dataSource, history.instances[0].id, [
        // Run 501: failed, then passed on its second attempt: flaky.
        { buildId: '501_1', status: 'failed', startedAt: at(2, 2), durationSeconds: 100 },
        { buildId: '501_2', status: 'passed', startedAt: at(2, 1), durationSeconds: 300 },
        // Run 502: passed, then failed on a re-run: not flaky.
        { buildId: '502_1', status: 'passed', startedAt: at(1, 2), durationSeconds: 200 },
        { buildId: '502_2', status: 'error', startedAt: at(1, 1), durationSeconds: 400 },
        // Unfinished builds count nowhere.
        { buildId: '503_1', status: 'running', startedAt: at(0), durationSeconds: 0 },
        // Outside a 30-day window, inside 90 days.
        { buildId: '400_1', status: 'failed', startedAt: at(40), durationSeconds: 1000 },
        { buildId: '400_2', status: 'passed', startedAt: at(40), durationSeconds: 1000 },
      ]);
      await seedBuilds(dataSource, history.instances[1].id, [
        { buildId: '77', status: 'passed', startedAt: at(2), durationSeconds: 50 },
        { buildId: '78', status: 'aborted', startedAt: at(0), durationSeconds: 50 },
      ]);
    });

    it('counts builds per UTC day over the latest version, one entry per day, oldest first', async () => {
      const response = await t.http.get(`/workflows/${history.workflowUuid}/history?days=5`);
      expect(response.status).toBe(200);
      // Each finished build on the UTC day it started: [when, passed, failed].
      const counted = new Map<string, { passed: number; failed: number }>();
      for (const [ms, passed, failed] of [
        [now - 2 * DAY - 2 * 3_600_000, 0, 1],
        [now - 2 * DAY - 3_600_000, 1, 0],
        [now - DAY - 2 * 3_600_000, 1, 0],
        [now - DAY - 3_600_000, 0, 1],
        [now - 2 * DAY, 1, 0],
        [now, 0, 1],
      ]) {
        const day = counted.get(dateOf(ms)) ?? { passed: 0, failed: 0 };
        counted.set(dateOf(ms), { passed: day.passed + passed, failed: day.failed + failed });
      }
      expect(response.body.days).toEqual(
        [4, 3, 2, 1, 0].map((daysAgo) => {
          const date = dateOf(now - daysAgo * DAY);
          return { date, ...(counted.get(date) ?? { passed: 0, failed: 0 }) };
        }),
      );
      const month = await t.http.get(`/workflows/${history.workflowUuid}/history`);
      expect(month.body.days).toHaveLength(30);
      expect(month.body.days.at(-1).date).toBe(dateOf(now));
      const total = (month.body.days as { passed: number; failed: number }[]).reduce(
        (sum, day) => sum + day.passed + day.failed,
        0,
      );
      expect(total).toBe(6);
      const year = await t.http.get(`/workflows/${history.workflowUuid}/history?days=365`);
      expect(year.body.days).toHaveLength(365);
    });

    it('gives pass rate, median duration, last pass and flaky re-runs of an instance', async () => {
      const instance = history.instances[0].uuid;
      const month = await t.http.get(`/instances/${instance}/stats?days=30`);
      expect(month.status).toBe(200);
      expect(month.body).toMatchObject({
        days: 30,
        builds: 4,
        passed: 2,
        failed: 2,
        pass_rate: 0.5,
        median_duration: 250,
        flaky: 1,
      });
      // Run 502's first attempt; MariaDB keeps whole seconds.
      const lastPassed = new Date(now - DAY - 2 * 3_600_000).getTime();
      expect(Math.abs(Date.parse(month.body.last_passed) - lastPassed)).toBeLessThan(1000);
    });

    it('widens the window with days: the run of 40 days ago is flaky too', async () => {
      const quarter = await t.http.get(`/instances/${history.instances[0].uuid}/stats`);
      expect(quarter.body).toMatchObject({
        days: 90,
        builds: 6,
        passed: 3,
        failed: 3,
        pass_rate: 0.5,
        // Durations 100, 200, 300, 400, 1000, 1000: the mean of the middle two.
        median_duration: 350,
        flaky: 2,
      });
      const other = await t.http.get(`/instances/${history.instances[1].uuid}/stats?days=1`);
      expect(other.body).toMatchObject({
        builds: 1,
        passed: 0,
        failed: 1,
        pass_rate: 0,
        median_duration: 50,
        last_passed: null,
        flaky: 0,
      });
    });

    it('answers an instance without builds with nulls, not zeros that mean something', async () => {
      const empty = await t.http.get(`/instances/${seeded.none.instances[0].uuid}/stats`);
      expect(empty.body).toEqual({
        days: 90,
        builds: 0,
        passed: 0,
        failed: 0,
        pass_rate: null,
        median_duration: null,
        last_passed: null,
        flaky: 0,
      });
    });

    it('answers 400 to a bad days and 404 to what the caller may not see', async () => {
      for (const days of ['0', '366', '-1', '1.5', 'x', '']) {
        for (const path of [
          `/workflows/${history.workflowUuid}/history?days=${days}`,
          `/instances/${history.instances[0].uuid}/stats?days=${days}`,
        ]) {
          const response = await t.http.get(path);
          expect({ path, status: response.status }).toEqual({ path, status: 400 });
          expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
        }
      }
      for (const path of [
        `/workflows/${seeded.private.workflowUuid}/history`,
        `/instances/${seeded.private.instances[0].uuid}/stats`,
        `/workflows/${randomUUID()}/history`,
        `/instances/${randomUUID()}/stats`,
      ]) {
        expect({
          path,
          status: (await t.http.get(path).set('Authorization', `Bearer ${bob}`)).status,
        }).toEqual({
          path,
          status: 404,
        });
      }
      expect(
        (
          await t.http
            .get(`/workflows/${seeded.private.workflowUuid}/history`)
            .set('Authorization', `Bearer ${alice}`)
        ).status,
      ).toBe(200);
    });
  });

  describe('status pages (5.4)', () => {
    let named: SeededVersion;
    let hostile: SeededVersion;

    beforeAll(async () => {
      named = await seed([['passed'], ['failed']], { name: 'Visible pipeline' });
      hostile = await seed([['passed']], { name: '<script>alert("x")</script> & co' });
    });

    const page = (path: string, cookie?: string) => {
      const request = t.http.get(path);
      return cookie ? request.set('Cookie', `session=${cookie}`) : request;
    };

    const expectSelfContained = (html: string) => {
      expect(html).toMatch(/^<!doctype html>/);
      expect(html).not.toMatch(/<script/i);
      expect(html).not.toMatch(/<link[^>]+stylesheet/i);
      // Every src and href is this service's own (absolute links out go to CI pages only, never assets).
      for (const [, url] of html.matchAll(/\ssrc="([^"]*)"/g)) {
        expect(url.startsWith('/')).toBe(true);
      }
    };

    it('lists the public workflows to anybody, with status, badge and last 30 days, without scripts or outside assets', async () => {
      const response = await page('/status');
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      const html = response.text;
      expectSelfContained(html);
      expect(html).toContain(`href="/status/${named.workflowUuid}"><bdi>Visible pipeline</bdi></a>`);
      expect(html).toContain(`src="/workflows/${named.workflowUuid}/badge.svg"`);
      expect(html).toContain('Public workflows (not signed in)');
      expect(html).not.toContain(`/status/${seeded.private.workflowUuid}`);
      // The hostile name is text, not markup.
      expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co');
      expect(html).not.toContain('<script>alert');
      const own = (await page(`/status/${hostile.workflowUuid}`)).text;
      expect(own).toContain(
        '<h1><bdi>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co</bdi> <span',
      );
      expect(own).not.toContain('<script>alert');
    });

    it('lists private workflows to their owner through the session cookie', async () => {
      const html = (await page('/status', alice)).text;
      expect(html).toContain(`/status/${seeded.private.workflowUuid}`);
      expect(html).toMatch(/Signed in as <strong><bdi>user\d+_[0-9a-f]+<\/bdi><\/strong>/);
      expect(html).toContain('<span class="tag">private</span>');
      expect((await page('/status', bob)).text).not.toContain(`/status/${seeded.private.workflowUuid}`);
    });

    it('shows one workflow: status, chart, instances with links to their CI resource and runs, versions', async () => {
      const response = await page(`/status/${named.workflowUuid}`);
      expect(response.status).toBe(200);
      const html = response.text;
      expectSelfContained(html);
      expect(html).toContain('<h1><bdi>Visible pipeline</bdi> <span class="tag">public</span></h1>');
      expect(html).toContain('<span class="state some_passing">some passing</span>');
      expect(html).toMatch(
        /<svg[^>]+class="chart"[^>]+role="img" aria-label="Last 30 days: 1 passed, 1 failed builds; failures on 1 day"/,
      );
      // The instance's GitHub workflow page (the fake API base http://127.0.0.1:9/api is a GitHub Enterprise one).
      expect(html).toContain('href="http://127.0.0.1:9/o/r/actions/workflows/ci.yml"');
      expect(html).toContain('href="https://ci.example.org/builds/1000_1">Build 1000_1</a>');
      expect(html).toContain('<strong><bdi>1.0</bdi></strong> (shown)');
    });

    it('answers a private or unknown workflow with the same 404 page, and the owner with the page', async () => {
      for (const [path, cookie] of [
        [`/status/${seeded.private.workflowUuid}`, undefined],
        [`/status/${seeded.private.workflowUuid}`, bob],
        [`/status/${randomUUID()}`, alice],
        [`/status/${named.workflowUuid}?version=9.9`, undefined],
      ] as const) {
        const response = await page(path, cookie);
        expect({ path, status: response.status }).toEqual({ path, status: 404 });
        expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(response.text).toContain('<h1>404 Not Found</h1>');
        expect(response.text).not.toContain('secret-project-name');
      }
      const own = await page(`/status/${seeded.private.workflowUuid}`, alice);
      expect(own.status).toBe(200);
      expect(own.text).toContain('<span class="tag">private</span>');
    });

    it('answers bad input with a 400 page and a bad session with a 401 page, never a 500', async () => {
      for (const path of [
        '/status?page=0',
        '/status?page=x',
        '/status/nope',
        `/status/${named.workflowUuid}?version=a%2Fb`,
      ]) {
        const response = await page(path);
        expect({ path, status: response.status }).toEqual({ path, status: 400 });
        expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(response.text).toContain('<h1>400 Bad Request</h1>');
      }
      const expired = await page('/status', 'not-a-token');
      expect(expired.status).toBe(401);
      expect(expired.text).toContain('Sign in again');
      expect(expired.text).toContain('<form method="post" action="/status/sign-out">');
      expect(expired.text).toContain('href="/status/sign-in?next=%2Fstatus"');
      const far = await page('/status?page=999');
      expect(far.status).toBe(200);
      expect(far.text).toContain('No workflows to show on this page.');
    });

    it('refreshes itself without script only when asked, within 10 s to 1 h', async () => {
      for (const path of ['/status', `/status/${named.workflowUuid}`, '/status/wall']) {
        expect((await page(path)).text).not.toContain('http-equiv="refresh"');
        const asked = await page(`${path}${path.includes('?') ? '&' : '?'}refresh=60`);
        expect({ path, status: asked.status }).toEqual({ path, status: 200 });
        expect(asked.text).toContain('<meta http-equiv="refresh" content="60">');
        expectSelfContained(asked.text);
        for (const refresh of ['5', '3601', 'soon', '-1']) {
          const refused = await page(`${path}?refresh=${refresh}`);
          expect({ path, refresh, status: refused.status }).toEqual({ path, refresh, status: 400 });
          expect(refused.text).toContain('refresh must be an integer from 10 to 3600');
        }
      }
    });

    it('shows a wall screen: every workflow the caller may see, failing first, full width', async () => {
      const response = await page('/status/wall?refresh=30');
      expect(response.status).toBe(200);
      const html = response.text;
      expectSelfContained(html);
      expect(html).toContain('<body class="wall">');
      const tiles = [...html.matchAll(/<li class="tile (\w+)">/g)].map((match) => match[1]);
      const rank = { all_failing: 0, some_passing: 1, not_available: 2, all_passing: 3 } as Record<
        string,
        number
      >;
      expect(tiles.length).toBeGreaterThanOrEqual(6);
      expect(tiles.map((tile) => rank[tile])).toEqual([...tiles.map((tile) => rank[tile])].sort());
      expect(tiles[0]).toBe('all_failing');
      expect(html).not.toContain(`/status/${seeded.private.workflowUuid}`);
      expect((await page('/status/wall', alice)).text).toContain(`/status/${seeded.private.workflowUuid}`);
    });

    it('answers /favicon.ico with an icon', async () => {
      const response = await t.http.get('/favicon.ico').buffer(true);
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('image/x-icon');
      expect(response.headers['cache-control']).toBe('public, max-age=86400');
      const icon = response.body as Buffer;
      expect([...icon.subarray(0, 6)]).toEqual([0, 0, 1, 0, 1, 0]);
      expect(icon.length).toBe(6 + 16 + 40 + 16 * 16 * 4 + 16 * 4);
    });

    it('isolates names that hold bidirectional controls: <bdi> in the page, dropped from its title', async () => {
      const name = 'Report \u202Eevil\u202C pipeline';
      const reversed = await seed([['passed']], { name });
      const own = (await page(`/status/${reversed.workflowUuid}`)).text;
      expect(own).toContain('<title>Report evil pipeline · Workflow test status</title>');
      expect(own).toContain(`<h1><bdi>${name}</bdi> <span class="tag">public</span></h1>`);
      const list = (await page('/status')).text;
      expect(list).toContain(`<a href="/status/${reversed.workflowUuid}"><bdi>${name}</bdi></a>`);
    });

    it('pages the list, newest first, 50 to a page', async () => {
      for (let n = 0; n < 50; n++) {
        await seedVersion(dataSource, { ownerId: aliceId, public: true, name: `bulk ${n}`, suites: [] });
      }
      const first = (await page('/status')).text;
      expect(first).toContain('href="/status?page=2" rel="next"');
      expect(first).toContain('bulk 49');
      expect(first).not.toContain('Visible pipeline');
      const second = (await page('/status?page=2')).text;
      expect(second).toContain('Visible pipeline');
      expect(second).toContain('href="/status" rel="prev"');
    });

    it('is what GET / redirects to', async () => {
      const response = await t.http.get('/');
      expect(response.status).toBe(302);
      expect(response.headers.location).toBe('/status');
    });
  });
});
