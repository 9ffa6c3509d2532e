import { Ec2Fake } from '../fakes/ec2-fake.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { expectEnvelope, writeCloudsFile } from '../support/orchestration.js';

interface Node {
  id: string;
  name: string;
  state: number;
  cloud_type: string;
  provider: string;
  public_ips: string[];
  private_ips: string[];
  extra: Record<string, unknown>;
}

describe(`area C: an EC2 cloud through the HTTP API (${testDatabase()})`, () => {
  let ec2: Ec2Fake;
  let clouds: ReturnType<typeof writeCloudsFile>;
  let t: TestApp;
  let agent: string;
  const wrongSecret = 'wrong/Secret+Key/for/aws_wrong/0000';

  beforeAll(async () => {
    ec2 = await Ec2Fake.start();
    clouds = writeCloudsFile(`
clouds:
  default: {type: dummy}
  aws:
    type: ec2
    region: us-east-1
    access_key_id: ${ec2.accessKeyId}
    secret_access_key: \${EC2_SECRET}
    endpoint: ${ec2.url}
    images: [ami-0fedcba9876540003]
  aws_wrong:
    type: ec2
    region: us-east-1
    access_key_id: AKIAWRONG0EXAMPLE999
    secret_access_key: \${EC2_WRONG_SECRET}
    endpoint: ${ec2.url}
  aws_wrong_secret:
    type: ec2
    region: us-east-1
    access_key_id: ${ec2.accessKeyId}
    secret_access_key: \${EC2_WRONG_SECRET}
    endpoint: ${ec2.url}
`);
    t = await createTestApp({
      CLOUDS_FILE: clouds.path,
      EC2_SECRET: ec2.secretAccessKey,
      EC2_WRONG_SECRET: wrongSecret,
      UPSTREAM_TIMEOUT_SECONDS: '2',
    });
    agent = await t.userToken(['agent']);
  });

  afterEach(() => {
    ec2.throttleNext = 0;
  });

  afterAll(async () => {
    await t.close();
    await ec2.close();
    clouds.remove();
  });

  const get = (path: string) => t.http.get(path).set('X-Auth-Token', agent);
  const post = (path: string, body: object) => t.http.post(path).set('X-Auth-Token', agent).send(body);
  const put = (path: string, body: object) => t.http.put(path).set('X-Auth-Token', agent).send(body);

  it('lists the clouds with their types', async () => {
    const response = await get('/api/v1/clouds');
    expect(response.body).toMatchObject({ clouds: expect.arrayContaining([{ name: 'aws', type: 'ec2' }]) });
  });

  it('lists the account’s images and the configured ones, signed with SigV4', async () => {
    const response = await get('/api/v1/images/aws');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      status: 'ok',
      images: [
        { id: 'ami-0a1b2c3d4e5f60001', name: 'lab-ubuntu-24.04', cloud_type: 'ec2', provider: 'aws' },
        { id: 'ami-0a1b2c3d4e5f60002', name: 'lab-debian-12', cloud_type: 'ec2', provider: 'aws' },
        { id: 'ami-0fedcba9876540003', name: 'amazon/al2023-ami-2023', cloud_type: 'ec2', provider: 'aws' },
      ],
    });
    const [own, named] = ec2.actions('DescribeImages').slice(-2);
    expect(own.params.get('Owner.1')).toBe('self');
    expect(named.params.get('ImageId.1')).toBe('ami-0fedcba9876540003');
    expect(own.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAFAKE0EXAMPLE0001\/\d{8}\/us-east-1\/ec2\//,
    );
  });

  it('lists every instance type over several pages: vCPUs, MiB, and disk 0 when EBS-only', async () => {
    const before = ec2.actions('DescribeInstanceTypes').length;
    const response = await get('/api/v1/flavors/aws.json');
    expect((response.body as { flavors: unknown[] }).flavors).toEqual([
      { id: 't3.micro', name: 't3.micro', cpu: 2, ram: 1024, disk: 0, cloud_type: 'ec2', provider: 'aws' },
      { id: 't3.large', name: 't3.large', cpu: 2, ram: 8192, disk: 0, cloud_type: 'ec2', provider: 'aws' },
      { id: 'm5d.large', name: 'm5d.large', cpu: 2, ram: 8192, disk: 75, cloud_type: 'ec2', provider: 'aws' },
      { id: 'c5.xlarge', name: 'c5.xlarge', cpu: 4, ram: 8192, disk: 0, cloud_type: 'ec2', provider: 'aws' },
      {
        id: 'r5.2xlarge',
        name: 'r5.2xlarge',
        cpu: 8,
        ram: 65536,
        disk: 0,
        cloud_type: 'ec2',
        provider: 'aws',
      },
    ]);
    const pages = ec2.actions('DescribeInstanceTypes').slice(before);
    expect(pages.map((page) => page.params.has('NextToken'))).toEqual([false, true, true]);
  });

  it('starts, powers off and on, reboots and stops an instance, states in libcloud’s numbering', async () => {
    const started = await post('/api/v1/vm/start/aws', {
      name: 'web-1',
      image: 'ami-0a1b2c3d4e5f60001',
      size: 't3.micro',
      metadata: { team: 'lab' },
    });
    expect(started.status).toBe(200);
    const node = (started.body as { nodes: Node }).nodes;
    expect(node).toMatchObject({ name: 'web-1', state: 3, cloud_type: 'ec2', provider: 'aws' });
    expect(node.id).toMatch(/^i-[0-9a-f]{17}$/);
    const [run] = ec2.actions('RunInstances').slice(-1);
    expect(Object.fromEntries(run.params)).toMatchObject({
      ImageId: 'ami-0a1b2c3d4e5f60001',
      InstanceType: 't3.micro',
      MinCount: '1',
      MaxCount: '1',
      'TagSpecification.1.Tag.1.Key': 'Name',
      'TagSpecification.1.Tag.1.Value': 'web-1',
      'TagSpecification.1.Tag.2.Key': 'team',
    });

    const listed = ((await get('/api/v1/nodes/aws')).body as { nodes: Node[] }).nodes.find(
      (n) => n.id === node.id,
    );
    expect(listed).toMatchObject({ state: 0, private_ips: [expect.stringMatching(/^172\.31\./)] });
    expect(listed?.public_ips).toHaveLength(1);
    expect(listed?.extra).toMatchObject({
      instance_type: 't3.micro',
      image_id: 'ami-0a1b2c3d4e5f60001',
      status: 'running',
    });

    expect((await put('/api/v1/vm/poweroff/aws', { node: node.id })).body).toMatchObject({
      nodes: { state: 5 },
    });
    expectEnvelope(await put('/api/v1/vm/reboot/aws', { hostname: 'web-1' }), 409);
    expect((await put('/api/v1/vm/poweron/aws', { node: node.id })).body).toMatchObject({
      nodes: { state: 0 },
    });
    expect((await put('/api/v1/vm/reboot/aws', { node: node.id })).body).toMatchObject({
      nodes: { state: 0 },
    });
    expect(ec2.actions('RebootInstances')).toHaveLength(1);

    expect((await put('/api/v1/vm/stop/aws', { node: node.id })).body).toEqual({
      status: 'ok',
      result: `Node ${node.id} deleted`,
    });
    expect(ec2.actions('TerminateInstances')).toHaveLength(1);
    // EC2 keeps listing a terminated instance for a while: a node in state 2 (API.md 8).
    expect(
      ((await get('/api/v1/nodes/aws')).body as { nodes: Node[] }).nodes.filter((n) => n.id === node.id),
    ).toEqual([expect.objectContaining({ id: node.id, state: 2 })]);
    expectEnvelope(
      await put('/api/v1/vm/poweron/aws', { node: node.id }),
      409,
      `Node ${node.id} of cloud 'aws' is terminated: poweron is not possible`,
    );
    expectEnvelope(await put('/api/v1/vm/stop/aws', { node: node.id }), 404);
  });

  it('answers 404 for malformed and unknown instance ids (InvalidInstanceID.*)', async () => {
    expectEnvelope(await put('/api/v1/vm/stop/aws', { node: 'i-0123456789abcdef0' }), 404);
    expectEnvelope(await put('/api/v1/vm/reboot/aws', { node: 'not-an-instance' }), 404);
  });

  it('answers 400 for an unknown image or size, running nothing', async () => {
    const runs = ec2.actions('RunInstances').length;
    expectEnvelope(
      await post('/api/v1/vm/start/aws', { name: 'x', image: 'ami-00000000000000000', size: 't3.micro' }),
      400,
      "Image 'ami-00000000000000000' does not exist in cloud 'aws'",
    );
    expectEnvelope(
      await post('/api/v1/vm/start/aws', { name: 'x', image: 'ami-0a1b2c3d4e5f60001', size: 'z9.huge' }),
      400,
    );
    expect(ec2.actions('RunInstances')).toHaveLength(runs);
  });

  it('answers 502 without the secret when EC2 refuses the credentials', async () => {
    const response = await get('/api/v1/nodes/aws_wrong');
    expectEnvelope(
      response,
      502,
      "Cloud 'aws_wrong': listing instances failed: EC2 refused the credentials of access key AKIAWRONG0EXAMPLE999 (AuthFailure)",
    );
    expect(JSON.stringify(response.body)).not.toContain(wrongSecret);
  });

  it('answers 502 without the secret when the access key is right but the secret is not (bad signature)', async () => {
    const signedBefore = ec2.actions('DescribeInstances').length;
    const response = await get('/api/v1/nodes/aws_wrong_secret');
    expectEnvelope(
      response,
      502,
      `Cloud 'aws_wrong_secret': listing instances failed: EC2 refused the credentials of access key ${ec2.accessKeyId} (AuthFailure)`,
    );
    expect(JSON.stringify(response.body)).not.toContain(wrongSecret);
    expect(JSON.stringify(response.body)).not.toContain(ec2.secretAccessKey);
    // The request did reach EC2, signed: it was the signature that failed.
    expect(ec2.actions('DescribeInstances').length).toBeGreaterThan(signedBefore);
  });

  it('rides out throttling with the SDK’s retries, and answers 503 when it lasts longer', async () => {
    const before = ec2.actions('DescribeInstances').length;
    ec2.throttleNext = 2;
    expect((await get('/api/v1/nodes/aws')).status).toBe(200);
    // Two throttled attempts, then the one that succeeded.
    expect(ec2.actions('DescribeInstances').length - before).toBe(3);

    ec2.throttleNext = 1000;
    const response = await get('/api/v1/nodes/aws');
    expectEnvelope(
      response,
      503,
      /^Cloud 'aws': listing instances failed: EC2 is throttling requests \(RequestLimitExceeded\)/,
    );
    expect(JSON.stringify(response.body)).not.toContain(ec2.secretAccessKey);
  });
});
