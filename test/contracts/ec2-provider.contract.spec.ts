import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type AppConfig } from '../../src/config/app-config.js';
import { Ec2ProviderFactory } from '../../src/orchestration/providers/ec2.provider.js';
import { Ec2Fake } from '../fakes/ec2-fake.js';
import { cloudProviderContract, cloudProviderMachinesContract } from './cloud-provider.contract.js';

let dataDir: string;
let config: AppConfig;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'ec2-contract-'));
  config = loadConfig({ DATA_DIR: dataDir, JWT_SECRET: 'x'.repeat(40), UPSTREAM_TIMEOUT_SECONDS: '2' });
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

/** A provider over a fresh loopback EC2 fake, and what the contract needs to know of it. */
async function subject() {
  const fake = await Ec2Fake.start();
  const provider = new Ec2ProviderFactory(config).create({
    name: 'aws',
    type: 'ec2',
    options: fake.cloudOptions(),
  });
  return {
    provider,
    image: 'ami-0fedcba9876540003',
    size: 't3.micro',
    listsTerminated: true,
    dispose: () => fake.close(),
  };
}

cloudProviderContract('ec2 (loopback EC2 Query API fake, paged lists)', subject);

cloudProviderMachinesContract('ec2 (key pairs, Elastic IPs)', async () => {
  return {
    ...(await subject()),
    securityGroup: 'sg-0a1b2c3d4e5f60002',
    // EC2's fingerprints of imported keys: MD5 for RSA, base64 SHA-256 for ed25519.
    fingerprints: { rsa: /^([0-9a-f]{2}:){15}[0-9a-f]{2}$/, ed25519: /^[A-Za-z0-9+/]{43}=$/ },
    addresses: true,
  };
});
