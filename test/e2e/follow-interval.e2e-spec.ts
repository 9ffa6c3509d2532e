import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { GithubFake } from '../fakes/github-fake.js';
import { createTestApp, startApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateMetadata } from '../support/registry.js';
import { until } from '../support/until.js';

/**
 * API.md 12, settled details: polling runs every REFRESH_INTERVAL_SECONDS as set now. A copy
 * stopped under a long interval leaves its next polls planned far ahead; restarted with a short
 * one, it polls at the new pace at once instead of waiting for them.
 */
describe(`polling after a restart with a shorter REFRESH_INTERVAL_SECONDS (${testDatabase()})`, () => {
  let github: GithubFake;
  let t: TestApp | undefined;
  let restarted: NestExpressApplication | undefined;

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
  });

  afterAll(async () => {
    await restarted?.close();
    await t?.close();
    await github?.stop();
  });

  /** A crate whose instance is on the fake, so that the refresh timer's checks stay on this machine. */
  const crateFiles = (name: string): Record<string, string> => ({
    'ro-crate-metadata.json': JSON.stringify(
      crateMetadata({
        name,
        instances: [
          { id: '#inst1', name: 'inst1', url: github.url, resource: 'repos/o/r/actions/workflows/ci.yml' },
        ],
      }),
    ),
    'workflow.ga': '{"a_galaxy_workflow": "true"}',
  });

  it('polls a followed repository at once, not at the time the longer interval planned', async () => {
    t = await createTestApp({
      GITHUB_API_URL: github.url,
      GITHUB_TOKEN: 'ghp_follow-interval-token',
      REFRESH_INTERVAL_SECONDS: '600',
    });
    const alice = { Authorization: `Bearer ${await t.userToken()}` };
    github.addRepository('octo', 'paced');
    github.push('octo', 'paced', { branch: 'main', files: crateFiles('paced on main') });
    const registered = await t.http
      .post('/users/current/workflows')
      .set(alice)
      .send({ roc_link: 'https://github.com/octo/paced', version: 'first' });
    expect(registered.status).toBe(201);
    const uuid = (registered.body as { uuid: string }).uuid;
    expect(
      (
        await t.http
          .put(`/workflows/${uuid}`)
          .set(alice)
          .send({ follow: { tags: ['v*'] } })
      ).status,
    ).toBe(200);
    const lastPoll = async (http: TestApp['http']) =>
      ((await http.get(`/workflows/${uuid}`).set(alice)).body as { follow: { last_poll: unknown } }).follow
        .last_poll;
    // Following began: its first poll notes the refs there are, and plans the next in 600 s.
    await until('the first poll', async () => (await lastPoll(t!.http)) !== null);
    await t.app.close();

    // A tag whose webhook never came: only a poll finds it.
    github.push('octo', 'paced', { tag: 'v1.0', files: crateFiles('paced 1.0') });
    restarted = await startApp({ ...t.env, REFRESH_INTERVAL_SECONDS: '2' });
    const http = request(await restarted.getUrl());
    await until('v1.0 registered by a poll of the restarted copy', async () => {
      const versions = (await http.get(`/workflows/${uuid}/versions`).set(alice)).body as {
        versions: { version: string }[];
      };
      return versions.versions.some((version) => version.version === 'v1.0');
    });
  });
});
