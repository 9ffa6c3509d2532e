import { readFileSync } from 'node:fs';
import unzipper from 'unzipper';
import { DataSource } from 'typeorm';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { binaryBody, crateMetadata, snapshot } from '../support/registry.js';

/**
 * The kinds of `roc_link` of API.md 7.1: a GitHub repository (through a loopback fake of GitHub's
 * API and archive host), a detached crate (the metadata JSON itself), and the crate forms of
 * test/fixtures/crates/forms.
 */
const TOKEN = 'ghp_service-token-for-tests';
const MIB = 1024 * 1024;
const FORMS = 'test/fixtures/crates/forms';

describe('crates as people publish them (API.md 7.1)', () => {
  let t: TestApp;
  let github: GithubFake;
  let links: LinkServer;
  let alice: string;
  let database: DataSource;

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
    links = await LinkServer.start();
    t = await createTestApp({
      GITHUB_API_URL: `${github.url}/`,
      GITHUB_TOKEN: TOKEN,
      MAX_CRATE_BYTES: String(8 * MIB),
    });
    alice = await t.userToken(['user']);
    database = t.app.get(DataSource);
  });

  afterAll(async () => {
    await t.close();
    await links.close();
    await github.stop();
  });

  const register = (body: Record<string, unknown>) =>
    t.http.post('/users/current/workflows').set('Authorization', `Bearer ${alice}`).send(body);
  const get = (path: string) => t.http.get(path).set('Authorization', `Bearer ${alice}`);
  const download = (path: string) =>
    get(path)
      .buffer(true)
      .parse(binaryBody)
      .then((response) => response.body as Buffer);
  const metadataFile = (name: string) => JSON.stringify(crateMetadata({ name }), null, 2);

  const expectRefused = async (body: Record<string, unknown>, detail: string | RegExp): Promise<void> => {
    const before = await snapshot(t, database);
    const response = await register(body);
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400 });
    if (typeof detail === 'string') {
      expect(response.body.detail).toBe(detail);
    } else {
      expect(response.body.detail).toMatch(detail);
    }
    expect(await snapshot(t, database)).toEqual(before);
  };

  describe('a GitHub repository', () => {
    let tagged: string;
    let branch: string;
    let main: string;

    beforeAll(() => {
      github.addRepository('nf-core', 'demo');
      main = github.push('nf-core', 'demo', {
        branch: 'main',
        files: { 'ro-crate-metadata.json': metadataFile('demo on main') },
      });
      tagged = github.push('nf-core', 'demo', {
        tag: '1.0',
        files: { 'ro-crate-metadata.json': metadataFile('demo 1.0'), 'main.nf': '' },
      });
      branch = github.push('nf-core', 'demo', {
        branch: 'dev',
        files: { 'ro-crate-metadata.json': metadataFile('demo dev') },
      });
      github.push('nf-core', 'demo', {
        branch: 'feature/x',
        files: { 'ro-crate-metadata.json': metadataFile('demo feature') },
      });
    });

    it('registers the tag named like the version, and records ref and commit', async () => {
      const response = await register({ roc_link: 'https://github.com/nf-core/demo', version: '1.0' });
      expect(response.status).toBe(201);
      expect(response.body.name).toBe('demo 1.0');
      const read = await get(`/workflows/${response.body.uuid}`);
      expect(read.body.version.ro_crate).toMatchObject({
        links: { external: 'https://github.com/nf-core/demo' },
        source: { ref: '1.0', commit: tagged },
      });
      // The stored archive is GitHub's, with its top-level folder.
      const zip = await unzipper.Open.buffer(
        await download(`/workflows/${response.body.uuid}/rocrate/1.0/download`),
      );
      expect(zip.files.map((file) => file.path).sort()).toEqual([
        `nf-core-demo-${tagged.slice(0, 7)}/`,
        `nf-core-demo-${tagged.slice(0, 7)}/main.nf`,
        `nf-core-demo-${tagged.slice(0, 7)}/ro-crate-metadata.json`,
      ]);
    });

    it('sends GITHUB_TOKEN to the API only, never to the archive host', () => {
      const api = github.requests.filter((request) => request.path.startsWith('/repos/nf-core/demo'));
      expect(api.length).toBeGreaterThan(0);
      expect(api.every((request) => request.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
      expect(github.archiveRequests.length).toBeGreaterThan(0);
      expect(github.archiveRequests.every((request) => request.authorization === undefined)).toBe(true);
    });

    it('takes the branch named like the version when there is no such tag', async () => {
      const response = await register({ roc_link: 'https://github.com/nf-core/demo/', version: 'dev' });
      expect(response.status).toBe(201);
      expect((await get(`/workflows/${response.body.uuid}`)).body.version.ro_crate.source).toEqual({
        ref: 'dev',
        commit: branch,
      });
    });

    it('takes the default branch when no tag or branch is named like the version', async () => {
      const response = await register({ roc_link: 'https://github.com/nf-core/demo.git', version: '3.7' });
      expect(response.status).toBe(201);
      expect(response.body.name).toBe('demo on main');
      expect((await get(`/workflows/${response.body.uuid}`)).body.version.ro_crate.source).toEqual({
        ref: 'main',
        commit: main,
      });
    });

    it.each([
      ['a branch with a slash', 'feature/x', 'demo feature'],
      ['a tag', '1.0', 'demo 1.0'],
      ['a commit', '', 'demo dev'],
    ])('takes the ref of a /tree/{ref} link: %s', async (_what, ref, name) => {
      const wanted = ref === '' ? branch : ref;
      const response = await register({
        roc_link: `https://github.com/nf-core/demo/tree/${wanted}`,
        version: `t-${name}`,
      });
      expect(response.status).toBe(201);
      expect(response.body.name).toBe(name);
      const source = (await get(`/workflows/${response.body.uuid}`)).body.version.ro_crate.source;
      expect(source.ref).toBe(wanted);
      expect(source.commit).toMatch(/^[0-9a-f]{40}$/);
    });

    it('reads a private repository with GITHUB_TOKEN', async () => {
      github.addRepository('crs4', 'private-wf', { token: TOKEN, defaultBranch: 'master' });
      const sha = github.push('crs4', 'private-wf', {
        branch: 'master',
        files: { 'ro-crate-metadata.json': metadataFile('private') },
      });
      const response = await register({ roc_link: 'https://github.com/crs4/private-wf', version: '1' });
      expect(response.status).toBe(201);
      expect((await get(`/workflows/${response.body.uuid}`)).body.version.ro_crate.source).toEqual({
        ref: 'master',
        commit: sha,
      });
    });

    it('refuses a private repository that GITHUB_TOKEN cannot see, as GitHub hides it (404)', async () => {
      github.addRepository('someone', 'secret', { token: 'another-token' });
      github.push('someone', 'secret', {
        branch: 'main',
        files: { 'ro-crate-metadata.json': metadataFile('secret') },
      });
      await expectRefused(
        { roc_link: 'https://github.com/someone/secret', version: '1' },
        'the GitHub repository someone/secret does not exist, or is private and GITHUB_TOKEN does not give access to it',
      );
    });

    it('refuses a ref the repository does not have', async () => {
      await expectRefused(
        { roc_link: 'https://github.com/nf-core/demo/tree/no-such-branch', version: '9' },
        "the GitHub repository nf-core/demo has no branch, tag or commit 'no-such-branch'",
      );
    });

    it('refuses a repository without ro-crate-metadata.json at its root', async () => {
      github.addRepository('o', 'nested');
      const sha = github.push('o', 'nested', {
        branch: 'main',
        files: { 'crate/ro-crate-metadata.json': metadataFile('nested'), 'README.md': '#' },
      });
      await expectRefused(
        { roc_link: 'https://github.com/o/nested', version: '1' },
        `the GitHub repository o/nested has no ro-crate-metadata.json at its root (ref 'main', commit ${sha})`,
      );
    });

    it('refuses an archive over MAX_CRATE_BYTES (50 MiB against 8 MiB) without reading it all', async () => {
      github.addRepository('o', 'huge');
      github.push('o', 'huge', { branch: 'main', archiveBytes: 50 * MIB });
      await expectRefused(
        { roc_link: 'https://github.com/o/huge', version: '1' },
        'the link names the GitHub repository o/huge, whose archive is larger than 8 MiB',
      );
    });

    it.each([
      ["GitHub's home page", 'https://github.com/', "the GitHub link is GitHub's home page"],
      [
        'a user page',
        'https://github.com/nf-core',
        "the GitHub link is the page of the user or organisation 'nf-core'",
      ],
      [
        'an issue page',
        'https://github.com/nf-core/demo/issues/12',
        'the GitHub link is an issue or pull request page',
      ],
      [
        'a pull request',
        'https://github.com/nf-core/demo/pull/3',
        'the GitHub link is an issue or pull request page',
      ],
      [
        'a file page',
        'https://github.com/nf-core/demo/blob/main/ro-crate-metadata.json',
        'the GitHub link is a page of the repository (/blob), not the repository itself',
      ],
      [
        'a gist',
        'https://gist.github.com/octocat/6cad326836d38bd3a7ae',
        'the GitHub link is a gist, not a repository',
      ],
      [
        "GitHub's own pages",
        'https://github.com/orgs/nf-core/repositories',
        "the GitHub link is one of GitHub's own pages (/orgs)",
      ],
    ])('refuses %s without asking GitHub', async (_what, link, detail) => {
      const asked = github.totalRequests;
      await expectRefused(
        { roc_link: link, version: '1' },
        `${detail}: link a repository as https://github.com/{owner}/{repo}, optionally with /tree/{ref}`,
      );
      expect(github.totalRequests).toBe(asked);
    });

    it.each([
      ['..', 'https://github.com/nf-core/demo/tree/main/../../secrets', "it contains '..'"],
      ['.. inside a name', 'https://github.com/nf-core/demo/tree/v1..v2', "it contains '..'"],
      [
        'a revision operator',
        'https://github.com/nf-core/demo/tree/main~1',
        'it contains a character git does not allow in ref names',
      ],
      ['a .lock part', 'https://github.com/nf-core/demo/tree/x.lock', 'it is not a well-formed ref name'],
    ])('refuses a ref with %s without asking GitHub', async (_what, link, problem) => {
      const asked = github.totalRequests;
      await expectRefused(
        { roc_link: link, version: '1' },
        `the ref in the GitHub link is not a valid ref name: ${problem}`,
      );
      expect(github.totalRequests).toBe(asked);
    });
  });

  describe('a detached crate', () => {
    it.each([
      ['application/ld+json', '/forms/one', 'rocrate-1.3-wftest-0.2.json'],
      ['application/json', '/forms/two', 'rocrate-1.2-wftest-0.1-remote-context.json'],
      [
        'text/plain (a raw file host) at …/ro-crate-metadata.json',
        '/raw/main/ro-crate-metadata.json',
        'rocrate-1.1-wftest-0.1-inline-context.json',
      ],
      ['application/json; charset=utf-8', '/forms/expanded', 'expanded-iris-no-main-entity.json'],
    ])('registers %s, stored as given and downloaded as a zip holding only it', async (type, path, file) => {
      const bytes = readFileSync(`${FORMS}/${file}`);
      const link = links.route(path, {
        kind: 'bytes',
        body: bytes,
        headers: { 'content-type': type.startsWith('text/plain') ? 'text/plain; charset=utf-8' : type },
      });
      const response = await register({ roc_link: link, version: '1', name: `detached ${file}` });
      expect(response.status).toBe(201);
      const zip = await unzipper.Open.buffer(
        await download(`/workflows/${response.body.uuid}/rocrate/1/download`),
      );
      expect(zip.files.map((entry) => entry.path)).toEqual(['ro-crate-metadata.json']);
      expect(await zip.files[0].buffer()).toEqual(bytes);
      const read = await get(`/workflows/${response.body.uuid}?ro_crate=true`);
      expect(read.body.version.ro_crate.metadata).toEqual(JSON.parse(bytes.toString('utf8')));
      expect(read.body.version.ro_crate.source).toBeNull();
    });

    it('shows the instances of each form in their stored (API) form', async () => {
      const link = links.route('/forms/13', {
        kind: 'bytes',
        body: readFileSync(`${FORMS}/rocrate-1.3-wftest-0.2.json`),
        headers: { 'content-type': 'application/ld+json' },
      });
      const response = await register({ roc_link: link, version: '1.3' });
      expect(response.status).toBe(201);
      const suites = await get(`/workflows/${response.body.uuid}/suites`);
      expect(
        suites.body.items[0].instances.map(
          (instance: { resource: string; service: { type: string; url: string } }) => ({
            resource: instance.resource,
            type: instance.service.type,
            url: instance.service.url,
          }),
        ),
      ).toEqual([
        {
          resource: 'repos/crs4/sort-and-change-case/actions/workflows/test.yml',
          type: 'github',
          url: 'https://api.github.com',
        },
        { resource: 'repo/crs4%2Fsort-and-change-case', type: 'travis', url: 'https://api.travis-ci.com' },
      ]);
    });

    it('refuses a JSON document that is not JSON-LD', async () => {
      const link = links.route('/plain.json', {
        kind: 'bytes',
        body: JSON.stringify({ name: 'not a crate', version: '1' }),
        headers: { 'content-type': 'application/json' },
      });
      await expectRefused(
        { roc_link: link, version: '1' },
        'the link answered JSON that is not JSON-LD (no @context or @graph): a detached crate is its ro-crate-metadata.json',
      );
    });

    it('refuses a JSON answer that is not JSON at all', async () => {
      const link = links.route('/broken/ro-crate-metadata.json', {
        kind: 'bytes',
        body: '{"@context": ',
        headers: { 'content-type': 'application/json' },
      });
      await expectRefused(
        { roc_link: link, version: '1' },
        'the link answered a JSON document (a detached crate) that is not valid JSON',
      );
    });
  });
});
