import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/config/config-error.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { DroneCiModule } from '../extensions/drone-ci.js';
import { DroneFake } from '../fakes/drone-fake.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, startApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { sharedDatabase } from '../support/orchestration.js';
import { crateZip, TEST_TERMS } from '../support/registry.js';

const TOKEN = 'drone-token-from-the-settings';

// docs/extending.md, "A new CI service": a client class and its registration, in a test module
// beside AppModule; no file of src/ knows the type, its crate term or its settings.
describe(`extension: a CI service registered by a test module (${testDatabase()})`, () => {
  let drone: DroneFake;
  let links: LinkServer;
  let dir: string;
  let t: TestApp;
  let auth: { Authorization: string };

  beforeAll(async () => {
    drone = new DroneFake();
    await drone.start();
    drone.requiredAuthorization = `Bearer ${TOKEN}`;
    links = await LinkServer.start();
    dir = mkdtempSync(join(tmpdir(), 'extension-ci-'));
    const file = join(dir, 'services.yaml');
    writeFileSync(file, `services:\n  - {type: drone, url: "${drone.url}", token: "${TOKEN}"}\n`);
    // The fake's builds are dated 2024 (fixed, so that replies can be compared whole): not too old here.
    t = await createTestApp({ TESTING_SERVICES_FILE: file, STALE_AFTER_DAYS: '3650' }, [DroneCiModule]);
    auth = { Authorization: `Bearer ${await t.login()}` };
  });

  afterAll(async () => {
    await t.close();
    await links.close();
    await drone.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A crate whose one test instance runs on the Drone fake, served by the link server. */
  function droneCrate(key: string): string {
    return links.route(`/${key}.zip`, {
      kind: 'bytes',
      body: crateZip({
        marker: key,
        instances: [
          {
            id: '#drone',
            name: 'on drone',
            runsOn: `${TEST_TERMS}DroneService`,
            url: drone.url,
            resource: DroneFake.resource(`octo/${key}`),
          },
        ],
      }),
    });
  }

  it('registers a crate naming it, checks it with the settings of TESTING_SERVICES_FILE, and reports its builds', async () => {
    const key = `repo-${randomUUID().slice(0, 8)}`;
    drone.setRepo(`octo/${key}`, [
      { number: 41, status: 'failure', started: 1_704_099_600, finished: 1_704_099_660 },
      { number: 42, status: 'success', started: 1_704_103_200, finished: 1_704_103_290 },
    ]);
    const created = await t.http
      .post('/users/current/workflows')
      .set(auth)
      .send({ roc_link: droneCrate(key), version: '1' });
    expect(created.status).toBe(201);
    const { uuid } = created.body as { uuid: string };

    await t.app.get(RefreshScheduler).tick(new Date(Date.now() + 1000));

    const status = await t.http.get(`/workflows/${uuid}/status`).set(auth);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ aggregate_test_status: 'all_passing', stale: false });
    const [latest] = (status.body as { latest_builds: unknown[] }).latest_builds;
    expect(latest).toMatchObject({
      build_id: '42',
      status: 'passed',
      timestamp: '1704103200',
      duration: 90,
      links: { origin: `${drone.url}/octo/${key}/42` },
      instance: {
        name: 'on drone',
        resource: `repos/octo/${key}`,
        service: { type: 'drone', url: drone.url },
      },
    });
    expect(drone.requests.at(-1)?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("asks its class for its links, its builds' start and its logs: the status page links Drone's pages", async () => {
    const key = `repo-${randomUUID().slice(0, 8)}`;
    drone.setRepo(`octo/${key}`, [
      { number: 7, status: 'success', started: 1_704_103_200, finished: 1_704_103_290 },
    ]);
    const created = await t.http
      .post('/users/current/workflows')
      .set(auth)
      .send({ roc_link: droneCrate(key), version: '1' });
    expect(created.status).toBe(201);
    const { uuid } = created.body as { uuid: string };
    await t.app.get(RefreshScheduler).tick(new Date(Date.now() + 1000));

    const page = await t.http.get(`/status/${uuid}`).set(auth);
    expect(page.status).toBe(200);
    // The resource's page is the class's to tell (docs/extending.md): Drone's repository page.
    expect(page.text).toContain(`<a href="${drone.url}/octo/${key}">drone: repos/octo/${key}</a>`);
    expect(page.text).toContain(`<a href="${drone.url}/octo/${key}/7">Build 7</a>`);
    const suites = await t.http.get(`/workflows/${uuid}/suites`).set(auth).expect(200);
    const instance = (suites.body as { items: { instances: { uuid: string }[] }[] }).items[0].instances[0]
      .uuid;
    expect(page.text).toContain(`href="/instances/${instance}/builds/7/logs"`);
    expect(page.text).toContain(`action="/status/${uuid}/instances/${instance}/builds"`);

    const started = await t.http.post(`/instances/${instance}/builds`).set(auth);
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ instance, how: 'build' });
    expect(drone.triggers.at(-1)).toMatchObject({ slug: `octo/${key}` });
    // Drone keeps its logs as JSON per step: its client serves none, and says so.
    const log = await t.http.get(`/instances/${instance}/builds/7/logs`).set(auth);
    expect(log.status).toBe(409);
    expect(log.body).toMatchObject({
      detail: expect.stringContaining('the drone service cannot serve build logs'),
    });
  });

  it('lists it in the enum of a test service type in the OpenAPI document', async () => {
    const document = await t.http.get('/docs-json');
    const schema = (
      document.body as {
        components: { schemas: Record<string, { properties: Record<string, { enum?: string[] }> }> };
      }
    ).components.schemas.TestServiceDto;
    expect(schema.properties.type.enum).toEqual([
      'github',
      'travis',
      'jenkins',
      'gitlab',
      'managed',
      'drone',
    ]);
  });

  it('is unknown without the module: a crate naming it is refused, and the settings naming it stop the start-up', async () => {
    const plain = await createTestApp();
    try {
      const refused = await plain.http
        .post('/users/current/workflows')
        .set({ Authorization: `Bearer ${await plain.login()}` })
        .send({ roc_link: droneCrate(`repo-${randomUUID().slice(0, 8)}`), version: '1' });
      expect(refused.status).toBe(400);
      expect((refused.body as { detail: string }).detail).toBe(
        `a test instance uses an unknown service type: ${TEST_TERMS}DroneService (instance #drone; known: github, travis, jenkins, gitlab, managed)`,
      );
    } finally {
      await plain.close();
    }
    const shared = await sharedDatabase({ TESTING_SERVICES_FILE: join(dir, 'services.yaml') });
    try {
      const starting = startApp(shared.env);
      await expect(starting).rejects.toBeInstanceOf(ConfigError);
      await expect(starting).rejects.toThrow(
        'Invalid setting TESTING_SERVICES_FILE: services[0].type must be one of github, travis, jenkins, gitlab',
      );
    } finally {
      await shared.drop();
    }
  });

  it('stops the start-up on a setting it does not take', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, `services:\n  - {type: drone, url: "${drone.url}", username: bot}\n`);
    const shared = await sharedDatabase({ TESTING_SERVICES_FILE: file });
    try {
      await expect(startApp(shared.env, [DroneCiModule])).rejects.toThrow(
        'Invalid setting TESTING_SERVICES_FILE: services[0].username is not a setting of drone (it takes token)',
      );
    } finally {
      await shared.drop();
    }
  });
});
