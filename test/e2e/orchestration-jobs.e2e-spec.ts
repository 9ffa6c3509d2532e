import { OpenStackFake } from '../fakes/openstack-fake.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { expectEnvelope, writeCloudsFile } from '../support/orchestration.js';

interface JobBody {
  status: string;
  job: { id: string; state: string; href?: string; node?: { id: string; state: number }; error?: string };
}

describe(`area C: asynchronous start with jobs (${testDatabase()})`, () => {
  let nova: OpenStackFake;
  let clouds: ReturnType<typeof writeCloudsFile>;
  let t: TestApp;
  let agent: string;

  beforeAll(async () => {
    nova = await OpenStackFake.start({ newServerStatus: 'BUILD' });
    clouds = writeCloudsFile(`
clouds:
  default: {type: dummy}
${nova.cloudsFileEntry()}
`);
    t = await createTestApp({ CLOUDS_FILE: clouds.path, OPENSTACK_PASSWORD: nova.password });
    agent = await t.userToken(['agent']);
  });

  afterAll(async () => {
    await t.close();
    await nova.close();
    clouds.remove();
  });

  const start = (cloud: string, body: object, token = agent) =>
    t.http.post(`/api/v1/vm/start/${cloud}`).set('X-Auth-Token', token).send(body);
  const job = (href: string, token = agent) => t.http.get(href).set('X-Auth-Token', token);

  /** Polls the job (the poller runs in the app every second) until it leaves pending and running. */
  async function finished(href: string): Promise<JobBody['job']> {
    for (let i = 0; i < 200; i++) {
      const body = (await job(href)).body as JobBody;
      if (body.job.state === 'done' || body.job.state === 'failed') {
        return body.job;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`job ${href} did not finish`);
  }

  it('answers 202 with a pending job, which is done once the dummy node runs', async () => {
    const response = await start('default', { name: 'async-1', image: '1', size: '2', async: true });
    expect(response.status).toBe(202);
    const body = response.body as JobBody;
    expect(body).toEqual({
      status: 'ok',
      job: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        state: 'pending',
        href: `/api/v1/jobs/${body.job.id}`,
      },
    });
    const done = await finished(body.job.href ?? '');
    expect(done).toEqual({
      id: body.job.id,
      state: 'done',
      node: expect.objectContaining({ name: 'async-1', state: 0, cloud_type: 'dummy', provider: 'default' }),
    });
    const nodes = (await t.http.get('/api/v1/nodes').set('X-Auth-Token', agent)).body as {
      nodes: { id: string }[];
    };
    expect(nodes.nodes.map((node) => node.id)).toContain(done.node?.id);
  });

  it('starts synchronously with async false, as without it', async () => {
    const response = await start('default', { name: 'sync-1', image: '1', size: '1', async: false });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'ok', nodes: { name: 'sync-1' } });
  });

  it.each([['true'], [1], ['yes'], [null]])('answers 400 for async %j, and starts nothing', async (value) => {
    const before = (await t.http.get('/api/v1/nodes').set('X-Auth-Token', agent)).body as {
      nodes: unknown[];
    };
    expectEnvelope(
      await start('default', { name: 'x', image: '1', size: '1', async: value }),
      400,
      'async must be true or false',
    );
    const after = (await t.http.get('/api/v1/nodes').set('X-Auth-Token', agent)).body as { nodes: unknown[] };
    expect(after.nodes).toHaveLength(before.nodes.length);
  });

  it('answers 400 at once for an unknown image or size, without a job', async () => {
    expectEnvelope(
      await start('default', { name: 'x', image: '42', size: '1', async: true }),
      400,
      "Image '42' does not exist in cloud 'default'",
    );
    expectEnvelope(await start('nope', { name: 'x', image: '1', size: '1', async: true }), 500);
  });

  it('shows a job to its owner and to admins only; 404 for anyone else and for unknown ids', async () => {
    const body = (await start('default', { name: 'mine', image: '1', size: '1', async: true }))
      .body as JobBody;
    const href = body.job.href ?? '';
    const other = await t.userToken(['agent']);
    expectEnvelope(await job(href, other), 404, `Job ${body.job.id} not found`);
    expect((await job(href, await t.login())).status).toBe(200);
    expectEnvelope(await job('/api/v1/jobs/00000000-0000-4000-8000-000000000000'), 404);
    expectEnvelope(await job('/api/v1/jobs/not-a-job'), 404, 'Job not-a-job not found');
    expectEnvelope(await job(href, await t.userToken(['user'])), 403);
  });

  it('follows an OpenStack server from BUILD to ACTIVE, polling with back-off', async () => {
    const body = (await start('ostack', { name: 'async-nova', image: '7', size: '2', async: true }))
      .body as JobBody;
    const href = body.job.href ?? '';
    let running: JobBody['job'] | undefined;
    for (let i = 0; i < 100 && running?.node === undefined; i++) {
      running = ((await job(href)).body as JobBody).job;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(running).toMatchObject({ state: 'running', node: { name: 'async-nova', state: 3 } });
    const id = running?.node?.id ?? '';
    expect(
      nova.requestsTo('POST', /\/servers$/).filter((r) => JSON.stringify(r.body).includes('async-nova')),
    ).toHaveLength(1);
    nova.setServerStatus(id, 'ACTIVE');
    const done = await finished(href);
    expect(done).toMatchObject({ state: 'done', node: { id, state: 0, cloud_type: 'openstack' } });
    const polls = nova.requestsTo('GET', `/servers/${id}`).length;
    // Polls stop once the job is done.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(nova.requestsTo('GET', `/servers/${id}`)).toHaveLength(polls);
  });

  it('fails the job when the server goes into ERROR', async () => {
    const body = (await start('ostack', { name: 'async-error', image: '7', size: '2', async: true }))
      .body as JobBody;
    let id: string | undefined;
    for (let i = 0; i < 100 && id === undefined; i++) {
      id = ((await job(body.job.href ?? '')).body as JobBody).job.node?.id;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    nova.setServerStatus(id ?? '', 'ERROR');
    const failed = await finished(body.job.href ?? '');
    expect(failed).toMatchObject({
      state: 'failed',
      node: { id, state: 7 },
      error: `Node ${id} of cloud 'ostack' went into state error`,
    });
    expect(JSON.stringify(failed)).not.toContain(nova.password);
  });
});
