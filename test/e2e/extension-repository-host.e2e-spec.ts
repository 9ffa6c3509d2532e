import { GITEA_SITES, GiteaHostModule } from '../extensions/gitea-host.js';
import { GiteaFake } from '../fakes/gitea-fake.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { crateMetadata } from '../support/registry.js';

// docs/extending.md, "A new repository host": a host class and its registration, in a test module
// beside AppModule; no file of src/ knows Gitea.
describe(`extension: a repository host registered by a test module (${testDatabase()})`, () => {
  let gitea: GiteaFake;
  let t: TestApp;
  let auth: { Authorization: string };

  beforeAll(async () => {
    gitea = new GiteaFake();
    await gitea.start();
    GITEA_SITES.add(gitea.url);
    t = await createTestApp({}, [GiteaHostModule]);
    auth = { Authorization: `Bearer ${await t.userToken()}` };
  });

  afterAll(async () => {
    await t?.close();
    GITEA_SITES.clear();
    await gitea?.stop();
  });

  const files = (name: string) => ({
    'ro-crate-metadata.json': JSON.stringify(crateMetadata({ name }), null, 2),
  });

  it("registers a crate from a repository link of that host, at its default branch or the link's tag", async () => {
    const first = gitea.push('octo', 'flows', { branch: 'main', files: files('from gitea') });
    const created = await t.http
      .post('/users/current/workflows')
      .set(auth)
      .send({ roc_link: `${gitea.url}/octo/flows`, version: '1.0' });
    expect(created.status).toBe(201);
    const { uuid } = created.body as { uuid: string };
    const read = await t.http.get(`/workflows/${uuid}`).set(auth);
    expect(read.body).toMatchObject({
      name: 'from gitea',
      version: { version: '1.0', ro_crate: { source: { ref: 'main', commit: first } } },
    });

    const tagged = gitea.push('octo', 'tagged', {
      branch: 'main',
      tag: 'v2',
      files: files('tagged on gitea'),
    });
    gitea.push('octo', 'tagged', { branch: 'main', files: files('tagged on gitea') });
    const second = await t.http
      .post('/users/current/workflows')
      .set(auth)
      .send({ roc_link: `${gitea.url}/octo/tagged/src/tag/v2`, version: '2.0' });
    expect(second.status).toBe(201);
    const version = await t.http.get(`/workflows/${(second.body as { uuid: string }).uuid}`).set(auth);
    expect(version.body).toMatchObject({ version: { ro_crate: { source: { ref: 'v2', commit: tagged } } } });
  });

  it("answers a link on the host that names no repository, or one the host does not have, with the host's 400", async () => {
    const bad = await t.http
      .post('/users/current/workflows')
      .set(auth)
      .send({ roc_link: `${gitea.url}/octo/flows/src/commits/x`, version: '1' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('names no ref of a Gitea repository');
    const missing = await t.http
      .post('/users/current/workflows')
      .set(auth)
      .send({ roc_link: `${gitea.url}/octo/none`, version: '1' });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toContain('the Gitea repository octo/none does not exist');
  });
});
