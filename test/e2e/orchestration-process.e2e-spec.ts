import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ec2Fake } from '../fakes/ec2-fake.js';
import { OpenStackFake } from '../fakes/openstack-fake.js';

const WRONG_EC2_SECRET = 'wrong/Ec2+Secret/never/logged/0123456789';
import { baseTestEnv, createTestDatabase, testDatabase } from '../support/create-test-app.js';
import { writeCloudsFile } from '../support/orchestration.js';
import { startServiceProcess } from '../support/service-process.js';

/** Area C as the built service (`dist/`, built by `npm test` first): what reaches its log lines. */
describe(`area C in the built service as a process (${testDatabase()})`, () => {
  let fake: OpenStackFake;
  let ec2: Ec2Fake;
  let clouds: ReturnType<typeof writeCloudsFile>;
  let dataDir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let env: Record<string, string>;

  beforeAll(async () => {
    fake = await OpenStackFake.start();
    ec2 = await Ec2Fake.start();
    clouds = writeCloudsFile(`
clouds:
  default: {type: dummy}
${fake.cloudsFileEntry()}
  aws:
    type: ec2
    region: us-east-1
    access_key_id: ${ec2.accessKeyId}
    secret_access_key: \${EC2_SECRET}
    endpoint: ${ec2.url}
  aws_wrong:
    type: ec2
    region: us-east-1
    access_key_id: AKIAWRONG0EXAMPLE999
    secret_access_key: \${EC2_WRONG_SECRET}
    endpoint: ${ec2.url}
`);
    dataDir = mkdtempSync(join(tmpdir(), 'orchestration-process-'));
    database = await createTestDatabase(dataDir);
    env = {
      ...baseTestEnv(dataDir, database.url),
      NODE_ENV: 'production',
      // The most talkative level: nothing at any level may carry a secret.
      LOG_LEVEL: 'trace',
      CLOUDS_FILE: clouds.path,
      OPENSTACK_PASSWORD: fake.password,
      EC2_SECRET: ec2.secretAccessKey,
      EC2_WRONG_SECRET: WRONG_EC2_SECRET,
      UPSTREAM_TIMEOUT_SECONDS: '1',
    };
  });

  afterAll(async () => {
    await fake.close();
    await ec2.close();
    clouds.remove();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('logs neither an auth_token from the query or body nor the cloud password when the cloud fails', async () => {
    const service = await startServiceProcess(env);
    let token: string | undefined;
    try {
      const login = await fetch(`${service.url}/api/v1/auth`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: env.ADMIN_USERNAME, password: env.ADMIN_PASSWORD }),
      });
      token = ((await login.json()) as { token: string }).token;
      const json = (method: string, path: string, body: object): Promise<Response> =>
        fetch(`${service.url}${path}`, {
          method,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });

      expect((await fetch(`${service.url}/api/v1/nodes?auth_token=${token}`)).status).toBe(200);
      expect((await fetch(`${service.url}/api/v1/images.json?x=1&auth_token=${token}`)).status).toBe(200);
      const started = await json('POST', '/api/v1/vm/start', {
        name: 'n',
        image: '1',
        size: '1',
        auth_token: token,
      });
      expect(started.status).toBe(200);
      const { nodes } = (await started.json()) as { nodes: { id: string } };
      expect((await json('PUT', '/api/v1/vm/stop', { node: nodes.id, auth_token: token })).status).toBe(200);
      expect((await fetch(`${service.url}/api/v1/nodes/ostack?auth_token=${token}`)).status).toBe(200);

      const failures: [() => void, number][] = [
        [() => fake.fail('down', 'compute'), 502],
        [() => fake.fail('hang', 'compute'), 503],
        [() => fake.fail('server_error', 'identity'), 502],
      ];
      for (const [breakIt, status] of failures) {
        fake.expireTokens();
        breakIt();
        const response = await fetch(`${service.url}/api/v1/nodes/ostack`, {
          headers: { 'x-auth-token': token },
        });
        expect(response.status).toBe(status);
        expect(await response.text()).not.toContain(fake.password);
        fake.recover();
      }

      // EC2: wrong credentials are a 502 naming neither secret; throttling beyond the SDK's retries a 503.
      const auth = { 'x-auth-token': token };
      expect((await fetch(`${service.url}/api/v1/nodes/aws`, { headers: auth })).status).toBe(200);
      const refused = await fetch(`${service.url}/api/v1/nodes/aws_wrong`, { headers: auth });
      expect(refused.status).toBe(502);
      const refusedText = await refused.text();
      expect(refusedText).toContain('AuthFailure');
      expect(refusedText).not.toContain(WRONG_EC2_SECRET);
      ec2.throttleNext = 1000;
      const throttled = await fetch(`${service.url}/api/v1/sizes/aws`, { headers: auth });
      ec2.throttleNext = 0;
      expect(throttled.status).toBe(503);
      expect(await throttled.text()).not.toContain(ec2.secretAccessKey);
    } finally {
      expect(await service.stop('SIGTERM')).toBe(0);
    }

    const output = service.output();
    if (token === undefined) {
      throw new Error('no token');
    }
    expect(output).not.toContain(token);
    expect(output).not.toContain(token.split('.')[2]);
    expect(output).not.toContain(fake.password);
    expect(output).not.toContain(ec2.secretAccessKey);
    expect(output).not.toContain(WRONG_EC2_SECRET);
    // Keystone tokens of the fake start so; none may be logged either.
    expect(output).not.toContain('gAAAAA');
    // The requests were logged, with the query member redacted.
    expect(output).toContain('auth_token=[Redacted]');
    expect(output).toMatch(/"statusCode":503/);
    expect(output).toMatch(/"statusCode":502/);
  });

  it('stops with exit code 1 and a line naming CLOUDS_FILE and the cloud for an unknown type', async () => {
    const bad = writeCloudsFile('clouds:\n  default: {type: vsphere}\n');
    try {
      const service = await startServiceProcess({ ...env, CLOUDS_FILE: bad.path }, false);
      expect(await service.exited).toBe(1);
      // One line, no stack: the same as any other bad setting.
      expect(service.output()).toBe(
        "Invalid setting CLOUDS_FILE: cloud 'default' has unknown type 'vsphere' (known: dummy, openstack, ec2)\n",
      );
    } finally {
      bad.remove();
    }
  });
});
