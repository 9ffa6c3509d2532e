import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { AuthUser } from '../../src/auth/auth-user.js';
import { WorkflowsService } from '../../src/workflows/index.js';
import { WorkflowNameCheckModule } from '../extensions/workflow-name-check.js';
import { GithubFake } from '../fakes/github-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import {
  countRows,
  crateMetadata,
  crateZip,
  FIXTURE_CRATES,
  snapshot,
  TEST_TERMS,
} from '../support/registry.js';
import { buildZip } from '../support/zip-builder.js';

/** crs4/rocrate-validator's crates of the Workflow Testing RO-Crate profile (see the README there). */
const PROFILE_CRATES = 'test/fixtures/crates/workflow-testing-profile';

interface Issue {
  id: string;
  name: string;
  description: string;
  severity: 'error' | 'warning';
}

/** A folder of PROFILE_CRATES as a crate archive. */
function profileCrate(folder: string): Buffer {
  const path = join(PROFILE_CRATES, folder);
  return buildZip(readdirSync(path).map((file) => ({ name: file, data: readFileSync(join(path, file)) })));
}

const profileIssues = (issues: Issue[]): string[] =>
  issues.filter((issue) => issue.id.startsWith('wftest.')).map((issue) => issue.id);

describe('repository checks (API.md 12)', () => {
  let t: TestApp;
  let links: LinkServer;
  let github: GithubFake;
  let alice: string;
  let database: DataSource;
  let served = 0;

  beforeAll(async () => {
    github = new GithubFake();
    await github.start();
    links = await LinkServer.start();
    t = await createTestApp({ GITHUB_API_URL: `${github.url}/` });
    alice = await t.userToken(['user']);
    database = t.app.get(DataSource);
  });

  afterAll(async () => {
    await t.close();
    await links.close();
    await github.stop();
  });

  const serve = (body: Buffer): string => links.route(`/checked-${++served}.zip`, { kind: 'bytes', body });
  const register = (body: Record<string, unknown>) =>
    t.http.post('/users/current/workflows').set('Authorization', `Bearer ${alice}`).send(body);
  const get = (path: string) => t.http.get(path).set('Authorization', `Bearer ${alice}`);

  /** Registers the archive and answers the issues of the version registered. */
  const issuesOf = async (archive: Buffer): Promise<{ uuid: string; issues: Issue[] }> => {
    const response = await register({ roc_link: serve(archive), version: '1.0' });
    expect(response.status).toBe(201);
    const read = await get(`/workflows/${response.body.uuid}`).expect(200);
    return { uuid: response.body.uuid, issues: read.body.version.issues };
  };

  describe('GET /workflows/issues', () => {
    it('lists every issue type in LifeMonitor shape, to anybody', async () => {
      const response = await t.http.get('/workflows/issues').expect(200);
      const items = response.body.items as Record<string, unknown>[];
      const ids = items.map((item) => item.identifier);
      expect(ids).toEqual(
        expect.arrayContaining([
          'wftest.TestInstanceResource',
          'wftest.TestSuiteMainEntity',
          'testing.MissingTestSuite',
          'testing.TestSuiteWithoutInstances',
          'testing.MissingTestDefinition',
          'testing.UncheckableTestInstance',
          'repo_layout.MissingROCrateWorkflowFile',
          'best_practices.MissingLicense',
          'best_practices.MissingReadme',
        ]),
      );
      expect(new Set(ids).size).toBe(ids.length);
      expect(items.find((item) => item.identifier === 'repo_layout.MissingROCrateWorkflowFile')).toEqual({
        identifier: 'repo_layout.MissingROCrateWorkflowFile',
        name: 'Missing RO-Crate workflow file',
        description: expect.stringContaining('mainEntity'),
        severity: 'error',
        labels: ['metadata'],
        depends_on: [],
      });
      expect(items.find((item) => item.identifier === 'wftest.TestSuiteMainEntity')).toMatchObject({
        name: 'Workflow Testing RO-Crate: TestSuite mainEntity',
        severity: 'warning',
      });
    });

    it('shows the same list as a page, GET /workflows/issues.html, each type an anchor', async () => {
      const page = await t.http.get('/workflows/issues.html?back=https://lifemonitor.eu').expect(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      const types = (await t.http.get('/workflows/issues').expect(200)).body.items as {
        identifier: string;
      }[];
      for (const { identifier } of types) {
        expect(page.text).toContain(`<tr id="${identifier}">`);
      }
      expect(page.text).toContain('<a href="https://lifemonitor.eu">← Back</a>');
    });

    it('refuses a back link that is not an http(s) URL or a path, with the HTML error page', async () => {
      for (const back of ['javascript:alert(1)', '//evil.example/x', 'ftp://x']) {
        const refused = await t.http
          .get(`/workflows/issues.html?back=${encodeURIComponent(back)}`)
          .expect(400);
        expect(refused.headers['content-type']).toMatch(/^text\/html/);
        expect(refused.text).not.toContain(`href="${back}"`);
      }
    });

    it('refuses a bad token as every read does', async () => {
      await t.http.get('/workflows/issues').set('Authorization', 'Bearer nope').expect(401);
    });
  });

  describe('issues on the version', () => {
    it('shows what the checks found in every version reply (2.3, versions, version)', async () => {
      // The test crate of test/support: no README, no LICENSE, no mainEntity on its suite, and it
      // describes neither its CI service as a TestService nor its test engine as a SoftwareApplication.
      const first = await issuesOf(crateZip({ marker: 'versions' }));
      expect(first.issues).toEqual([
        {
          id: 'wftest.TestInstanceRunsOn',
          name: 'Workflow Testing RO-Crate: TestInstance runsOn',
          description:
            `The TestInstance MUST refer to a TestService via runsOn: #inst1 runs on ${TEST_TERMS}GithubService, ` +
            'which the crate does not describe as a TestService.',
          severity: 'error',
        },
        {
          id: 'wftest.TestDefinitionConformsTo',
          name: 'Workflow Testing RO-Crate: TestDefinition conformsTo',
          description: expect.stringContaining('test/planemo.yml conforms to'),
          severity: 'error',
        },
        {
          id: 'wftest.TestSuiteMainEntity',
          name: 'Workflow Testing RO-Crate: TestSuite mainEntity',
          description:
            'The TestSuite SHOULD refer to the tested workflow via mainEntity: #suite1 has no mainEntity.',
          severity: 'warning',
        },
        {
          id: 'best_practices.MissingLicense',
          name: 'Missing LICENSE',
          description: 'The crate has no licence file at its root and its root dataset has no license.',
          severity: 'warning',
        },
        {
          id: 'best_practices.MissingReadme',
          name: 'Missing README',
          description: 'The crate has no README file at its root.',
          severity: 'warning',
        },
      ]);
      const { uuid } = first;
      const second = await register({
        roc_link: serve(
          buildZip([
            { name: 'ro-crate-metadata.json', data: JSON.stringify(crateMetadata({ marker: 'v2' })) },
            { name: 'README.md', data: '# x' },
            { name: 'LICENSE', data: 'MIT' },
          ]),
        ),
        version: '2.0',
        uuid,
      });
      expect(second.status).toBe(201);
      const latest = await get(`/workflows/${uuid}?previous_versions=true`).expect(200);
      expect(latest.body.version.issues.map((issue: Issue) => issue.id)).toEqual([
        'wftest.TestInstanceRunsOn',
        'wftest.TestDefinitionConformsTo',
        'repo_layout.MissingROCrateWorkflowFile',
        'wftest.TestSuiteMainEntity',
      ]);
      expect(latest.body.previous_versions[0].issues).toEqual(first.issues);
      const versions = await get(`/workflows/${uuid}/versions`).expect(200);
      expect(versions.body.versions.map((version: { issues: Issue[] }) => version.issues.length)).toEqual([
        5, 4,
      ]);
      const one = await get(`/workflows/${uuid}/versions/1.0`).expect(200);
      expect(one.body.version.issues).toEqual(first.issues);
    });

    it('finds nothing to say about a complete real crate but what its metadata lacks', async () => {
      const { issues } = await issuesOf(readFileSync(FIXTURE_CRATES.lifemonitorExample));
      expect(issues).toEqual([]);
      const repo = await issuesOf(readFileSync(FIXTURE_CRATES.galaxyWfRepo));
      expect(repo.issues.map((issue) => [issue.id, issue.severity])).toEqual([
        ['wftest.RootDataEntityMentions', 'error'],
        ['testing.MissingTestSuite', 'error'],
      ]);
    });

    it('removes the issues with their version', async () => {
      const { uuid } = await issuesOf(crateZip({ marker: 'deleted' }));
      const count = () =>
        countRows(
          database,
          'SELECT COUNT(*) AS n FROM workflow_version_issues i JOIN workflow_versions v ON v.id = i.version_id JOIN workflows w ON w.id = v.workflow_id WHERE w.uuid = ?',
          [uuid],
        );
      expect(await count()).toBe(5);
      await t.http
        .delete(`/workflows/${uuid}/versions/1.0`)
        .set('Authorization', `Bearer ${alice}`)
        .expect(204);
      expect(await count()).toBe(0);
    });

    it('leaves nothing behind when the registration is refused after the checks', async () => {
      const { uuid } = await issuesOf(crateZip({ marker: 'conflict' }));
      const before = await snapshot(t, database);
      const again = await register({
        roc_link: serve(crateZip({ marker: 'conflict 2' })),
        version: '1.0',
        uuid,
      });
      expect(again.status).toBe(409);
      expect(await snapshot(t, database)).toEqual(before);
    });
  });

  describe("the Workflow Testing RO-Crate profile, on crs4/rocrate-validator's crates", () => {
    it('records no profile issue for the valid crate', async () => {
      const { issues } = await issuesOf(profileCrate('valid'));
      expect(profileIssues(issues)).toEqual([]);
    });

    it.each([
      ['testsuite_not_mentioned', 'wftest.TestSuiteMentionedByRoot'],
      ['testsuite_no_instance_no_def', 'wftest.TestSuiteInstanceOrDefinition'],
      ['testsuite_bad_instance', 'wftest.TestSuiteInstanceOrDefinition'],
      ['testsuite_bad_definition', 'wftest.TestSuiteInstanceOrDefinition'],
      ['testsuite_no_mainentity', 'wftest.TestSuiteMainEntity'],
      ['testsuite_bad_mainentity', 'wftest.TestSuiteMainEntity'],
      ['testinstance_no_resource', 'wftest.TestInstanceResource'],
      ['testinstance_bad_resource', 'wftest.TestInstanceResource'],
      ['testdefinition_bad_type', 'wftest.TestDefinitionType'],
      ['testdefinition_no_engine', 'wftest.TestDefinitionConformsTo'],
      ['testdefinition_bad_conformsto', 'wftest.TestDefinitionConformsTo'],
      ['testdefinition_no_engineversion', 'wftest.TestDefinitionEngineVersion'],
      ['testdefinition_bad_engineversion', 'wftest.TestDefinitionEngineVersion'],
    ])('registers %s with exactly the issue of %s', async (folder, rule) => {
      const { issues } = await issuesOf(profileCrate(`invalid/${folder}`));
      expect(profileIssues(issues)).toEqual([rule]);
    });

    it.each([
      ['testinstance_no_service', /does not say which service it runs on/],
      ['testinstance_bad_runson', /unknown service type/],
      ['testinstance_no_url', /has no url/],
      ['testinstance_bad_url', /url that is not http\(s\)/],
    ])(
      'refuses %s, as 2.1 does an instance of an unknown service or without an http(s) url',
      async (folder, detail) => {
        const before = await snapshot(t, database);
        const response = await register({
          roc_link: serve(profileCrate(`invalid/${folder}`)),
          version: '1.0',
        });
        expect(response.status).toBe(400);
        expect(response.body.detail).toMatch(detail);
        expect(await snapshot(t, database)).toEqual(before);
      },
    );
  });

  describe('a test instance that cannot be checked (the settled rule of 12)', () => {
    /** The instance's row and whether monitoring has a check state for it. */
    const instanceRow = async (uuid: string) => {
      const suites = await get(`/workflows/${uuid}/suites`).expect(200);
      const [instance] = suites.body.items[0].instances;
      const [row] = await database.query<{ unchecked_reason: string | null; states: number | string }[]>(
        `SELECT i.unchecked_reason, (SELECT COUNT(*) FROM test_check_states c WHERE c.instance_id = i.id) AS states
         FROM test_instances i WHERE i.uuid = ?`,
        [instance.uuid],
      );
      return { instance, reason: row.unchecked_reason, states: Number(row.states) };
    };

    it('registers one without a resource with an error issue, and never checks it', async () => {
      const { uuid, issues } = await issuesOf(profileCrate('invalid/testinstance_no_resource'));
      expect(issues).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ id: 'wftest.TestInstanceResource', severity: 'error' }),
          expect.objectContaining({
            id: 'testing.UncheckableTestInstance',
            severity: 'error',
            description: expect.stringMatching(
              /^The test instance #test1_1 is never checked: the crate gives it no resource/,
            ),
          }),
        ]),
      );
      const { instance, reason, states } = await instanceRow(uuid);
      expect(instance).toMatchObject({ roc_instance: '#test1_1', resource: '' });
      expect(reason).toMatch(/no resource/);
      expect(states).toBe(0);
      // Its last check (API.md 11) says why it is never checked, as of its registration.
      const registered = (await get(`/workflows/${uuid}`).expect(200)).body.meta.modified;
      const lastCheck = {
        at: registered,
        ok: false,
        error: 'never checked: the crate gives it no resource (where its tests are on the service)',
      };
      expect(instance.last_check).toEqual(lastCheck);
      expect((await get(`/instances/${instance.uuid}`).expect(200)).body.last_check).toEqual(lastCheck);
      const suite = (await get(`/workflows/${uuid}/suites`).expect(200)).body.items[0].uuid;
      expect((await get(`/suites/${suite}`).expect(200)).body.instances[0].last_check).toEqual(lastCheck);
      expect((await get(`/suites/${suite}/instances`).expect(200)).body.items[0].last_check).toEqual(
        lastCheck,
      );
    });

    it('registers one whose resource its service cannot check (a 400 before), with the service’s reason', async () => {
      const { uuid, issues } = await issuesOf(
        crateZip({ marker: 'unparsable', instances: [{ id: '#ci', resource: 'repos/octo/x' }] }),
      );
      const issue = issues.find((found) => found.id === 'testing.UncheckableTestInstance');
      expect(issue).toMatchObject({ severity: 'error' });
      expect(issue?.description).toMatch(
        /^The test instance #ci is never checked: its resource cannot be checked on github: .*not a GitHub workflow/,
      );
      const { instance, reason, states } = await instanceRow(uuid);
      expect(instance.resource).toBe('repos/octo/x');
      expect(reason).toMatch(/not a GitHub workflow/);
      expect(states).toBe(0);
      expect(instance.last_check).toMatchObject({
        ok: false,
        error: expect.stringMatching(
          /^never checked: its resource cannot be checked on github: .*not a GitHub workflow/,
        ),
      });
    });

    it('checks it from when its owner gives it a resource its service can check', async () => {
      const { uuid } = await issuesOf(
        crateZip({
          marker: 'fixed later',
          instances: [
            { id: '#first', resource: 'repos/octo/x' },
            { id: '#second', resource: 'repos/octo/y' },
          ],
        }),
      );
      const suites = await get(`/workflows/${uuid}/suites`).expect(200);
      const [first, second] = suites.body.items[0].instances as { uuid: string }[];
      const fix = (instance: string, resource: string) =>
        t.http
          .put(`/instances/${instance}`)
          .set('Authorization', `Bearer ${alice}`)
          .send({ resource })
          .expect(200);
      const uncheckable = async () =>
        (await get(`/workflows/${uuid}`).expect(200)).body.version.issues.some(
          (issue: Issue) => issue.id === 'testing.UncheckableTestInstance',
        );
      const state = async (instance: string) => {
        const [row] = await database.query<{ unchecked_reason: string | null; states: number | string }[]>(
          `SELECT i.unchecked_reason, (SELECT COUNT(*) FROM test_check_states c WHERE c.instance_id = i.id) AS states
           FROM test_instances i WHERE i.uuid = ?`,
          [instance],
        );
        return { reason: row.unchecked_reason, states: Number(row.states) };
      };
      const fixed = await fix(first.uuid, 'repos/octo/x/actions/workflows/ci.yml');
      expect(await state(first.uuid)).toEqual({ reason: null, states: 1 });
      // Due for its first check: none made yet.
      expect(fixed.body.last_check).toBeNull();
      expect(await state(second.uuid)).toMatchObject({ states: 0 });
      // The other one is still never checked: the version's issue stays.
      expect(await uncheckable()).toBe(true);
      await fix(second.uuid, 'repos/octo/y/actions/workflows/ci.yml');
      expect(await state(second.uuid)).toEqual({ reason: null, states: 1 });
      expect(await uncheckable()).toBe(false);
    });

    it('still checks the crate’s other instances', async () => {
      const { uuid } = await issuesOf(
        crateZip({
          marker: 'mixed',
          instances: [
            { id: '#bad', resource: 'repos/octo/x' },
            { id: '#good', resource: 'repos/octo/x/actions/workflows/ci.yml' },
          ],
        }),
      );
      const states = await database.query<{ roc_instance: string }[]>(
        `SELECT i.roc_instance FROM test_check_states c JOIN test_instances i ON i.id = c.instance_id
           JOIN test_suites s ON s.id = i.suite_id JOIN workflow_versions v ON v.id = s.version_id
           JOIN workflows w ON w.id = v.workflow_id WHERE w.uuid = ?`,
        [uuid],
      );
      expect(states.map((row) => row.roc_instance)).toEqual(['#good']);
    });
  });

  describe('a repository link', () => {
    it("checks the repository's files", async () => {
      github.addRepository('octo', 'complete');
      github.push('octo', 'complete', {
        branch: 'main',
        files: {
          'ro-crate-metadata.json': JSON.stringify(crateMetadata({ name: 'complete' })),
          'workflow.ga': '{}',
          'README.md': '# complete',
          'LICENSE.txt': 'MIT',
        },
      });
      github.addRepository('octo', 'bare');
      github.push('octo', 'bare', {
        branch: 'main',
        files: { 'ro-crate-metadata.json': JSON.stringify(crateMetadata({ name: 'bare' })) },
      });
      const ids = async (repo: string): Promise<string[]> => {
        const response = await register({ roc_link: `https://github.com/octo/${repo}`, version: '1.0' });
        expect(response.status).toBe(201);
        const read = await get(`/workflows/${response.body.uuid}`).expect(200);
        return read.body.version.issues
          .map((issue: Issue) => issue.id)
          .filter((id: string) => !id.startsWith('wftest.'));
      };
      expect(await ids('complete')).toEqual([]);
      expect(await ids('bare')).toEqual([
        'repo_layout.MissingROCrateWorkflowFile',
        'best_practices.MissingLicense',
        'best_practices.MissingReadme',
      ]);
    });
  });

  describe('a selection of checks (a .lifemonitor.yaml issues section)', () => {
    let user: AuthUser;

    beforeAll(async () => {
      const me = await get('/users/current').expect(200);
      user = {
        ...(me.body as { id: number; username: string }),
        roles: ['user'],
        jti: 'test',
        exp: 0,
        via: 'bearer',
      };
    });

    const registerWith = async (issues: Record<string, unknown>, marker: string): Promise<string[]> => {
      const registered = await t.app.get(WorkflowsService).register(user, {
        rocLink: serve(crateZip({ marker })),
        version: '1.0',
        issues,
      });
      const read = await get(`/workflows/${registered.uuid}`).expect(200);
      return read.body.version.issues.map((issue: Issue) => issue.id);
    };

    it('does not record the types it excludes (by id, by name, in snake case), unless it includes them again', async () => {
      expect(
        await registerWith(
          {
            exclude: [
              'best_practices.MissingLicense',
              'MissingReadme',
              'test_instance_runs_on',
              'wftest.TestSuiteMainEntity',
            ],
          },
          'excluded',
        ),
      ).toEqual(['wftest.TestDefinitionConformsTo']);
      expect(
        await registerWith(
          {
            exclude: ['MissingLicense', 'MissingReadme', 'TestSuiteMainEntity'],
            include: ['missing_readme'],
          },
          'included',
        ),
      ).toEqual([
        'wftest.TestInstanceRunsOn',
        'wftest.TestDefinitionConformsTo',
        'best_practices.MissingReadme',
      ]);
    });

    it('records none when checks are off', async () => {
      expect(await registerWith({ check: false }, 'off')).toEqual([]);
    });
  });

  describe('a check added by another module (docs/extending.md)', () => {
    let extended: TestApp;

    beforeAll(async () => {
      extended = await createTestApp({}, [WorkflowNameCheckModule]);
    });

    afterAll(async () => {
      await extended?.close();
    });

    it('is listed after the built-in types and records its issues, with no other change', async () => {
      const types = await extended.http.get('/workflows/issues').expect(200);
      expect(types.body.items.at(-1)).toMatchObject({
        identifier: 'metadata.MissingWorkflowName',
        severity: 'warning',
      });
      const token = await extended.userToken(['user']);
      const registered = await extended.http
        .post('/users/current/workflows')
        .set('Authorization', `Bearer ${token}`)
        .send({ roc_link: serve(crateZip({ marker: 'extension', mainName: null })), version: '1.0' })
        .expect(201);
      const read = await extended.http
        .get(`/workflows/${registered.body.uuid}`)
        .set('Authorization', `Bearer ${token}`)
        .expect(200);
      expect(read.body.version.issues).toContainEqual({
        id: 'metadata.MissingWorkflowName',
        name: 'Missing workflow name in metadata',
        description: 'The main workflow workflow.ga has no name.',
        severity: 'warning',
      });
    });

    it('is not there without its module', async () => {
      const types = await t.http.get('/workflows/issues').expect(200);
      expect(types.body.items.map((item: { identifier: string }) => item.identifier)).not.toContain(
        'metadata.MissingWorkflowName',
      );
    });
  });
});
