import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenStackFake } from '../fakes/openstack-fake.js';
import { ADMIN, baseTestEnv, createTestDatabase, testDatabase } from '../support/create-test-app.js';
import { writeCloudsFile } from '../support/orchestration.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';

interface JobBody {
  job: { state: string; node?: { id: string; state: number }; error?: string };
}

/** A job outlives the process that took it: the built service is stopped mid-build and started again. */
describe(`asynchronous start across a restart of the service (${testDatabase()})`, () => {
  let nova: OpenStackFake;
  let clouds: ReturnType<typeof writeCloudsFile>;
  let dataDir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    nova = await OpenStackFake.start({ newServerStatus: 'BUILD' });
    clouds = writeCloudsFile(`
clouds:
  default: {type: dummy}
${nova.cloudsFileEntry()}
`);
    dataDir = mkdtempSync(join(tmpdir(), 'jobs-restart-'));
    database = await createTestDatabase(dataDir);
  });

  afterAll(async () => {
    await service?.stop();
    await nova.close();
    await database.drop();
    clouds.remove();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finishes a job started before a restart, and logs no secret', async () => {
    const env = {
      ...baseTestEnv(dataDir, database.url),
      LOG_LEVEL: 'debug',
      CLOUDS_FILE: clouds.path,
      OPENSTACK_PASSWORD: nova.password,
    };
    service = await startServiceProcess(env);
    const login = await fetch(`${service.url}/api/v1/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    const { token } = (await login.json()) as { token: string };
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const started = await fetch(`${service.url}/api/v1/vm/start/ostack`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'survivor', image: '7', size: '2', async: true }),
    });
    expect(started.status).toBe(202);
    const { job } = (await started.json()) as { job: { href: string } };
    const read = async (copy: ServiceProcess): Promise<JobBody['job']> =>
      ((await (await fetch(`${copy.url}${job.href}`, { headers })).json()) as JobBody).job;

    let seen = await read(service);
    for (let i = 0; i < 200 && seen.node === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      seen = await read(service);
    }
    expect(seen).toMatchObject({ state: 'running', node: { state: 3 } });
    const first = service;
    await first.stop();
    const id = seen.node?.id ?? '';
    nova.setServerStatus(id, 'ACTIVE');

    service = await startServiceProcess(env);
    for (let i = 0; i < 600 && seen.state === 'running'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = await read(service);
    }
    expect(seen).toMatchObject({ state: 'done', node: { id, state: 0 } });
    // One server made, whatever the restart: the job was not started again.
    expect(nova.requestsTo('POST', /\/servers$/)).toHaveLength(1);
    for (const log of [first.output(), service.output()]) {
      expect(log).not.toContain(nova.password);
    }
  }, 90_000);
});
