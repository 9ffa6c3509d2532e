import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateZip } from '../support/registry.js';

const FORWARDED = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'workflows.example.org' };

async function registered(
  t: TestApp,
  links: LinkServer,
): Promise<{ uuid: string; auth: Record<string, string> }> {
  const auth = { Authorization: `Bearer ${await t.login()}` };
  const link = links.route(`/proxy-${Date.now()}.zip`, { kind: 'bytes', body: crateZip({}) });
  const created = await t.http
    .post('/users/current/workflows')
    .set(auth)
    .send({ roc_link: link, version: '1' });
  expect(created.status).toBe(201);
  return { uuid: (created.body as { uuid: string }).uuid, auth };
}

describe(`links in replies behind a proxy (${testDatabase()})`, () => {
  let links: LinkServer;

  beforeAll(async () => {
    links = await LinkServer.start();
  });

  afterAll(async () => {
    await links.close();
  });

  it('use X-Forwarded-Proto and -Host when the proxy is trusted (TRUST_PROXY)', async () => {
    const t = await createTestApp({ TRUST_PROXY: 'loopback' });
    try {
      const { uuid, auth } = await registered(t, links);
      const reply = await t.http.get(`/workflows/${uuid}`).set(auth).set(FORWARDED);
      expect(reply.body.meta.base_url).toBe('https://workflows.example.org');
      expect(reply.body.version.ro_crate.links.download).toBe(
        `https://workflows.example.org/workflows/${uuid}/rocrate/1/download`,
      );
    } finally {
      await t.close();
    }
  });

  it('ignore X-Forwarded-* from anybody else', async () => {
    const t = await createTestApp();
    try {
      const { uuid, auth } = await registered(t, links);
      const reply = await t.http.get(`/workflows/${uuid}`).set(auth).set(FORWARDED);
      expect(reply.body.meta.base_url).toBe(t.baseUrl);
    } finally {
      await t.close();
    }
  });
});
